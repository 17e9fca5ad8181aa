#pragma once
// GET /metrics over HTTP: a Registry rendered for each scrape, served by the
// HTTP server of cascade's interfaces (http/server.hpp) on its own port, as
// `--metrics ADDR` on the hub and the agent. Loopback peers always; others
// only from the allowed ranges (Prometheus usually scrapes from another
// host: the operator says which). Read-only, so no token.

#include <memory>

#include "cascade/http/router.hpp"
#include "cascade/http/server.hpp"
#include "cascade/metrics/endpoint_options.hpp"
#include "cascade/metrics/registry.hpp"

namespace cascade::metrics {

class HttpEndpoint {
 public:
  // Listening on options.listen (which must be set) when constructed;
  // throws std::runtime_error when it cannot.
  // `registry` must outlive the endpoint.
  HttpEndpoint(const EndpointOptions& options, const Registry& registry);
  ~HttpEndpoint();
  const SocketAddress& address() const { return server_->local_address(); }

 private:
  http::Router router_;
  std::unique_ptr<http::Server> server_;  // last: stops first
};

}  // namespace cascade::metrics
