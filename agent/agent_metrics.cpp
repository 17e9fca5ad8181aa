#include "cascade/agent/agent_metrics.hpp"

#include <chrono>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cascade/metrics/http_server_families.hpp"
#include "cascade/metrics/process_metrics.hpp"
#include "cascade/metrics/read_at_scrape.hpp"

namespace cascade::agent {

namespace {

using metrics::FamilyInfo;
using metrics::MetricType;
using metrics::ReadAtScrape;
using StatsRead = metrics::ReadFromSnapshot<ClientStats>;

constexpr double kUnknown = std::numeric_limits<double>::quiet_NaN();  // left out of the scrape

// 100 µs (a beat over loopback) to 5 s (past the default 2 s query timeout).
const std::vector<double> kLatencyBuckets{
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5};

double seconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

FamilyInfo counter(std::string name, std::string help, std::vector<std::string> labels = {}) {
  return {std::move(name), std::move(help), MetricType::kCounter, std::move(labels)};
}

FamilyInfo gauge(std::string name, std::string help, std::vector<std::string> labels = {}) {
  return {std::move(name), std::move(help), MetricType::kGauge, std::move(labels)};
}

// A count of ClientStats, by the member of the part that holds it.
StatsRead::Read hub(std::uint64_t AgentCoreCounters::*count) {
  return [count](const ClientStats& s) { return static_cast<double>(s.hub.*count); };
}
StatsRead::Read calls(std::uint64_t CallSums::*count) {
  return [count](const ClientStats& s) { return static_cast<double>(s.calls.*count); };
}
StatsRead::Read failures(std::uint64_t FailureReporterCounters::*count) {
  return [count](const ClientStats& s) { return static_cast<double>(s.failures.*count); };
}
StatsRead::Read breakers(std::size_t BreakerCensus::*count) {
  return [count](const ClientStats& s) { return static_cast<double>(s.breakers.*count); };
}
StatsRead::Read transitions(std::uint64_t BreakerTransitions::*count) {
  return
      [count](const ClientStats& s) { return static_cast<double>(s.breakers.transitions.*count); };
}

template <typename Atomic>
ReadAtScrape::Read load(const Atomic& value) {
  return [&value] { return static_cast<double>(value.load(std::memory_order_relaxed)); };
}

// The Client's timings, into histograms of the registry: the I/O thread's
// whole cost per event is Histogram::observe().
class Timings final : public ClientObserver {
 public:
  explicit Timings(metrics::Registry& registry)
      : round_trip_(registry.histogram(
            "cascade_agent_hub_beat_round_trip_seconds",
            "From a beat handed to the transport to the hub's reply naming it.", kLatencyBuckets)),
        first_lookup_(registry.histogram(
            "cascade_agent_first_lookup_seconds",
            "First lookups (queries to the hub), from asked to answered or given up.",
            kLatencyBuckets)) {}

  void beat_round_trip(std::chrono::nanoseconds rtt) override { round_trip_.observe(seconds(rtt)); }
  void first_lookup(std::chrono::nanoseconds latency) override {
    first_lookup_.observe(seconds(latency));
  }

