// cascade_tier_bench: what tiers cost and buy, in one run (docs/benchmarks.md,
// "Tiers").
//
// Steps:
//  1. propagation: three real HubServers on their own threads over tcp
//     loopback (an L2 and two L1s, dc1 and dc2, each with SQLite in a temp
//     directory and its own ZeroMQ context), providers in dc2 and consumers in
//     dc1 using the agent library (agent::Client), all beating every --beat-ms.
//     Each sample is one change made in dc2 at a random moment of a window of
//     --spread-s seconds (distinct services, so the samples run side by side);
//     its latency is the time from the provider's call to the dc1 consumer's
//     on_change callback showing the change (and, polled, in the L2's
//     answers: the hop up). Four kinds: a new instance of a
//     service the consumer follows, a new service the consumer waits for
//     (keep_fresh before it exists), deregister_instance, and a provider's
//     shutdown() (one Deregister).
//  2. resolve: a raw DEALER sends Query to the dc1 L1, one in flight: a
//     service of dc1 (same tier, the baseline), a dc2 service dc1 never asked
//     for (cold: each query a new name, the L1 asks the L2), and the same dc2
//     services again (warm: the L1's cache answers). Warm and same-tier
//     queries alternate, so both see the same machine.
//  3. upper-tier load, on a virtual clock (bench/tier_load.hpp): --l1-hubs
//     HubCores of --agents agents x --instances instances under one L2, in
//     steady state and with --churn of the instances replaced per minute; and
//     a reduced flat fleet (--flat-agents agents, one instance each) beating
//     to one registry, scaled to as many agents as the tiered run has
//     instances. Messages and bytes are those of the real codec.
//
// Every answer and every propagation is checked (found, right instances, right
// source; every change observed; the virtual tiers converge to exactly the
// agents' sets). A failed check exits 1; a target MISS is a result, not an
// error, and --quick (ctest tier_bench_quick) never judges timings.

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/agent/client.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/bench/tier_load.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_config.hpp"

namespace {

using namespace cascade;
using bench::HubProbe;
using bench::InProcessHub;
using bench::Percentiles;
using bench::si;
using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

// Targets (the issue): warm cross-tier resolve as fast as same-tier,
// p99 <= 1 ms; L2 receives O(L1 hubs) messages per interval; a graceful
// deregistration in dc2 reaches a dc1 consumer within two beat intervals.
constexpr double kTargetWarmP99Us = 1000;
constexpr double kTargetMessagesPerHubPerInterval = 1.25;  // "about one": beat jitter allowed
constexpr int kTargetBeatsForDeregistration = 2;

// ---------------------------------------------------------------- options

struct Options {
  Duration beat{2000};
  std::size_t samples = 200;              // registrations, and as many deregistrations
  std::size_t new_service_samples = 50;   // services a consumer waits for before they exist
  std::size_t shutdown_samples = 50;      // providers that shut down
  std::size_t consumers = 8;              // dc1 clients sharing the followed services
  std::size_t providers = 8;              // dc2 clients making the registrations
  Duration spread{20'000};                // one phase's samples start within this window
  std::size_t cold = 300;                 // cold queries (each a new service)
  std::size_t warm = 5000;                // warm queries, and as many same-tier ones
  std::size_t instances_per_service = 4;  // of the resolved services
  bool loopback = true;
  bool load = true;
  bool quick = false;
  bench::LoadConfig load_config;
};

constexpr const char* kUsage =
    R"(cascade_tier_bench: propagation across tiers, cross-tier resolve, upper-tier load

