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
#include "cascade/http/api_options.hpp"
#include "cascade/metrics/endpoint_options.hpp"

namespace cascade::agent {

// --http, --http-allow, --http-token-file and the limits (http/api_options.hpp).
using HttpApiOptions = http::ApiOptions;

using MetricsOptions = metrics::EndpointOptions;  // --metrics, --metrics-allow

struct DnsOptions {
  std::optional<SocketAddress> listen;  // nullopt: no DNS interface (UDP and TCP on one port)
  std::uint32_t ttl_seconds = 1;        // of every answer: short, the lists change
  std::string domain = "cascade";       // NAME.service.DOMAIN
};

}  // namespace cascade::agent