 private:
  metrics::Histogram& round_trip_;
  metrics::Histogram& first_lookup_;
};

void add_hub_link(StatsRead& read) {
  read.add(gauge("cascade_agent_hub_reachable", "1 while the hub beaten to answers, else 0."),
           [](const ClientStats& s) { return s.status.hub_reachable ? 1.0 : 0.0; });
  read.add(counter("cascade_agent_hub_failovers_total", "Moves to another hub of the list."),
           [](const ClientStats& s) { return static_cast<double>(s.status.failovers); });
  read.add(gauge("cascade_agent_hub_lease_seconds", "The lease the hub last granted."),
           [](const ClientStats& s) {
             const auto lease = s.status.lease;
             return lease.count() > 0 ? seconds(lease) : kUnknown;
           });
  read.add(gauge("cascade_agent_beat_interval_seconds",
                 "How often this agent beats: its own interval, or the longer one a hub that "
                 "fell behind granted."),
           [](const ClientStats& s) { return seconds(s.status.beat_interval); });
  read.add(gauge("cascade_agent_hub_last_reply_age_seconds", "Time since the hub last answered."),
           [](const ClientStats& s) {
             const auto age = s.status.last_reply_age;
             return age ? seconds(*age) : kUnknown;
           });
  read.add(counter("cascade_agent_hub_beats_sent_total",
                   "Beats sent to hubs (retries, chunks and beats to every hub included)."),
           hub(&AgentCoreCounters::beats_sent));
  read.add(counter("cascade_agent_hub_beat_retries_total",
                   "Beats sent again because no reply came within the reply timeout."),
           hub(&AgentCoreCounters::beat_retries));
  read.add(counter("cascade_agent_hub_beats_unsent_total",
                   "Beats the transport could not take (no connection to the hub)."),
           hub(&AgentCoreCounters::beats_unsent));
  read.add(counter("cascade_agent_hub_beats_missed_total",
                   "Beat intervals that ended unanswered (misses lead to a failover)."),
           hub(&AgentCoreCounters::beats_missed));
  read.add(counter("cascade_agent_hub_beats_shed_total",
                   "Beats an overloaded hub shed unread (busy): sent again when it asked."),
           hub(&AgentCoreCounters::beats_shed));
  read.add(counter("cascade_agent_hub_beat_replies_total", "Replies of hubs to beats."),
           hub(&AgentCoreCounters::beat_replies));
  read.add(counter("cascade_agent_hub_pushes_total", "Updates the hub pushed between beats."),
           hub(&AgentCoreCounters::pushes));
}

void add_first_lookups(StatsRead& read) {
  read.add(counter("cascade_agent_first_lookups_total",
                   "First lookups (queries to the hub) that ended, by how.", {"result"}),
           {{{"answered"}, hub(&AgentCoreCounters::lookups_answered)},
            {{"not_found"}, hub(&AgentCoreCounters::lookups_not_found)},
            {{"timeout"}, hub(&AgentCoreCounters::lookups_timed_out)},
            {{"refused"}, hub(&AgentCoreCounters::lookups_refused)},
            {{"unavailable"}, hub(&AgentCoreCounters::lookups_unavailable)},
            {{"busy"}, hub(&AgentCoreCounters::lookups_busy)}});
  read.add(gauge("cascade_agent_first_lookups_in_flight", "First lookups waiting for the hub."),
           [](const ClientStats& s) {
             const auto& c = s.hub;
             const auto ended = c.lookups_answered + c.lookups_not_found + c.lookups_timed_out +
                                c.lookups_refused + c.lookups_unavailable + c.lookups_busy;
             return static_cast<double>(c.lookups_sent - ended);
           });
}

void add_cache(StatsRead& read) {
  read.add(gauge("cascade_agent_cached_services", "Services in the agent's cache."),
           [](const ClientStats& s) { return static_cast<double>(s.status.cached_services); });
  read.add(
      gauge("cascade_agent_cache_oldest_age_seconds",
            "Age of the cached list a hub confirmed longest ago."),
      [](const ClientStats& s) { return s.cache.oldest ? seconds(*s.cache.oldest) : kUnknown; });
  read.add(gauge("cascade_agent_cache_stale_services",
                 "Cached services whose list a lookup now answers marked stale."),
           [](const ClientStats& s) { return static_cast<double>(s.cache.stale); });
  read.add(gauge("cascade_agent_registered_instances",
                 "Instances this agent registers (flags and applications)."),
           [](const ClientStats& s) { return static_cast<double>(s.registered_instances); });
}

void add_picks_and_calls(StatsRead& read) {
  std::vector<StatsRead::Child> picks;
  for (std::size_t i = 0; i < kPickResultCount; ++i)
    picks.push_back({{std::string(to_string(static_cast<PickResult>(i)))},
                     [i](const ClientStats& s) { return static_cast<double>(s.picks[i]); }});
  read.add(counter("cascade_agent_picks_total", "Picks of an instance, by result.", {"result"}),
           std::move(picks));
  std::vector<StatsRead::Child> ends;
  for (std::size_t i = 0; i < kCallEndCount; ++i)
    ends.push_back({{to_string(static_cast<CallEnd>(i))},
                    [i](const ClientStats& s) { return static_cast<double>(s.calls.calls[i]); }});
  read.add(counter("cascade_agent_calls_total", "Calls through the client's call(), by result.",
                   {"result"}),
           std::move(ends));
  read.add(counter("cascade_agent_call_attempts_total",
                   "Attempts of those calls (retries and backup requests included)."),
           calls(&CallSums::attempts));
  read.add(counter("cascade_agent_call_extra_requests_total",
                   "Retries and backup requests, sent or not for want of budget or a worker.",
                   {"kind", "result"}),
           {{{"retry", "sent"}, calls(&CallSums::retries)},
            {{"retry", "over_budget"}, calls(&CallSums::retries_denied_by_budget)},
            {{"backup", "sent"}, calls(&CallSums::backups)},
            {{"backup", "over_budget"}, calls(&CallSums::backups_denied_by_budget)},
            {{"backup", "no_worker"}, calls(&CallSums::backups_without_worker)}});
  read.add(counter("cascade_agent_call_breaker_skips_total",
                   "Picked instances a call skipped because their circuit breaker refused."),
           calls(&CallSums::breaker_skips));
}

void add_breakers(StatsRead& read) {
  read.add(gauge("cascade_agent_breakers",
                 "Circuit breakers of the addresses called lately, by state.", {"state"}),
           {{{"closed"}, breakers(&BreakerCensus::closed)},
            {{"open"}, breakers(&BreakerCensus::open)},
            {{"half_open"}, breakers(&BreakerCensus::half_open)}});
  read.add(counter("cascade_agent_breaker_transitions_total",
                   "Circuit breaker state changes, by the state entered.", {"to"}),
           {{{"open"}, transitions(&BreakerTransitions::opened)},
            {{"half_open"}, transitions(&BreakerTransitions::half_opened)},
            {{"closed"}, transitions(&BreakerTransitions::closed)}});
}

void add_fast_fail(StatsRead& read) {
  read.add(counter("cascade_agent_failures_reported_total",
                   "Failed calls reported to the agent (by applications, or by call() when a "
                   "breaker opens)."),
           failures(&FailureReporterCounters::failures));
  read.add(counter("cascade_agent_fast_fail_reports_total",
                   "Fast-fail reports sent to the hub (each carries one or more signals)."),
           hub(&AgentCoreCounters::fast_fail_reports));
  read.add(counter("cascade_agent_fast_fail_signals_total",
                   "Fast-fail signals sent (each folds the failures of one address)."),
           failures(&FailureReporterCounters::signals));
  read.add(counter("cascade_agent_fast_fail_dropped_total",
                   "Failures not reported: too many addresses tracked."),
           failures(&FailureReporterCounters::dropped));
}

std::unique_ptr<StatsRead> read_client(const Client& client) {
  auto read = std::make_unique<StatsRead>([&client] { return client.stats(); });
  add_hub_link(*read);
  add_first_lookups(*read);
  add_cache(*read);
  add_picks_and_calls(*read);
  add_breakers(*read);
  add_fast_fail(*read);
  return read;
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

// The KV store's writes (agent/api/hub_editor.hpp): refusals counted apart
// from the edits the hub applied.
void add_config_edits(ReadAtScrape& read, const api::HubEditorCounters& c) {
  read.add({"cascade_agent_config_edits_total",
            "Config edits sent to the hub through the HTTP API, by result.",
            MetricType::kCounter,
            {"result"}},
           {{{"applied"}, load(c.applied)},
            {{"refused"}, load(c.refused)},
            {{"unanswered"}, load(c.unanswered)},
            {{"overflow"}, load(c.overflowed)}});
}

}  // namespace

AgentMetrics::AgentMetrics() : timings_(std::make_unique<Timings>(registry_)) {}

AgentMetrics::~AgentMetrics() = default;

void AgentMetrics::read_from(const Client& client, const api::LocalApi* api,
                             const dns::DnsServer* dns) {
  registry_.add(read_client(client));
  auto read = std::make_unique<ReadAtScrape>();
  if (api) {
    metrics::add_http_server_families(*read, api->counters(), "cascade_agent_http");
    add_config_edits(*read, api->edit_counters());
  }
  if (dns) add_dns(*read, dns->counts());
  registry_.add(std::move(read));
  registry_.add(std::make_unique<metrics::ProcessMetrics>());
}

}  // namespace cascade::agent
