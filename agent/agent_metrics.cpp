#include "cascade/agent/agent_metrics.hpp"

#include <cmath>
#include <limits>

#include "cascade/metrics/process_metrics.hpp"
#include "cascade/metrics/read_at_scrape.hpp"

namespace cascade::agent {

namespace {

using metrics::MetricType;
using metrics::ReadAtScrape;

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();  // left out of the scrape

double seconds(Duration d) {
  return std::chrono::duration<double>(d).count();
}

template <typename Atomic>
ReadAtScrape::Read load(const Atomic& value) {
  return [&value] { return static_cast<double>(value.load(std::memory_order_relaxed)); };
}

void add_client(ReadAtScrape& read, const Client& client) {
  const auto status = [&client] { return client.status(); };
  read.add({"cascade_agent_hub_reachable", "1 while the hub beaten to answers, else 0.",
            MetricType::kGauge},
           [status] { return status().hub_reachable ? 1.0 : 0.0; });
  read.add({"cascade_agent_hub_failovers_total", "Moves to another hub of the list.",
            MetricType::kCounter},
           [status] { return static_cast<double>(status().failovers); });
  read.add(
      {"cascade_agent_hub_lease_seconds", "The lease the hub last granted.", MetricType::kGauge},
      [status] {
        const auto lease = status().lease;
        return lease.count() > 0 ? seconds(lease) : kUnknown;
      });
  read.add({"cascade_agent_hub_last_reply_age_seconds", "Time since the hub last answered.",
            MetricType::kGauge},
           [status] {
             const auto age = status().last_reply_age;
             return age ? seconds(*age) : kUnknown;
           });
  read.add({"cascade_agent_cached_services", "Services in the agent's cache.", MetricType::kGauge},
           [status] { return static_cast<double>(status().cached_services); });
  read.add({"cascade_agent_registered_instances",
            "Instances this agent registers (flags and applications).", MetricType::kGauge},
           [&client] { return static_cast<double>(client.registrations().size()); });
}

void add_http(ReadAtScrape& read, const http::ServerCounters& c) {
  read.add({"cascade_agent_http_requests_total", "HTTP requests read.", MetricType::kCounter},
           load(c.requests));
  read.add({"cascade_agent_http_responses_total",
            "HTTP answers, by status class.",
            MetricType::kCounter,
            {"class"}},
           {{{"2xx"}, load(c.responses_2xx)},
            {{"4xx"}, load(c.responses_4xx)},
            {{"5xx"}, load(c.responses_5xx)}});
  read.add({"cascade_agent_http_refused_total",
            "HTTP connections and requests refused before a handler, by reason.",
            MetricType::kCounter,
            {"reason"}},
           {{{"peer_not_allowed"}, load(c.peers_refused)},
            {{"unauthorized"}, load(c.unauthorized)},
            {{"body_too_large"}, load(c.bodies_too_large)},
            {{"bad_request"}, load(c.bad_requests)},
            {{"connection_limit"}, load(c.over_connection_limit)}});
  read.add({"cascade_agent_http_handler_errors_total", "Requests whose handler failed (500).",
            MetricType::kCounter},
           load(c.handler_errors));
  read.add({"cascade_agent_http_answered_later_total",
            "Parked requests (watches, first lookups) answered.", MetricType::kCounter},
           load(c.answered_later));
  read.add({"cascade_agent_http_parked_requests", "Requests waiting now (watches, lookups).",
            MetricType::kGauge},
           load(c.parked));
  read.add({"cascade_agent_http_connections", "HTTP connections open now.", MetricType::kGauge},
           load(c.connections));
  read.add({"cascade_agent_http_connections_accepted_total", "HTTP connections accepted.",
            MetricType::kCounter},
           load(c.accepted));
}

void add_dns(ReadAtScrape& read, const dns::DnsCounters& c) {
  read.add({"cascade_agent_dns_queries_total",
            "DNS queries received, by transport.",
            MetricType::kCounter,
            {"transport"}},
           {{{"udp"}, load(c.queries_udp)}, {{"tcp"}, load(c.queries_tcp)}});
  read.add({"cascade_agent_dns_replies_total",
            "DNS replies, by response code.",
            MetricType::kCounter,
            {"rcode"}},
           {{{"noerror"}, load(c.replies_noerror)},
            {{"nodata"}, load(c.replies_nodata)},
            {{"nxdomain"}, load(c.replies_nxdomain)},
            {{"servfail"}, load(c.replies_servfail)},
            {{"refused"}, load(c.replies_refused)},
            {{"formerr"}, load(c.replies_formerr)},
            {{"notimp"}, load(c.replies_notimp)},
            {{"badvers"}, load(c.replies_badvers)}});
  read.add({"cascade_agent_dns_bad_queries_total", "DNS queries that were not answerable.",
            MetricType::kCounter},
           load(c.bad_queries));
  read.add(
      {"cascade_agent_dns_dropped_total", "DNS messages given no reply.", MetricType::kCounter},
      load(c.dropped));
  read.add({"cascade_agent_dns_truncated_total", "UDP replies cut to fit (TC set).",
            MetricType::kCounter},
           load(c.replies_truncated));
  read.add({"cascade_agent_dns_lookups_total", "Services the DNS interface looked up.",
            MetricType::kCounter},
           load(c.lookups));
  read.add({"cascade_agent_dns_lookups_overflow_total",
            "Queries answered SERVFAIL at once: too many lookups pending.", MetricType::kCounter},
           load(c.lookups_overflow));
}

}  // namespace

std::unique_ptr<metrics::Registry> agent_metrics(const Client& client, const api::LocalApi* api,
                                                 const dns::DnsServer* dns) {
  auto registry = std::make_unique<metrics::Registry>();
  auto read = std::make_unique<ReadAtScrape>();
  add_client(*read, client);
  if (api) add_http(*read, api->counters());
  if (dns) add_dns(*read, dns->counts());
  registry->add(std::move(read));
  registry->add(std::make_unique<metrics::ProcessMetrics>());
  return registry;
}

}  // namespace cascade::agent
