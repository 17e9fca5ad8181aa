#include "cascade/metrics/http_endpoint.hpp"

namespace cascade::metrics {

HttpEndpoint::HttpEndpoint(const EndpointOptions& options, const Registry& registry) {
  router_.add(
      "GET", "/metrics",
      [&registry](const http::Request&, const http::PathParams&, const http::ResponderPtr&) {
        http::Response response;
        response.body = registry.render();
        response.content_type = std::string(kTextContentType);
        return response;
      });
  http::ServerConfig config;
  config.listen = options.listen.value();
  config.allow = options.allow;
  config.threads = 1;  // a scrape every few seconds
  config.max_connections = 64;
  config.name = "metrics";
  server_ = std::make_unique<http::Server>(config, router_);
}

HttpEndpoint::~HttpEndpoint() = default;

}  // namespace cascade::metrics
