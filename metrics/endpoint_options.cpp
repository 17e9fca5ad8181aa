#include "cascade/metrics/endpoint_options.hpp"

namespace cascade::metrics {

std::string parse_endpoint_options(const std::string& listen, const std::vector<std::string>& allow,
                                   EndpointOptions& out) {
  if (auto error = parse_range_flags("--metrics-allow", allow, out.allow); !error.empty())
    return error;
  if (listen.empty()) return out.allow.empty() ? "" : "--metrics-allow needs --metrics";
  if (auto error = parse_listen_flag("--metrics", listen, out.listen); !error.empty()) return error;
  if (!out.listen->is_loopback() && out.allow.empty())
    return "--metrics " + listen +
           " is reachable from other hosts: give --metrics-allow CIDR (where Prometheus "
           "scrapes from), or listen on 127.0.0.1";
  return {};
}

}  // namespace cascade::metrics
