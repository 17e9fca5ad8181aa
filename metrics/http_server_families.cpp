#include "cascade/metrics/http_server_families.hpp"

namespace cascade::metrics {

namespace {

template <typename Atomic>
ReadAtScrape::Read load(const Atomic& value) {
  return [&value] { return static_cast<double>(value.load(std::memory_order_relaxed)); };
}

}  // namespace

void add_http_server_families(ReadAtScrape& read, const http::ServerCounters& c,
                              const std::string& prefix) {
  read.add({prefix + "_requests_total", "HTTP requests read.", MetricType::kCounter},
           load(c.requests));
  read.add({prefix + "_responses_total",
            "HTTP answers, by status class.",
            MetricType::kCounter,
            {"class"}},
           {{{"2xx"}, load(c.responses_2xx)},
            {{"4xx"}, load(c.responses_4xx)},
            {{"5xx"}, load(c.responses_5xx)}});
  read.add({prefix + "_refused_total",
            "HTTP connections and requests refused before a handler, by reason.",
            MetricType::kCounter,
            {"reason"}},
           {{{"peer_not_allowed"}, load(c.peers_refused)},
            {{"unauthorized"}, load(c.unauthorized)},
            {{"body_too_large"}, load(c.bodies_too_large)},
            {{"bad_request"}, load(c.bad_requests)},
            {{"connection_limit"}, load(c.over_connection_limit)}});
  read.add({prefix + "_handler_errors_total", "Requests whose handler failed (500).",
            MetricType::kCounter},
           load(c.handler_errors));
  read.add({prefix + "_answered_later_total", "Parked requests (watches, first lookups) answered.",
            MetricType::kCounter},
           load(c.answered_later));
  read.add(
      {prefix + "_parked_requests", "Requests waiting now (watches, lookups).", MetricType::kGauge},
      load(c.parked));
  read.add({prefix + "_connections", "HTTP connections open now.", MetricType::kGauge},
           load(c.connections));
  read.add(
      {prefix + "_connections_accepted_total", "HTTP connections accepted.", MetricType::kCounter},
      load(c.accepted));
}

}  // namespace cascade::metrics
