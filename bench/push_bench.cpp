// cascade_push_bench: how fast a change of a service's list reaches every
// consumer that follows it, in the datacenter where it happened and in
// another one (docs/benchmarks.md, "Pushes").
//
// Three real HubServers on their own threads over tcp loopback
// (bench::TwoTierHubs: an L2 and two L1s, dc1 and dc2, SQLite in a temp
// directory), with the hubs' defaults: beats 2 s +-10%, lease 6 s, push
// coalescing 5 ms, uplink change delay 20 ms, eviction protection on.
// Providers beat to dc2, one AgentCore per instance driven by one thread
// (bench/fast_fail_fleet.hpp): --services services of --anchors instances
// that never change, one "changer" agent per trial and one "mortal" per
// expiry trial. --consumers AgentCores (another driver thread, a DEALER
// each) keep every service fresh. Cases:
//   same tier: the consumers beat to dc2, the hub holding the providers;
//   cross tier: they beat to dc1, which follows the services at the L2.
// Kinds, --samples trials each, one at a time with a random gap:
//   registration: a changer adds an instance (AgentCore::add_registration);
//   deregistration: it removes it again (remove_registration);
//   new service: a changer registers the first instance of a service the
//     consumers have been waiting for (pinned, never registered before);
//   expiry: a mortal is silenced (kill -9: no Deregister) at random moments
//     --gap-ms apart, its trials overlapping; dc2 expires it when its lease
//     runs out, taken as the mortal's last beat sent plus the lease.
// A trial's latency runs from the change (for an expiry, the lease's end) to
// the last consumer applying it ("all"); "each" is every consumer's own.
//
// Checks: every trial reaches every consumer within its patience; nothing the
// fleets received failed to decode. A failed check exits 1; a target MISS is
// a result. --quick (ctest push_bench_quick) uses small sizes and judges no
// timing.

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/fast_fail_fleet.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/bench/last_beats.hpp"
#include "cascade/bench/mass_change.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_config.hpp"

namespace {

using namespace cascade;
using bench::AgentFleet;
using bench::FleetAgent;
using bench::SteadyTime;
using SteadyClock = std::chrono::steady_clock;

// Targets (issue 16, section 2): p99 until every consumer holds the change.
constexpr double kTargetSameTierP99Ms = 100;
constexpr double kTargetCrossTierP99Ms = 250;
constexpr Duration kLease{6000};  // the hubs' default: three 2 s beats
constexpr auto kTrialPatience = std::chrono::seconds(10);

struct Options {
  std::size_t consumers = 1000;
  std::size_t services = 20;
  std::size_t anchors = 14;  // per service: one expiry stays under eviction protection's caps
  std::size_t samples = 20;  // per kind and case, <= services
  Duration gap{300};         // between trials, +-50%
  bool mass = true;
  bench::MassChangeOptions mass_change{};
  bool quick = false;
};

constexpr const char* kUsage =
    R"(cascade_push_bench: a change of a list at every consumer, same tier and across tiers

  --consumers N   consumers following every service, per case (default 1000)
  --services N    services the consumers follow (default 20)
  --anchors N     instances per service that never change (default 14)
  --samples N     trials per kind and case (default 20; <= --services)
  --gap-ms MS     between trials, +-50% (default 300)
  --mass-instances N  the mass change: instances of its one service (default 5000)
  --mass-consumers N  the mass change: consumers following it (default 1000)
  --no-mass       skip the mass change (a tenth of the service killed at once)
  --quick         smoke test: small sizes; checks every change, judges no timing
)";