  --beat-ms MS              beat interval of agents and uplinks (default 2000; lease 3x)
  --samples N               registration and deregistration samples each (default 200)
  --new-service-samples N   new services a dc1 consumer waits for (default 50)
  --shutdown-samples N      dc2 providers that shut down (default 50; <= --samples)
  --consumers N             dc1 consumer clients (default 8)
  --providers N             dc2 provider clients making the changes (default 8)
  --spread-s S              a phase's changes start at random within S seconds (default 20)
  --cold N                  cold cross-tier queries, each a new service (default 300)
  --warm N                  warm cross-tier queries, and as many same-tier (default 5000)
  --l1-hubs N               L1 hubs under the L2 in the load step (default 10)
  --agents N                agents per L1 (default 1000)
  --instances N             instances per agent (default 100)
  --services N              services per L1 (default 1000)
  --cross-uses N            services of other L1s one consumer per L1 keeps fresh (default 20)
  --missing-uses N          services existing nowhere that the same consumers wait for (default 0)
  --flat-agents N           the reduced flat fleet, one instance each (default 10000)
  --churn F                 share of instances replaced per minute (default 0.01)
  --steady-s S              virtual seconds measured in steady state (default 60)
  --churn-s S               virtual seconds measured with churn (default 20)
  --no-loopback             skip steps 1 and 2 (real hubs on loopback)
  --no-load                 skip step 3 (upper-tier load on the virtual clock)
  --quick                   smoke test: small sizes, 500 ms beats; checks answers, judges no timing
)";

void apply_quick(Options& o) {
  o.quick = true;
  o.beat = Duration{500};
  o.samples = 10;
  o.new_service_samples = 5;
  o.shutdown_samples = 5;
  o.consumers = 2;
  o.providers = 2;
  o.spread = Duration{2000};
  o.cold = 30;
  o.warm = 300;
  auto& l = o.load_config;
  l.l1_hubs = 3;
  l.agents_per_hub = 20;
  l.instances_per_agent = 10;
  l.services_per_hub = 20;
  l.cross_tier_uses = 3;
  l.flat_agents = 200;
  l.churn_per_minute = 0.5;
  l.steady = Duration{10'000};
  l.churn = Duration{20'000};
}

void declare_flags(bench::Flags& f, Options& o) {
  f.first("--quick", [&o] { apply_quick(o); });
  auto& l = o.load_config;
  f.add({
      {"--beat-ms", &o.beat},
      {"--samples", &o.samples},
      {"--new-service-samples", &o.new_service_samples, bench::kZeroOk},
      {"--shutdown-samples", &o.shutdown_samples, bench::kZeroOk},
      {"--consumers", &o.consumers},
      {"--providers", &o.providers},
      {"--spread-s", &o.spread},
      {"--cold", &o.cold},
      {"--warm", &o.warm},
      {"--l1-hubs", &l.l1_hubs},
      {"--agents", &l.agents_per_hub},
      {"--instances", &l.instances_per_agent},
      {"--services", &l.services_per_hub},
      {"--cross-uses", &l.cross_tier_uses, bench::kZeroOk},
      {"--missing-uses", &l.missing_uses, bench::kZeroOk},
      {"--flat-agents", &l.flat_agents},
      {"--churn", &l.churn_per_minute},
      {"--steady-s", &l.steady},
      {"--churn-s", &l.churn},
      {"--no-loopback", &o.loopback},
      {"--no-load", &o.load},
  });
}

Options parse_options(int argc, char** argv) {
  auto o = bench::parse_flags<Options>(argc, argv, kUsage, declare_flags);
  if (o.shutdown_samples > o.samples)
    throw std::invalid_argument("--shutdown-samples cannot exceed --samples");
  if (o.load_config.steady < o.beat || o.load_config.churn < o.beat)
    throw std::invalid_argument("--steady-s and --churn-s must be at least one beat interval");
  o.load_config.beat = o.beat;
  o.load_config.lease = 3 * o.beat;
  return o;
}

void progress(const std::string& what) {
  bench::progress("tier-bench", what);
}

std::string numbered(const char* prefix, std::size_t k) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%s-%04zu", prefix, k);
  return buf;
}

proto::ServiceKey key(const std::string& name) {
  return proto::ServiceKey{name, std::string(proto::kDefaultGroup)};
}

proto::Registration registration(const std::string& service, const std::string& id, std::size_t n,
                                 const char* zone = "dc2") {
  proto::Registration r;
  r.service = key(service);
  r.instance.id = id;
  r.instance.address = bench::address(n, 8080);
  r.instance.zone = zone;
  r.instance.metadata.emplace("version", "1.4.2");
  return r;
}

bool lists(const std::vector<proto::Instance>& instances, const std::string& id) {
  return std::any_of(instances.begin(), instances.end(),
                     [&](const proto::Instance& in) { return in.id == id; });
}

// Polls `done` every 20 ms until it holds or `within` passed.
bool wait_for(const std::function<bool()>& done, std::chrono::milliseconds within) {
  const auto deadline = SteadyClock::now() + within;
  while (!done()) {
    if (SteadyClock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

// ---------------------------------------------------------------- propagation

// The changes a phase waits for, shared by every consumer's on_change
// callback. A thread of its own also polls the L2 (Query, every ~2 ms) for
// the armed changes, to split each latency into "up to the L2" and the rest.
class Watch {
 public:
  struct Sample {
    std::string service;
    std::string instance;
    bool present = true;  // the change makes the instance appear (else disappear)
    TimePoint changed_at{};
    std::optional<TimePoint> seen_at;   // by the dc1 consumer
    std::optional<TimePoint> at_upper;  // first seen in the L2's answer
  };

  explicit Watch(std::string upper_endpoint)
      : poller_([this, endpoint = std::move(upper_endpoint)] { poll_upper(endpoint); }) {}
  ~Watch() { stop(); }
  Watch(const Watch&) = delete;
  Watch& operator=(const Watch&) = delete;

  // Starts the clock of `sample`; call it right before making the change.
  void arm(Sample& sample) {
    std::lock_guard lock(mu_);
    sample.changed_at = SteadyClock::now();
    armed_[sample.service] = &sample;
    upper_pending_.push_back(&sample);
  }

  void on_change(const agent::Resolution& r) {
    const auto now = SteadyClock::now();
    std::lock_guard lock(mu_);
    auto it = armed_.find(r.service.name);
    if (it == armed_.end()) return;
    Sample& s = *it->second;
    if (lists(r.instances, s.instance) != s.present) return;
    s.seen_at = now;
    armed_.erase(it);
    cv_.notify_all();
  }

  // True when every armed change was seen before `deadline`.
  bool wait_all(TimePoint deadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return armed_.empty(); });
  }
  void disarm_all() {
    std::lock_guard lock(mu_);
    armed_.clear();
    upper_pending_.clear();
  }
  void stop() {
    stop_.store(true);
    if (poller_.joinable()) poller_.join();
  }

 private:
  void poll_upper(const std::string& endpoint) {
    HubProbe l2(endpoint);
    while (!stop_.load()) {
      std::vector<Sample*> pending;
      {
        std::lock_guard lock(mu_);
        pending = upper_pending_;
      }
      for (Sample* s : pending) {
        proto::Query q;
        q.node_id = "tier-bench-watch";
        q.service = key(s->service);
        auto reply = l2.request(q);
        const auto now = SteadyClock::now();
        const auto* r = std::get_if<proto::QueryReply>(&reply);
        if (r == nullptr || lists(r->instances, s->instance) != s->present) continue;
        std::lock_guard lock(mu_);
        auto it = std::find(upper_pending_.begin(), upper_pending_.end(), s);
        if (it == upper_pending_.end()) continue;  // disarmed meanwhile
        s->at_upper = now;
        upper_pending_.erase(it);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Sample*> armed_;
  std::vector<Sample*> upper_pending_;
  std::atomic<bool> stop_{false};
  std::thread poller_;  // last: starts after everything it uses
};

Watch::Sample change(std::string service, std::string instance, bool present) {
  Watch::Sample s;
  s.service = std::move(service);
  s.instance = std::move(instance);
  s.present = present;
  return s;
}

struct KindResult {
  std::string name;
  std::vector<double> ms;        // latencies of the samples seen
  std::vector<double> upper_ms;  // ... of the same changes up to the L2
  std::size_t missing = 0;
  bool deregistration = false;
};

struct LoopbackResult {
  std::vector<KindResult> kinds;
  Percentiles same_tier_us;
  Percentiles warm_us;
  Percentiles cold_us;
  std::map<std::string, std::size_t> warm_sources;  // source of each warm answer
  double seconds = 0;
  std::vector<std::string> problems;
};

agent::ClientOptions client_options(const std::string& id, const std::string& hub, Duration beat) {
  agent::ClientOptions o;
  o.node_id = id;
  o.hubs = {hub};
  o.beat_interval = beat;
  o.query_timeout = Duration{5000};
  o.shutdown_timeout = Duration{5000};
  return o;
}

struct Scheduled {
  TimePoint at;
  Watch::Sample* sample;
  std::function<void()> act;
};

// Runs every scheduled change at its moment, then waits for all to be seen.
bool run_schedule(Watch& watch, std::vector<Scheduled>& plan, Duration patience) {
  std::sort(plan.begin(), plan.end(),
            [](const Scheduled& a, const Scheduled& b) { return a.at < b.at; });
  for (auto& step : plan) {
    std::this_thread::sleep_until(step.at);
    watch.arm(*step.sample);
    step.act();
  }
  const bool all = watch.wait_all(SteadyClock::now() + patience);
  watch.disarm_all();
  return all;
}

KindResult collect(const std::string& name, const std::vector<Watch::Sample>& samples,
                   bool deregistration) {
  KindResult k;
  k.name = name;
  k.deregistration = deregistration;
  for (const auto& s : samples) {
    if (s.changed_at == TimePoint{}) continue;  // never armed: its change was not made
    if (s.seen_at)
      k.ms.push_back(std::chrono::duration<double, std::milli>(*s.seen_at - s.changed_at).count());
    else
      ++k.missing;
    if (s.at_upper)
      k.upper_ms.push_back(
          std::chrono::duration<double, std::milli>(*s.at_upper - s.changed_at).count());
  }
  return k;
}

double query_us(HubProbe& probe, const std::string& service, proto::QueryReply& out) {
  proto::Query q;
  q.node_id = "tier-bench";
  q.service = key(service);
  const auto t0 = SteadyClock::now();
  auto reply = probe.request(q);
  const auto t1 = SteadyClock::now();
  if (auto* r = std::get_if<proto::QueryReply>(&reply)) {
    out = std::move(*r);
  } else {
    const auto* e = std::get_if<proto::ErrorReply>(&reply);
    throw std::runtime_error("query for " + service + " answered with " +
                             (e ? "an error: " + e->message : std::string("another message")));
  }
  return std::chrono::duration<double, std::micro>(t1 - t0).count();
}

// Whether a resolve answer is what the bench registered; else says why.
bool answer_ok(const proto::QueryReply& r, std::size_t instances, proto::AnswerSource source,
               std::string& problem) {
  if (!r.found || r.instances.size() != instances) {
    problem = r.service.name + ": " + std::to_string(r.instances.size()) + " instances, expected " +
              std::to_string(instances);
    return false;
  }
  if (r.source != source) {
    problem = r.service.name + ": source " + proto::to_string(r.source) + ", expected " +
              proto::to_string(source);
    return false;
  }
  return true;
}

LoopbackResult run_loopback(const Options& o) {
  const auto started = SteadyClock::now();
  LoopbackResult result;
  progress("starting L2, dc1, dc2 (in-process HubServers on tcp loopback)");
  bench::TwoTierHubs hubs("cascade-tier-bench", [&o](hub::HubConfig& c) {
    c.beat_interval = o.beat;
    c.lease = 3 * o.beat;
  });
  const InProcessHub& l2 = hubs.l2;
  const InProcessHub& dc1 = hubs.dc1;
  const InProcessHub& dc2 = hubs.dc2;
  const auto patience =
      std::chrono::duration_cast<std::chrono::milliseconds>(10 * o.beat + Duration{10'000});

  // Providers. Followed services prop-K have an anchor instance that never
  // changes; the first shutdown_samples of them also have one instance of a
  // provider that will shut down. cold-K (dc2) and local-K (dc1) are resolved.
  progress("registering providers");
  agent::Client anchors(client_options("dc2-anchors", dc2.endpoint(), o.beat));
  for (std::size_t k = 0; k < o.samples; ++k)
    anchors.register_instance(registration(numbered("prop", k), numbered("anchor", k), k));
  std::vector<std::unique_ptr<agent::Client>> stoppers;
  for (std::size_t k = 0; k < o.shutdown_samples; ++k) {
    stoppers.push_back(std::make_unique<agent::Client>(
        client_options(numbered("dc2-stopper", k), dc2.endpoint(), o.beat)));
    stoppers.back()->register_instance(
        registration(numbered("prop", k), numbered("sd", k), 10'000 + k));
  }
  agent::Client dc2_bulk(client_options("dc2-bulk", dc2.endpoint(), o.beat));
  agent::Client dc1_bulk(client_options("dc1-bulk", dc1.endpoint(), o.beat));
  for (std::size_t k = 0; k < o.cold; ++k) {
    for (std::size_t i = 0; i < o.instances_per_service; ++i) {
      const auto n = 20'000 + k * o.instances_per_service + i;
      dc2_bulk.register_instance(registration(numbered("cold", k), numbered("c", n), n));
      dc1_bulk.register_instance(registration(numbered("local", k), numbered("l", n), n, "dc1"));
    }
  }
  std::vector<std::unique_ptr<agent::Client>> providers;
  for (std::size_t j = 0; j < o.providers; ++j)
    providers.push_back(std::make_unique<agent::Client>(
        client_options(numbered("dc2-provider", j), dc2.endpoint(), o.beat)));

  HubProbe l2_probe(l2.endpoint());
  HubProbe dc1_probe(dc1.endpoint());
  // The L2 holds both datacenters: dc2's anchors, stoppers and cold services, dc1's local ones.
  const std::size_t l2_expected =
      o.samples + o.shutdown_samples + 2 * o.cold * o.instances_per_service;
  const bool registered = wait_for(
      [&] {
        return l2_probe.status().instances == l2_expected &&
               dc1_probe.status().instances == o.cold * o.instances_per_service;
      },
      patience);
  if (!registered) {
    result.problems.push_back("the L2 never held the " + std::to_string(l2_expected) +
                              " instances registered in dc1 and dc2 (it holds " +
                              std::to_string(l2_probe.status().instances) + ")");
    return result;
  }

  // [2] resolve: cold first (each service once), then warm and same-tier alternating.
  progress("resolve: cold cross-tier queries");
  proto::QueryReply reply;
  std::map<std::string, std::pair<std::size_t, std::string>> wrong;  // kind -> count, first
  auto check = [&](const char* kind, proto::AnswerSource source) {
    std::string problem;
    if (answer_ok(reply, o.instances_per_service, source, problem)) return;
    auto& [count, first] = wrong[kind];
    if (count++ == 0) first = problem;
  };
  std::vector<double> cold_us, warm_us, same_us;
  for (std::size_t k = 0; k < o.cold; ++k) {
    cold_us.push_back(query_us(dc1_probe, numbered("cold", k), reply));
    check("cold", proto::AnswerSource::kUpstream);
  }
  for (std::size_t k = 0; k < std::min<std::size_t>(o.cold, 100); ++k)
    query_us(dc1_probe, numbered("local", k), reply);  // warm the same-tier path too
  progress("resolve: warm cross-tier and same-tier queries, alternating");
  for (std::size_t i = 0; i < o.warm; ++i) {
    warm_us.push_back(query_us(dc1_probe, numbered("cold", i % o.cold), reply));
    ++result.warm_sources[proto::to_string(reply.source)];
    check("warm", reply.source);  // content only; the sources are counted
    same_us.push_back(query_us(dc1_probe, numbered("local", i % o.cold), reply));
    check("same-tier", proto::AnswerSource::kLocal);
  }
  for (const auto& [kind, failures] : wrong)
    result.problems.push_back(std::to_string(failures.first) + " " + kind +
                              " resolve answer(s) wrong; first: " + failures.second);
  result.cold_us = bench::percentiles(cold_us);
  result.warm_us = bench::percentiles(warm_us);
  result.same_tier_us = bench::percentiles(same_us);
  if (result.warm_sources[proto::to_string(proto::AnswerSource::kCache)] == 0)
    result.problems.push_back("no warm answer came from the L1's cache");

  // [1] propagation. Consumers follow prop-K (resolve once, then kept fresh by
  // their beats) and wait for fresh-K, which does not exist yet.
  progress("propagation: consumers follow " + std::to_string(o.samples) + " dc2 services");
  Watch watch(l2.endpoint());
  std::vector<std::unique_ptr<agent::Client>> consumers;
  for (std::size_t j = 0; j < o.consumers; ++j) {
    consumers.push_back(std::make_unique<agent::Client>(
        client_options(numbered("dc1-consumer", j), dc1.endpoint(), o.beat)));
    consumers.back()->on_change([&watch](const agent::Resolution& r) { watch.on_change(r); });
  }
  for (std::size_t k = 0; k < o.samples; ++k) {
    auto& consumer = *consumers[k % o.consumers];
    consumer.keep_fresh(key(numbered("prop", k)));
    const bool ready = wait_for(
        [&] {
          auto r = consumer.resolve(key(numbered("prop", k)));
          return r && lists(r->instances, numbered("anchor", k)) &&
                 (k >= o.shutdown_samples || lists(r->instances, numbered("sd", k)));
        },
        patience);
    if (!ready) {
      result.problems.push_back("a dc1 consumer never resolved " + numbered("prop", k));
      return result;
    }
  }
  for (std::size_t k = 0; k < o.new_service_samples; ++k)
    consumers[k % o.consumers]->keep_fresh(key(numbered("fresh", k)));
  std::this_thread::sleep_for(o.beat + o.beat / 2);  // every consumer declared its services

  std::mt19937_64 rng(42);
  std::uniform_int_distribution<Duration::rep> offset(0, o.spread.count());
  auto plan_start = [&] { return SteadyClock::now() + std::chrono::milliseconds(200); };

  progress("propagation: registrations in dc2");
  std::vector<Watch::Sample> added(o.samples), fresh(o.new_service_samples);
  {
    std::vector<Scheduled> plan;
    const auto t0 = plan_start();
    for (std::size_t k = 0; k < o.samples; ++k) {
      added[k] = change(numbered("prop", k), numbered("new", k), true);
      auto& provider = *providers[k % o.providers];
      plan.push_back({t0 + Duration{offset(rng)}, &added[k], [&provider, k] {
                        provider.register_instance(
                            registration(numbered("prop", k), numbered("new", k), 30'000 + k));
                      }});
    }
    for (std::size_t k = 0; k < o.new_service_samples; ++k) {
      fresh[k] = change(numbered("fresh", k), numbered("fresh", k), true);
      auto& provider = *providers[k % o.providers];
      plan.push_back({t0 + Duration{offset(rng)}, &fresh[k], [&provider, k] {
                        provider.register_instance(
                            registration(numbered("fresh", k), numbered("fresh", k), 40'000 + k));
                      }});
    }
    run_schedule(watch, plan, patience);
  }
  result.kinds.push_back(collect("registration: new instance, followed service", added, false));
  result.kinds.push_back(collect("registration: new service, consumer waiting", fresh, false));

  progress("propagation: deregister_instance in dc2");
  std::vector<Watch::Sample> removed(o.samples);
  {
    std::vector<Scheduled> plan;
    const auto t0 = plan_start();
    for (std::size_t k = 0; k < o.samples; ++k) {
      removed[k] = change(numbered("prop", k), numbered("new", k), false);
      if (!added[k].seen_at) continue;  // never arrived: nothing to remove
      auto& provider = *providers[k % o.providers];
      plan.push_back({t0 + Duration{offset(rng)}, &removed[k], [&provider, k] {
                        provider.deregister_instance(key(numbered("prop", k)), numbered("new", k));
                      }});
    }
    run_schedule(watch, plan, patience);
  }
  result.kinds.push_back(collect("deregistration: deregister_instance", removed, true));

  progress("propagation: provider shutdown in dc2");
  std::vector<Watch::Sample> stopped(o.shutdown_samples);
  {
    std::vector<Scheduled> plan;
    const auto t0 = plan_start();
    for (std::size_t k = 0; k < o.shutdown_samples; ++k) {
      stopped[k] = change(numbered("prop", k), numbered("sd", k), false);
      auto& stopper = *stoppers[k];
      plan.push_back({t0 + Duration{offset(rng)}, &stopped[k], [&stopper, &result, k] {
                        if (!stopper.shutdown())
                          result.problems.push_back("dc2 did not acknowledge the shutdown of " +
                                                    numbered("dc2-stopper", k));
                      }});
    }
    run_schedule(watch, plan, patience);
  }
  result.kinds.push_back(collect("deregistration: provider shutdown()", stopped, true));
  for (const auto& k : result.kinds)
    if (k.missing > 0)
      result.problems.push_back(k.name + ": " + std::to_string(k.missing) +
                                " change(s) never reached the dc1 consumer");

  watch.stop();
  progress("stopping clients and hubs");
  consumers.clear();
  providers.clear();
  stoppers.clear();
  result.seconds = bench::seconds_since(started);
  return result;
}

// ---------------------------------------------------------------- report

void print_loopback(const Options& o, const LoopbackResult& r) {
  const double beat_ms = static_cast<double>(o.beat.count());
  std::printf(
      "\n[1] propagation dc2 -> L2 -> dc1 consumer (3 in-process HubServers on tcp loopback, "
      "agent::Client, beats %.0f ms +-10%%, leases %.0f ms; changes at random moments within %.0f "
      "s)\n",
      beat_ms, 3 * beat_ms, static_cast<double>(o.spread.count()) / 1000);
  std::printf("%-46s %7s %8s %8s %8s %8s %10s %11s %11s\n", "change made in dc2", "samples",
              "p50_ms", "p99_ms", "max_ms", "mean_ms", "<=2 beats", "L2_p50_ms", "L2_p99_ms");
  for (auto k : r.kinds) {
    const auto within = static_cast<std::size_t>(
        std::count_if(k.ms.begin(), k.ms.end(), [&](double v) { return v <= 2 * beat_ms; }));
    const auto p = bench::percentiles(k.ms);
    const auto up = bench::percentiles(k.upper_ms);
    std::printf("%-46s %7zu %8.0f %8.0f %8.0f %8.0f %9.1f%% %11.0f %11.0f\n", k.name.c_str(),
                p.count, p.p50, p.p99, p.max, p.mean,
                p.count ? 100.0 * static_cast<double>(within) / static_cast<double>(p.count) : 0,
                up.p50, up.p99);
  }
  std::printf(
      "L2_*: the same changes seen in the L2's answers (polled every ~2 ms): the hop dc2 -> L2\n");
  std::printf(
      "\n[2] resolve at the dc1 L1: raw DEALER, Query, one in flight, services of %zu instances\n",
      o.instances_per_service);
  std::printf("%-34s %8s %8s %8s %8s %8s\n", "kind", "queries", "p50_us", "p99_us", "max_us",
              "mean_us");
  auto row = [](const char* name, const Percentiles& p) {
    std::printf("%-34s %8zu %8.0f %8.0f %8.0f %8.0f\n", name, p.count, p.p50, p.p99, p.max, p.mean);
  };
  row("same tier (dc1 service, local)", r.same_tier_us);
  row("cross-tier warm (L1 cache hit)", r.warm_us);
  row("cross-tier cold (L1 miss -> L2)", r.cold_us);
  std::string sources;
  for (const auto& [source, n] : r.warm_sources)
    sources += (sources.empty() ? "" : ", ") + source + " " + std::to_string(n);
  std::printf("warm answers by source: %s; steps [1]+[2] took %.0f s\n", sources.c_str(),
              r.seconds);
  std::fflush(stdout);
}

void print_load(const Options& o, const bench::LoadResult& tiered, const bench::LoadResult& flat) {
  const auto& c = o.load_config;
  const double beat_s = std::chrono::duration<double>(c.beat).count();
  const double scale = static_cast<double>(tiered.instances) / static_cast<double>(flat.agents);
  std::printf(
      "\n[3] load on the upper tier, virtual clock (HubCore/AgentCore, codec bytes): %zu L1 x %zu "
      "agents x %zu instances = %s instances, %zu services per L1, %zu cross-tier uses per L1; "
      "beats %.1f s +-10%%; churn %.2f%% of instances replaced per minute\n",
      c.l1_hubs, c.agents_per_hub, c.instances_per_agent,
      si(static_cast<double>(tiered.instances)).c_str(), c.services_per_hub, c.cross_tier_uses,
      beat_s, c.churn_per_minute * 100);
  std::printf(
      "flat: %s agents (one instance each) beat to one registry; measured with %s agents "
      "and scaled x%.0f\n",
      si(static_cast<double>(tiered.instances)).c_str(),
      si(static_cast<double>(flat.agents)).c_str(), scale);
  auto row = [&](const std::string& who, const char* phase, const bench::LoadPhase& p, double k) {
    const double msgs = static_cast<double>(p.traffic.messages());
    std::printf("%-30s %-7s %11s %11s %12s %12s %9.0f %10s %s\n", who.c_str(), phase,
                si(p.per_interval(c.beat) * k).c_str(), si(p.per_second() * k).c_str(),
                si(p.bytes_in_per_second() * k).c_str(), si(p.bytes_out_per_second() * k).c_str(),
                msgs > 0 ? static_cast<double>(p.traffic.bytes_in) / msgs : 0,
                si(static_cast<double>(p.changes) / p.seconds * k).c_str(),
                (std::to_string(p.min_per_interval) + ".." + std::to_string(p.max_per_interval) +
                 (k != 1 ? " (measured)" : ""))
                    .c_str());
  };
  std::printf("%-30s %-7s %11s %11s %12s %12s %9s %10s %s\n", "receiver", "phase", "msg/interval",
              "msg/s", "bytes_in/s", "bytes_out/s", "B/msg", "changes/s", "min..max per interval");
  row("tiered: the L2", "steady", tiered.steady, 1);
  row("tiered: the L2", "churn", tiered.churn, 1);
  row("flat: the one registry", "steady", flat.steady, scale);
  row("flat: the one registry", "churn", flat.churn, scale);
  std::printf(
      "tiered L2 churn: %s beats carried changes (%s registrations and removals), %s queries; "
      "the L1s answered %s agent beats/s in steady state (%.0f B each); flat agent beat %.0f B\n",
      si(static_cast<double>(tiered.churn.traffic.carrying_sets)).c_str(),
      si(static_cast<double>(tiered.churn.traffic.registrations)).c_str(),
      si(static_cast<double>(tiered.churn.traffic.queries)).c_str(),
      si(static_cast<double>(tiered.agent_beats_at_l1) / tiered.steady.seconds).c_str(),
      tiered.agent_beat_bytes, flat.agent_beat_bytes);
  // CPU of the L2's core: thread CPU time in HubCore::handle (no sockets, no store).
  std::printf("the L2's core CPU (thread CPU time in HubCore::handle; no sockets, no SQLite):\n");
  std::printf("%-8s %9s %14s %16s %15s\n", "phase", "busy", "us/plain msg", "us/change msg",
              "max_us/msg");
  auto cpu = [](const char* phase, const bench::LoadPhase& p) {
    const auto& t = p.traffic;
    const auto plain = t.messages() - t.carrying_sets;
    char change[32] = "-";
    if (t.carrying_sets > 0)
      std::snprintf(
          change, sizeof change, "%.0f",
          static_cast<double>(t.handle_ns_sets) / 1e3 / static_cast<double>(t.carrying_sets));
    std::printf("%-8s %8.2f%% %14.1f %16s %15.0f\n", phase,
                100.0 * static_cast<double>(t.handle_ns) / 1e9 / p.seconds,
                plain > 0 ? static_cast<double>(t.handle_ns - t.handle_ns_sets) / 1e3 /
                                static_cast<double>(plain)
                          : 0.0,
                change, static_cast<double>(t.handle_ns_max) / 1e3);
  };
  cpu("warm-up", tiered.warmup);
  cpu("steady", tiered.steady);
  cpu("churn", tiered.churn);
  const auto& w = tiered.warmup.traffic;
  std::printf(
      "tiered warm-up (every agent registers within the first interval): the L2 held all %s "
      "instances after %.0f virtual s, having received %s messages (%s B, %s registrations) and "
      "spent %.1f s in HubCore::handle\n",
      si(static_cast<double>(tiered.instances)).c_str(), tiered.warmup_seconds,
      si(static_cast<double>(w.messages())).c_str(), si(static_cast<double>(w.bytes_in)).c_str(),
      si(static_cast<double>(w.registrations)).c_str(), static_cast<double>(w.handle_ns) / 1e9);
  std::printf("wall time: tiered %.0f s (churn phase %.0f s), flat %.0f s\n", tiered.wall_seconds,
              tiered.churn_wall_seconds, flat.wall_seconds);
  std::fflush(stdout);
}

int run(const Options& o) {
  const auto started = SteadyClock::now();
  std::printf("cascade_tier_bench%s: %u cores (%s), beat %lld ms, lease %lld ms\n",
              o.quick ? " --quick" : "", std::thread::hardware_concurrency(),
              bench::cpu_model().c_str(), static_cast<long long>(o.beat.count()),
              static_cast<long long>(3 * o.beat.count()));
  std::printf("load average at start: %s (other work on the machine skews every timing)\n",
              bench::load_average().c_str());
  std::fflush(stdout);

  std::vector<std::string> problems;
  std::optional<LoopbackResult> loopback;
  if (o.loopback) {
    loopback = run_loopback(o);
    problems.insert(problems.end(), loopback->problems.begin(), loopback->problems.end());
    print_loopback(o, *loopback);
    std::printf("load average after steps 1-2: %s\n", bench::load_average().c_str());
  }
  std::optional<bench::LoadResult> tiered, flat;
  if (o.load) {
    progress("load: tiered deployment on the virtual clock");
    tiered = bench::run_tiered_load(o.load_config);
    progress("load: flat fleet on the virtual clock");
    flat = bench::run_flat_load(o.load_config);
    problems.insert(problems.end(), tiered->problems.begin(), tiered->problems.end());
    problems.insert(problems.end(), flat->problems.begin(), flat->problems.end());
    if (tiered->problems.empty() && flat->problems.empty()) print_load(o, *tiered, *flat);
  }

  if (!o.quick) {
    std::printf("\ntargets:\n");
    bench::Verdicts v;
    char what[300];
    if (loopback) {
      const auto& w = loopback->warm_us;
      std::snprintf(what, sizeof what,
                    "warm cross-tier resolve p99 %.0f us (target <= %.0f us; same tier p99 %.0f "
                    "us, p50 %.0f vs %.0f us)",
                    w.p99, kTargetWarmP99Us, loopback->same_tier_us.p99, w.p50,
                    loopback->same_tier_us.p50);
      v.line(w.p99 <= kTargetWarmP99Us, what);
      const double bound = static_cast<double>(kTargetBeatsForDeregistration * o.beat.count());
      for (auto k : loopback->kinds) {
        if (!k.deregistration) continue;
        const auto p = bench::percentiles(k.ms);
        std::snprintf(what, sizeof what,
                      "%s visible in dc1: max %.0f ms, p99 %.0f ms (target: every sample <= "
                      "%.0f ms = %d beats)",
                      k.name.c_str(), p.max, p.p99, bound, kTargetBeatsForDeregistration);
        v.line(k.missing == 0 && p.max <= bound, what);
      }
    }
    if (tiered && tiered->problems.empty()) {
      const double per_hub =
          tiered->steady.per_interval(o.beat) / static_cast<double>(tiered->hubs);
      std::snprintf(what, sizeof what,
                    "L2 receives %.2f messages per L1 hub per interval in steady state (%zu L1s, "
                    "%s instances; target O(L1 hubs): <= %.2f per hub)",
                    per_hub, tiered->hubs, si(static_cast<double>(tiered->instances)).c_str(),
                    kTargetMessagesPerHubPerInterval);
      v.line(per_hub <= kTargetMessagesPerHubPerInterval, what);
    }
    std::printf("%d target(s) missed\n", v.misses);
  }
  for (const auto& p : problems)
    std::printf("CHECK FAILED: %s\n", p.c_str());
  std::printf("%s; total run %.0f s; load average at end: %s\n",
              problems.empty() ? "all answers and propagations checked" : "checks FAILED",
              bench::seconds_since(started), bench::load_average().c_str());
  return problems.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_tier_bench", "tier-bench",
                                             parse_options, run);
}
