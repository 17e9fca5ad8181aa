#pragma once
// The options of cascade-agent's local interfaces for applications in any
// language: the HTTP API (native JSON and the Consul-compatible subset) and
// DNS. Parsed and checked in agent/agent_options.cpp.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/net_address.hpp"
#include "cascade/metrics/endpoint_options.hpp"

namespace cascade::agent {

struct HttpApiOptions {
  std::optional<SocketAddress> listen;  // nullopt: no HTTP API
  // Peers allowed besides loopback ones. A listen address other hosts can
  // reach needs at least one range here and a token file.
  std::vector<Cidr> allow;
  std::string token_file;               // "NAME TOKEN" lines; empty: no token asked
  std::size_t max_connections = 16384;  // open connections, parked watches included
  std::size_t max_body_bytes = 64 * 1024;
  unsigned threads = 2;  // epoll threads serving requests (parked watches hold none)
};

using MetricsOptions = metrics::EndpointOptions;  // --metrics, --metrics-allow

struct DnsOptions {
  std::optional<SocketAddress> listen;  // nullopt: no DNS interface (UDP and TCP on one port)
  std::uint32_t ttl_seconds = 1;        // of every answer: short, the lists change
  std::string domain = "cascade";       // NAME.service.DOMAIN
};

}  // namespace cascade::agent