Options parse_options(int argc, char** argv) {
  auto o = bench::parse_flags<Options>(argc, argv, kUsage, [](bench::Flags& f, Options& opt) {
    f.first("--quick", [&opt] {
      opt.quick = true;
      opt.consumers = 20;
      opt.services = 3;
      opt.anchors = 12;  // two expiries per service stay under the guard's 20% caps
      opt.samples = 3;
      opt.mass_change.instances = 200;
      opt.mass_change.consumers = 20;
      opt.mass_change.baseline = Duration{1000};
    });
    f.add({{"--consumers", &opt.consumers},
           {"--services", &opt.services},
           {"--anchors", &opt.anchors},
           {"--samples", &opt.samples},
           {"--gap-ms", &opt.gap},
           {"--mass-instances", &opt.mass_change.instances},
           {"--mass-consumers", &opt.mass_change.consumers},
           {"--no-mass", &opt.mass}});
  });
  if (o.samples > o.services)
    throw std::invalid_argument("--samples cannot exceed --services (one expiry per service)");
  return o;
}

void progress(const std::string& what) {
  bench::progress("push-bench", what);
}

proto::ServiceKey service_key(std::size_t s) {
  return proto::ServiceKey{"fan-" + std::to_string(s), std::string(proto::kDefaultGroup)};
}

// What trial k of a case's "new service" kind registers, and the consumers wait for.
proto::ServiceKey waited_key(std::size_t case_index, std::size_t k) {
  return proto::ServiceKey{"awaited-" + std::to_string(case_index) + "-" + std::to_string(k),
                           std::string(proto::kDefaultGroup)};
}

proto::Registration registration(const proto::ServiceKey& service, const std::string& id,
                                 std::size_t n) {
  proto::Registration r;
  r.service = service;
  r.instance.id = id;
  r.instance.address = bench::address(n, 8080);
  r.instance.zone = "dc2";
  return r;
}

double ms_between(SteadyTime a, SteadyTime b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

// ---------------------------------------------------------------- providers

// Where each provider agent sits in the providers' fleet.
struct ProviderLayout {
  std::size_t changers = 0;  // first changer (then one per trial)
  std::size_t mortals = 0;   // first mortal (then samples per case)
  std::size_t size = 0;
};

std::vector<FleetAgent> providers(const Options& o, std::size_t cases, ProviderLayout& layout) {
  std::vector<FleetAgent> out;
  std::uint64_t epoch = 1;
  std::size_t n = 0;
  auto add = [&](const std::string& id, std::optional<proto::Registration> reg) {
    FleetAgent a;
    a.config = bench::default_agent_config(id, epoch++);
    if (reg) a.registrations.push_back(std::move(*reg));
    out.push_back(std::move(a));
  };
  for (std::size_t s = 0; s < o.services; ++s)
    for (std::size_t j = 0; j < o.anchors; ++j, ++n) {
      const auto id = "anchor-" + std::to_string(s) + "-" + std::to_string(j);
      add(id, registration(service_key(s), id, n));
    }
  layout.changers = out.size();
  for (std::size_t k = 0; k < o.samples; ++k)
    add("changer-" + std::to_string(k), std::nullopt);
  layout.mortals = out.size();
  for (std::size_t c = 0; c < cases; ++c)
    for (std::size_t k = 0; k < o.samples; ++k, ++n) {
      const auto id = "mortal-" + std::to_string(c) + "-" + std::to_string(k);
      add(id, registration(service_key(k % o.services), id, n));
    }
  layout.size = out.size();
  return out;
}

// ---------------------------------------------------------------- consumers

// Conditions on the consumers' caches ("instance X listed in service S", or
// not), each met when every consumer's cache shows it.
class ListWatch : public bench::FleetObserver {
 public:
  struct Condition {
    proto::ServiceKey service;
    std::string id;
    bool present = true;
    std::vector<std::optional<SteadyTime>> met;  // per consumer
    std::size_t count = 0;
  };

  void attach(const AgentFleet* fleet) { fleet_ = fleet; }

  // Driver thread (inside AgentFleet::call): the condition's index.
  std::size_t arm(proto::ServiceKey service, std::string id, bool present) {
    std::lock_guard lock(mu_);
    conditions_.push_back({std::move(service), std::move(id), present, {}, 0});
    conditions_.back().met.assign(fleet_->size(), std::nullopt);
    return conditions_.size() - 1;
  }

  void on_changed(std::size_t agent, const proto::ServiceKey& service, SteadyTime at) override {
    std::lock_guard lock(mu_);
    for (auto& c : conditions_) {
      if (c.count == c.met.size() || c.met[agent] || c.service != service) continue;
      const auto held = fleet_->core(agent).peek(clock_.now(), 0, service);
      const bool listed = held && std::any_of(held->instances.begin(), held->instances.end(),
                                              [&](const auto& in) { return in.id == c.id; });
      if (listed != c.present) continue;
      c.met[agent] = at;
      if (++c.count == c.met.size()) cv_.notify_all();
    }
  }

  // True when conditions [first, last) were all met before `deadline`.
  bool wait(std::size_t first, std::size_t last, SteadyTime deadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, deadline, [&] {
      for (std::size_t i = first; i < last; ++i)
        if (conditions_[i].count < conditions_[i].met.size()) return false;
      return true;
    });
  }
  Condition condition(std::size_t index) {
    std::lock_guard lock(mu_);
    return conditions_[index];
  }

 private:
  const AgentFleet* fleet_ = nullptr;
  SystemClock clock_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<Condition> conditions_;
};

