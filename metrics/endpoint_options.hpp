#pragma once
// Where a process serves /metrics and who may scrape it: `--metrics
// HOST:PORT` and `--metrics-allow CIDR` (repeatable), the same on the hub,
// the proxy and the agent.

#include <optional>
#include <string>
#include <vector>

#include "cascade/common/net_address.hpp"

namespace cascade::metrics {

struct EndpointOptions {
  std::optional<SocketAddress> listen;  // nullopt: no /metrics
  std::vector<Cidr> allow;              // peers that may scrape besides loopback ones
};

// Parses the two flags into `out`: "" or the error for the operator. Metrics
// are read-only, but who may read them is still the operator's call: an
// address other hosts can reach needs the ranges Prometheus scrapes from.
std::string parse_endpoint_options(const std::string& listen, const std::vector<std::string>& allow,
                                   EndpointOptions& out);

}  // namespace cascade::metrics
