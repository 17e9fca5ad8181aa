#include "cascade/http/api_options.hpp"

namespace cascade::http {

std::string fill_api_options(const std::string& listen, const std::vector<std::string>& allow,
                             ApiOptions& out) {
  if (auto error = parse_listen_flag("--http", listen, out.listen); !error.empty()) return error;
  if (auto error = parse_range_flags("--http-allow", allow, out.allow); !error.empty())
    return error;
  if (!out.listen) {
    if (!out.allow.empty() || !out.token_file.empty())
      return "--http-allow and --http-token-file need --http";
    return {};
  }
  // An API that changes state is not for every host that can reach this
  // one: other hosts need a range and a token.
  if (!out.listen->is_loopback() && (out.allow.empty() || out.token_file.empty()))
    return "--http " + listen +
           " is reachable from other hosts: give --http-allow CIDR (who may connect) and "
           "--http-token-file FILE (the bearer tokens they must send), or listen on 127.0.0.1";
  if (out.max_connections < 16 || out.max_connections > 1'000'000)
    return "--http-max-connections must be between 16 and 1000000";
  if (out.threads < 1 || out.threads > 64) return "--http-threads must be between 1 and 64";
  if (out.max_body_bytes < 1024 || out.max_body_bytes > 16 * 1024 * 1024)
    return "--http-max-body-bytes must be between 1024 and 16777216";
  return {};
}

ServerConfig server_config(const ApiOptions& options, std::string name) {
  ServerConfig config;
  config.listen = *options.listen;
  config.allow = options.allow;
  config.max_connections = options.max_connections;
  config.max_body_bytes = options.max_body_bytes;
  config.threads = options.threads;
  config.name = std::move(name);
  return config;
}

}  // namespace cascade::http
