#include "cascade/metrics/endpoint_options.hpp"

namespace cascade::metrics {

std::string parse_endpoint_options(const std::string& listen, const std::vector<std::string>& allow,
                                   EndpointOptions& out) {
  for (const auto& text : allow) {
    auto range = Cidr::parse(text);
    if (auto* error = std::get_if<std::string>(&range)) return "--metrics-allow: " + *error;
    out.allow.push_back(std::get<Cidr>(range));
  }
  if (listen.empty()) return out.allow.empty() ? "" : "--metrics-allow needs --metrics";
  auto address = SocketAddress::parse(listen);
  if (auto* error = std::get_if<std::string>(&address)) return "--metrics: " + *error;
  out.listen = std::get<SocketAddress>(address);
  if (!out.listen->is_loopback() && out.allow.empty())
    return "--metrics " + listen +
           " is reachable from other hosts: give --metrics-allow CIDR (where Prometheus "
           "scrapes from), or listen on 127.0.0.1";
  return {};
}

}  // namespace cascade::metrics
