#pragma once
// Where an HTTP API listens and who may use it: `--http HOST:PORT`,
// `--http-allow CIDR` (repeatable) and `--http-token-file FILE`, the same
// flags with the same rules on cascade-agent (its API for applications) and
// cascade-hub (its admin API).

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/net_address.hpp"
#include "cascade/http/server.hpp"

namespace cascade::http {

struct ApiOptions {
  std::optional<SocketAddress> listen{};  // nullopt: no HTTP API
  // Peers allowed besides loopback ones. A listen address other hosts can
  // reach needs at least one range here and a token file.
  std::vector<Cidr> allow{};
  std::string token_file{};             // "NAME TOKEN" lines; empty: no tokens
  std::size_t max_connections = 16384;  // open connections, parked requests included
  std::size_t max_body_bytes = 64 * 1024;
  unsigned threads = 2;  // epoll threads serving requests (a parked request holds none)
};

// Reads `listen` (--http) and `allow` (--http-allow) into `out`, whose token
// file and limits are set already, and checks them together: an address
// other hosts can reach needs ranges and tokens.
// @return "" or the error for the operator.
std::string fill_api_options(const std::string& listen, const std::vector<std::string>& allow,
                             ApiOptions& out);

// The server's configuration for `options` (which must listen), without
// tokens: the API decides which requests need one (http/request_tokens.hpp).
ServerConfig server_config(const ApiOptions& options, std::string name);

}  // namespace cascade::http