// Every consumer holds every service with its anchors.
bool consumers_ready(AgentFleet& fleet, const Options& o) {
  bool ready = true;
  fleet.call([&](AgentFleet::Access& a) {
    for (std::size_t k = 0; ready && k < a.size(); ++k)
      for (std::size_t s = 0; ready && s < o.services; ++s) {
        const auto held = a.core(k).peek(a.now(), 0, service_key(s));
        ready = held && held->instances.size() >= o.anchors;
      }
  });
  return ready;
}

// ---------------------------------------------------------------- trials

struct KindResult {
  std::string kind;
  std::vector<double> all_ms;   // per trial: until the last consumer
  std::vector<double> each_ms;  // per trial and consumer
  std::size_t missed = 0;       // trials not seen by every consumer in time
};

void add_trial(KindResult& r, const ListWatch::Condition& c, SteadyTime changed) {
  if (c.count < c.met.size()) {
    ++r.missed;
    return;
  }
  SteadyTime last = changed;
  for (const auto& at : c.met) {
    r.each_ms.push_back(std::max(0.0, ms_between(changed, *at)));
    last = std::max(last, *at);
  }
  r.all_ms.push_back(ms_between(changed, last));
}

class CaseRun {
 public:
  CaseRun(const Options& o, AgentFleet& providers, bench::LastBeats& beats,
          const ProviderLayout& layout, AgentFleet& consumers, ListWatch& watch,
          std::size_t case_index)
      : o_(o),
        providers_(providers),
        beats_(beats),
        layout_(layout),
        consumers_(consumers),
        watch_(watch),
        case_(case_index),
        rng_(42 + case_index) {}

  // One instance added, then removed, per trial, by trial k's changer.
  KindResult changes(bool add) {
    KindResult r{add ? "registration" : "deregistration", {}, {}, 0};
    for (std::size_t k = 0; k < o_.samples; ++k) {
      const auto s = k % o_.services;
      const auto id = "new-" + std::to_string(case_) + "-" + std::to_string(k);
      std::size_t index = 0;
      consumers_.call([&](AgentFleet::Access&) { index = watch_.arm(service_key(s), id, add); });
      SteadyTime changed{};
      providers_.call([&](AgentFleet::Access& a) {
        changed = SteadyClock::now();
        auto& core = a.core(layout_.changers + k);
        if (add)
          core.add_registration(a.now(), registration(service_key(s), id, 100'000 + k));
        else
          core.remove_registration(a.now(), service_key(s), id);
      });
      watch_.wait(index, index + 1, SteadyClock::now() + kTrialPatience);
      add_trial(r, watch_.condition(index), changed);
      pause();
    }
    return r;
  }

  // Trial k's changer registers the first instance of a service every
  // consumer has been declaring (pinned) since it started.
  KindResult first_registrations() {
    KindResult r{"new service", {}, {}, 0};
    for (std::size_t k = 0; k < o_.samples; ++k) {
      const auto service = waited_key(case_, k);
      const auto id = "first-" + std::to_string(case_) + "-" + std::to_string(k);
      std::size_t index = 0;
      consumers_.call([&](AgentFleet::Access&) { index = watch_.arm(service, id, true); });
      SteadyTime changed{};
      providers_.call([&](AgentFleet::Access& a) {
        changed = SteadyClock::now();
        a.core(layout_.changers + k)
            .add_registration(a.now(), registration(service, id, 200'000 + k));
      });
      watch_.wait(index, index + 1, SteadyClock::now() + kTrialPatience);
      add_trial(r, watch_.condition(index), changed);
      pause();
    }
    return r;
  }

  // The case's mortals silenced one by one; their expiries overlap.
  KindResult expiries() {
    KindResult r{"expiry", {}, {}, 0};
    std::vector<std::pair<std::size_t, std::size_t>> armed;  // condition, mortal
    for (std::size_t k = 0; k < o_.samples; ++k) {
      const auto mortal = layout_.mortals + case_ * o_.samples + k;
      const auto id = "mortal-" + std::to_string(case_) + "-" + std::to_string(k);
      std::size_t index = 0;
      consumers_.call([&](AgentFleet::Access&) {
        index = watch_.arm(service_key(k % o_.services), id, false);
      });
      providers_.call([&](AgentFleet::Access& a) { a.silence(mortal); });
      armed.emplace_back(index, mortal);
      pause();
    }
    watch_.wait(armed.front().first, armed.back().first + 1,
                SteadyClock::now() + kLease + kTrialPatience);
    for (const auto& [index, mortal] : armed)
      add_trial(r, watch_.condition(index), beats_.last_beat(mortal) + kLease);
    return r;
  }

 private:
  void pause() {
    std::uniform_int_distribution<Duration::rep> gap(o_.gap.count() / 2, o_.gap.count() * 3 / 2);
    std::this_thread::sleep_for(Duration{gap(rng_)});
  }

  const Options& o_;
  AgentFleet& providers_;
  bench::LastBeats& beats_;
  const ProviderLayout& layout_;
  AgentFleet& consumers_;
  ListWatch& watch_;
  std::size_t case_;
  std::mt19937_64 rng_;
};

struct CaseResult {
  std::string name;
  double target_ms = 0;
  std::vector<KindResult> kinds;
  std::uint64_t pushes_received = 0;
  std::uint64_t decode_failures = 0;
};

CaseResult run_case(const Options& o, const bench::InProcessHub& home, bool cross,
                    AgentFleet& providers, bench::LastBeats& beats, const ProviderLayout& layout,
                    std::size_t case_index, std::vector<std::string>& problems) {
  CaseResult result;
  result.name = cross ? "cross tier (consumers on dc1)" : "same tier (consumers on dc2)";
  result.target_ms = cross ? kTargetCrossTierP99Ms : kTargetSameTierP99Ms;
  progress(result.name + ": starting " + std::to_string(o.consumers) + " consumers");
  std::vector<FleetAgent> specs;
  for (std::size_t k = 0; k < o.consumers; ++k) {
    FleetAgent a;
    a.config = bench::default_agent_config(
        "consumer-" + std::to_string(case_index) + "-" + std::to_string(k), k + 1);
    for (std::size_t s = 0; s < o.services; ++s)
      a.pinned.push_back(service_key(s));
    for (std::size_t t = 0; t < o.samples; ++t)
      a.pinned.push_back(waited_key(case_index, t));
    specs.push_back(std::move(a));
  }
  ListWatch watch;
  bench::FleetConfig config{.name = "consumers",
                            .endpoint = home.endpoint(),
                            .start_spread = Duration{2000},
                            .seed = 7 + case_index};
  AgentFleet consumers(config, std::move(specs), &watch);
  watch.attach(&consumers);
  const auto deadline = SteadyClock::now() + std::chrono::seconds(60);
  while (!consumers_ready(consumers, o)) {
    if (SteadyClock::now() > deadline) {
      problems.push_back(result.name + ": the consumers never held every service");
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const auto pushes_before = consumers.counters().pushes_received;
  CaseRun run(o, providers, beats, layout, consumers, watch, case_index);
  progress(result.name + ": registrations and deregistrations");
  result.kinds.push_back(run.changes(true));
  result.kinds.push_back(run.changes(false));
  progress(result.name + ": first registrations of awaited services");
  result.kinds.push_back(run.first_registrations());
  progress(result.name + ": expiries");
  result.kinds.push_back(run.expiries());
  const auto counters = consumers.counters();
  result.pushes_received = counters.pushes_received - pushes_before;
  result.decode_failures = counters.decode_failures;
  for (const auto& k : result.kinds)
    if (k.missed > 0)
      problems.push_back(result.name + ", " + k.kind + ": " + std::to_string(k.missed) +
                         " trial(s) not seen by every consumer in time");
  if (counters.decode_failures > 0) problems.push_back(result.name + ": frames failed to decode");
  return result;
}

// ---------------------------------------------------------------- report

void print_case(const Options& o, const CaseResult& c) {
  std::printf(
      "\n%s: %zu consumers following %zu services of %zu+ instances; %llu pushes received\n",
      c.name.c_str(), o.consumers, o.services, o.anchors,
      static_cast<unsigned long long>(c.pushes_received));
  std::printf("%-16s %7s %10s %10s %10s %11s %11s\n", "change", "trials", "all_p50_ms",
              "all_p99_ms", "all_max_ms", "each_p50_ms", "each_p99_ms");
  for (auto k : c.kinds) {
    const auto all = bench::percentiles(k.all_ms);
    const auto each = bench::percentiles(k.each_ms);
    std::printf("%-16s %7zu %10.1f %10.1f %10.1f %11.1f %11.1f\n", k.kind.c_str(), all.count,
                all.p50, all.p99, all.max, each.p50, each.p99);
  }
}

constexpr double kTargetBeatP99DuringMassMs = 5;

void print_mass(const Options& o, const bench::MassChangeResult& m) {
  const auto& b = m.beat_rtt_before_ms;
  const auto& d = m.beat_rtt_during_ms;
  std::printf(
      "\nmass change at one hub: a service of %zu instances followed by %zu consumers; %zu "
      "providers killed at once, their leases ending within %.2f s\n",
      o.mass_change.instances, o.mass_change.consumers, m.killed, m.expiry_spread_s);
  std::printf(
      "pushes: %llu sent over %.2f s, busiest second %.0f (cap %u/s); %llu over the cap, "
      "%llu held by the notify switch: those consumers learn at their next beat\n",
      static_cast<unsigned long long>(m.pushes), m.push_seconds, m.peak_pushes_per_s, m.push_cap,
      static_cast<unsigned long long>(m.pushes_over_rate),
      static_cast<unsigned long long>(m.pushes_by_switch));
  std::printf("updates sent meanwhile: %llu whole lists, %llu deltas\n",
              static_cast<unsigned long long>(m.updates_full),
              static_cast<unsigned long long>(m.updates_delta));
  std::printf(
      "consumer beats answered: steady p50 %.2f p99 %.2f max %.2f ms (%zu); during the "
      "change p50 %.2f p99 %.2f max %.2f ms (%zu)\n",
      b.p50, b.p99, b.max, b.count, d.p50, d.p99, d.max, d.count);
  const auto& hb = m.hub_rtt_before_ms;
  const auto& hd = m.hub_rtt_during_ms;
  std::printf(
      "hub answers to a prober of its own (a query every 5 ms): steady p50 %.2f p99 %.2f max "
      "%.2f ms (%zu); during the change p50 %.2f p99 %.2f max %.2f ms (%zu); %zu unanswered\n",
      hb.p50, hb.p99, hb.max, hb.count, hd.p50, hd.p99, hd.max, hd.count, m.hub_probes_unanswered);
  std::printf(
      "the last consumer held the list without the killed %.2f s after the last lease "
      "ended\n",
      m.last_consumer_after_last_expiry_s);
}

// The hub's token bucket lets a full second's worth out at once, then the rate.
void check_mass(const bench::MassChangeResult& m, std::vector<std::string>& problems) {
  const double allowed = m.push_cap * (m.push_seconds + 1);
  if (static_cast<double>(m.pushes) > allowed)
    problems.push_back("mass change: " + std::to_string(m.pushes) + " pushes in " +
                       std::to_string(m.push_seconds) + " s, above the cap");
}

int judge(const Options& o, std::vector<CaseResult>& cases,
          const std::optional<bench::MassChangeResult>& mass,
          const std::vector<std::string>& problems) {
  std::printf("\ntargets (p99 until every consumer holds the change):\n");
  int misses = 0;
  for (auto& c : cases)
    for (auto& k : c.kinds) {
      const auto p = bench::percentiles(k.all_ms);
      const bool pass = p.p99 <= c.target_ms;
      misses += pass ? 0 : 1;
      std::printf("%s  %s, %s: p99 %.1f ms (target <= %.0f ms)\n",
                  o.quick ? "----" : (pass ? "PASS" : "MISS"), c.name.c_str(), k.kind.c_str(),
                  p.p99, c.target_ms);
    }
  if (mass) {
    const bool pass = mass->hub_rtt_during_ms.p99 <= kTargetBeatP99DuringMassMs;
    misses += pass ? 0 : 1;
    std::printf("%s  mass change: the hub answered the prober p99 %.2f ms (target <= %.0f ms)\n",
                o.quick ? "----" : (pass ? "PASS" : "MISS"), mass->hub_rtt_during_ms.p99,
                kTargetBeatP99DuringMassMs);
  }
  for (const auto& p : problems)
    std::printf("FAILED CHECK: %s\n", p.c_str());
  std::printf("%d target(s) missed%s; load average at end: %s\n", o.quick ? 0 : misses,
              o.quick ? " (--quick judges no timing)" : "", bench::load_average().c_str());
  return problems.empty() ? 0 : 1;
}

int run(const Options& o) {
  std::printf(
      "cascade_push_bench%s: %u cores (%s); hubs' defaults (beat 2000 ms, lease %lld ms, "
      "push delay 5 ms)\n",
      o.quick ? " --quick" : "", std::thread::hardware_concurrency(), bench::cpu_model().c_str(),
      static_cast<long long>(kLease.count()));
  std::printf("load average at start: %s\n", bench::load_average().c_str());
  std::fflush(stdout);
  bench::TwoTierHubs hubs("cascade-push-bench", [](hub::HubConfig&) {});
  ProviderLayout layout;
  auto specs = providers(o, 2, layout);
  bench::LastBeats beats(layout.size);
  progress("starting " + std::to_string(layout.size) + " providers on dc2");
  AgentFleet provider_fleet({.name = "providers", .endpoint = hubs.dc2.endpoint(), .seed = 3},
                            std::move(specs), &beats);
  std::vector<std::string> problems;
  std::vector<CaseResult> cases;
  cases.push_back(run_case(o, hubs.dc2, false, provider_fleet, beats, layout, 0, problems));
  print_case(o, cases.back());
  cases.push_back(run_case(o, hubs.dc1, true, provider_fleet, beats, layout, 1, problems));
  print_case(o, cases.back());
  std::optional<bench::MassChangeResult> mass;
  if (o.mass) {
    progress("mass change: a tenth of a large service killed at once");
    mass = bench::run_mass_change(o.mass_change, problems);
    print_mass(o, *mass);
    check_mass(*mass, problems);
  }
  return judge(o, cases, mass, problems);
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_push_bench", "push-bench",
                                             parse_options, run);
}
