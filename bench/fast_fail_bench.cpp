// cascade_fast_fail_bench: how fast a failure reported by callers takes an
// instance out of every consumer's list, and how many failure reports a hub
// absorbs while it keeps answering beats (docs/benchmarks.md, "Fast fail").
//
// Steps:
//  1. isolation reaches every consumer: three real HubServers on their own
//     threads over tcp loopback (an L2 and two L1s, dc1 and dc2, SQLite in a
//     temp directory, each with its own ZeroMQ context), the hubs' default
//     settings (beats 2 s, lease 6 s, push coalescing 5 ms, quorum of 2
//     reporters within 10 s, isolation 10 s +-10%). Providers (one AgentCore
//     per instance, --services x --instances) beat to dc1. --consumers
//     AgentCores keep every service of their case fresh; one driver thread
//     runs them all, each over its own DEALER (bench/fast_fail_fleet.hpp).
//     A trial: two of the consumers call AgentCore::report_failure on one
//     provider's address (the default quorum); it ends when every consumer's
//     cache shows that instance with health isolated. The latency runs from
//     the first report_failure call (so it includes the agent's 5 ms report
//     batching) to the last consumer applying the change. Trials start at
//     random moments (--gap-min-ms..--gap-max-ms after the previous one), each
//     on another provider; a service's next trial waits until its earlier
//     isolations were readmitted at every consumer, so the per-service cap
//     never holds one back. Cases:
//       same tier: consumers on dc1, the L1 that holds the providers;
//       cross tier: consumers on dc2; the reports travel dc2 -> L2 -> dc1,
//       the isolation dc1 -> L2 (uplink delta) -> dc2 (push) -> consumers.
//  2. report flood: one L1 HubServer; --flood-agents AgentCores (sharing
//     --flood-sockets DEALERs) each register --flood-instances instances and
//     keep --flood-uses services fresh, beating every 2 s. Once they beat
//     steadily, a sender thread floods the hub with FailureReports (one signal
//     each, fire and forget, as agents send them) from --flood-senders
//     DEALERs at increasing rates: "noise" about the first --flood-pool
//     addresses in turn, one fixed caller per address (below the quorum
//     while rate x 10 s < 5 x pool), and a --quorum-share of pairs from two
//     callers about one address, which isolate it. Per rate: reports/s the
//     hub handled (its failure_signals counter), how long the backlog took to
//     drain, and the round trip of every beat sent meanwhile, against a step
//     without flood. Then (--beyond) the hub's isolation tracker is filled to
//     its bound with registered addresses it has not seen, and --beyond more
//     such reports are sent at --beyond-rate: what one report costs the hub
//     once the tracker is full.
//
// Checks: every trial's isolation reaches every consumer, and every isolation
// is readmitted at every consumer afterwards; dc1 isolated exactly once per
// trial and capped none; nothing the fleets received failed to decode or went
// astray; the flood's agents reached steady beats; every flood report sent
// was handled within 60 s. A failed check exits 1; a target MISS is a result
// (the flood has no target). --quick (ctest fast_fail_bench_quick) uses small
// sizes and 1 s isolations and judges no timing.
//
// The consumers' side runs on the same two cores as the hubs: its driver
// thread and ZeroMQ I/O thread are on the measured path. Step 1 prints the
// CPU every party used during the trials' windows, so the hubs' share of a
// latency can be told from the benchmark's.

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/fast_fail_fleet.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/bench/thread_cpu.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_config.hpp"

namespace {

using namespace cascade;
using bench::AgentFleet;
using bench::FleetAgent;
using bench::FleetConfig;
using bench::HubProbe;
using bench::InProcessHub;
using bench::Percentiles;
using bench::si;
using bench::SteadyTime;
using SteadyClock = std::chrono::steady_clock;

// Targets (the issue): an isolation visible at every consumer of the service.
constexpr double kTargetSameTierP99Ms = 100;
constexpr double kTargetCrossTierP99Ms = 250;
// A flood rate is "absorbed" when this share of it is handled within the
// window and the rest within kMaxDrainS after it.
constexpr double kHandledShare = 0.95;
constexpr double kMaxDrainS = 1;

constexpr Duration kBeat{2000};  // the agents' and hubs' default beat interval
constexpr auto kTrialPatience = std::chrono::seconds(10);
constexpr double kSlowTrialMs = 300;  // a trial this slow is described on stderr
constexpr auto kReadyPatience = std::chrono::seconds(60);

// ---------------------------------------------------------------- options

struct Options {
  // [1] isolation reaches every consumer
  std::size_t consumers = 1000;
  std::size_t trials = 100;    // per case
  std::size_t services = 20;   // per case
  std::size_t instances = 6;   // per service, one provider each
  Duration isolation_base{0};  // 0: the hub's default
  Duration gap_min{200};
  Duration gap_max{700};
  Duration report_gap{0};  // between the first and the second reporter
  bool same_tier = true;
  bool cross_tier = true;
  // [2] report flood
  bool flood = true;
  std::size_t flood_agents = 5000;
  std::size_t flood_instances = 24;  // per agent
  std::size_t flood_services = 1000;
  std::size_t flood_uses = 2;  // services each agent keeps fresh
  std::size_t flood_sockets = 100;
  std::size_t flood_senders = 8;
  std::size_t flood_reporters = 20'000;
  double quorum_share = 0.01;
  std::vector<double> rates{1000, 2000, 5000, 10'000, 20'000, 50'000, 100'000};
  Duration step{5000};
  std::size_t flood_pool = 80'000;  // addresses the ascending rates report (the rest stay fresh)
  std::size_t beyond = 200;         // reports about fresh addresses once the tracker is full
  double beyond_rate = 100;
  bool quick = false;
};

constexpr const char* kUsage =
    R"(cascade_fast_fail_bench: isolation latency to every consumer, and report throughput

  [1] isolation visible at every consumer (L2 + dc1 + dc2 on tcp loopback, hub defaults)
  --consumers N           consumer AgentCores per case (default 1000)
  --trials N              isolations per case (default 100)
  --services N            services per case (default 20)
  --instances N           instances (providers) per service (default 6)
  --isolation-base-ms MS  the hubs' first isolation time (default: the hub's, 10000)
  --gap-min-ms MS         pause after a trial, at least (default 200)
  --gap-max-ms MS         ... at most (default 700)
  --report-gap-ms MS      the second reporter reports this long after the first (default 0)
  --no-same-tier          skip the same-tier case
  --no-cross-tier         skip the cross-tier case
  [2] report flood at one L1 hub while agents beat
  --flood-agents N        beating agents (default 5000; they start within agents x 2 ms)
  --flood-instances N     instances per agent (default 24)
  --flood-services N      services the instances spread over (default 1000)
  --flood-uses N          services each agent keeps fresh (default 2)
  --flood-sockets N       DEALERs the agents share (default 100)
  --flood-senders N       DEALERs the reports come from (default 8)
  --flood-reporters N     distinct caller ids in the reports (default 20000)
  --quorum-share F        share of reports sent as pairs that reach the quorum (default 0.01)
  --rates LIST            offered reports/s per step, ascending (default
                          1000,2000,5000,10000,20000,50000,100000)
  --step-s S              seconds per rate (default 5)
  --flood-pool N          addresses the rates report about, in turn (default 80000)
  --beyond N              then: fill the hub's isolation tracker to its bound (100000 instances)
                          with other registered addresses, and send N reports about yet others
                          (default 200; 0: skip)
  --beyond-rate R         ... at R reports/s (default 100)
  --no-flood              skip step 2
  --quick                 smoke test: small sizes, 1 s isolations; checks everything, judges no timing
)";

std::vector<double> parse_rates(const std::string& flag, const std::string& text) {
  std::vector<double> out;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    const double v = bench::parse_number(flag, item, true);
    if (v <= 0 || (!out.empty() && v <= out.back()))
      throw std::invalid_argument(flag + " needs positive rates in ascending order");
    out.push_back(v);
  }
  if (out.empty()) throw std::invalid_argument(flag + " needs at least one rate");
  return out;
}

void apply_quick(Options& o) {
  o.quick = true;
  o.consumers = 50;
  o.trials = 6;
  o.services = 3;
  o.instances = 4;
  o.isolation_base = Duration{1000};
  o.gap_min = Duration{50};
  o.gap_max = Duration{150};
  o.flood_agents = 200;
  o.flood_instances = 5;
  o.flood_services = 50;
  o.flood_sockets = 10;
  o.flood_senders = 2;
  o.flood_reporters = 500;
  o.rates = {500, 2000};
  o.step = Duration{1000};
  o.flood_pool = 800;
  o.beyond = 0;  // the tracker's bound (100,000 instances) is far above the quick fleet
}

void declare_flags(bench::Flags& f, Options& o) {
  f.first("--quick", [&o] { apply_quick(o); });
  f.add({
      {"--consumers", &o.consumers},
      {"--trials", &o.trials},
      {"--services", &o.services},
      {"--instances", &o.instances},
      {"--isolation-base-ms", &o.isolation_base},
      {"--gap-min-ms", &o.gap_min, bench::kZeroOk},
      {"--gap-max-ms", &o.gap_max, bench::kZeroOk},
      {"--report-gap-ms", &o.report_gap, bench::kZeroOk},
      {"--no-same-tier", &o.same_tier},
      {"--no-cross-tier", &o.cross_tier},
      {"--flood-agents", &o.flood_agents},
      {"--flood-instances", &o.flood_instances},
      {"--flood-services", &o.flood_services},
      {"--flood-uses", &o.flood_uses, bench::kZeroOk},
      {"--flood-sockets", &o.flood_sockets},
      {"--flood-senders", &o.flood_senders},
      {"--flood-reporters", &o.flood_reporters},
      {"--quorum-share", &o.quorum_share, bench::kZeroOk},
      {"--step-s", &o.step, bench::kZeroOk},
      {"--flood-pool", &o.flood_pool},
      {"--beyond", &o.beyond, bench::kZeroOk},
      {"--no-flood", &o.flood},
  });
  f.on_value("--rates", [&o](const std::string& flag, const std::string& v) {
    o.rates = parse_rates(flag, v);
  });
  f.on_value("--beyond-rate", [&o](const std::string& flag, const std::string& v) {
    o.beyond_rate = bench::parse_number(flag, v, bench::kZeroOk);
    if (o.beyond_rate <= 0) throw std::invalid_argument("--beyond-rate must be positive");
  });
}

void check_options(const Options& o) {
  if (o.consumers < 2) throw std::invalid_argument("--consumers: at least 2 (the two reporters)");
  if (o.instances < 3)
    throw std::invalid_argument("--instances: at least 3 (the cap isolates at most half)");
  if (o.trials > o.services * o.instances)
    throw std::invalid_argument(
        "--trials: at most --services x --instances (each trial takes another provider)");
  if (o.gap_max < o.gap_min) throw std::invalid_argument("--gap-max-ms is below --gap-min-ms");
  if (o.quorum_share > 0.5) throw std::invalid_argument("--quorum-share: at most 0.5");
  if (o.flood_reporters < 2) throw std::invalid_argument("--flood-reporters: at least 2");
  if (o.step < Duration{500}) throw std::invalid_argument("--step-s: at least 0.5");
  if (o.flood_uses > o.flood_services)
    throw std::invalid_argument("--flood-uses cannot exceed --flood-services");
}

Options parse_options(int argc, char** argv) {
  auto o = bench::parse_flags<Options>(argc, argv, kUsage, declare_flags);
  check_options(o);
  return o;
}

void progress(const std::string& what) {
  bench::progress("fast-fail-bench", what);
}

double ms_between(SteadyTime a, SteadyTime b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

proto::ServiceKey key(const std::string& name) {
  return proto::ServiceKey{name, std::string(proto::kDefaultGroup)};
}

// ---------------------------------------------------------------- hubs and probes

// Names of the ZeroMQ I/O threads ("N/ZMQbg/IO/0"), to tell whose CPU is whose.
constexpr int kL2Io = 1;
constexpr int kDc1Io = 2;
constexpr int kDc2Io = 3;
constexpr int kFloodHubIo = 4;
constexpr int kConsumersIo = 5;
constexpr int kProvidersIo = 6;
constexpr int kFloodAgentsIo = 7;
constexpr int kFloodSenderIo = 8;
constexpr const char* kFloodSenderThread = "flood-sender";
constexpr const char* kFloodAgentsThread = "flood-agents";
constexpr const char* kConsumersThread = "consumers";

// The CPU the threads of a trial's parties used so far, by party.
struct CpuSplit {
  double hub = 0;         // the consumers' hub thread
  double hub_io = 0;      // ... its ZeroMQ I/O thread
  double other_hubs = 0;  // the other hubs' threads and I/O threads
  double driver = 0;      // the fleet driving the consumers
  double driver_io = 0;   // ... its ZeroMQ I/O thread
  double process = 0;     // the whole process (the rest: providers, probes, main)

  static CpuSplit now(const std::string& hub_thread, int hub_io_prefix) {
    CpuSplit out;
    const auto hub_io_name = std::to_string(hub_io_prefix) + "/ZMQbg";
    const auto driver_io_name = std::to_string(kConsumersIo) + "/ZMQbg";
    bench::for_each_thread([&](const std::string& name, pid_t tid) {
      const bool some_hub_io =
          name.size() > 1 && name[1] == '/' && name[0] >= '1' && name[0] <= '0' + kFloodHubIo;
      if (name == hub_thread)
        out.hub += bench::thread_cpu_seconds(tid);
      else if (name.starts_with(hub_io_name))
        out.hub_io += bench::thread_cpu_seconds(tid);
      else if (name.starts_with("hub-") || some_hub_io)
        out.other_hubs += bench::thread_cpu_seconds(tid);
      else if (name == kConsumersThread)
        out.driver += bench::thread_cpu_seconds(tid);
      else if (name.starts_with(driver_io_name))
        out.driver_io += bench::thread_cpu_seconds(tid);
    });
    out.process = bench::cpu_seconds(CLOCK_PROCESS_CPUTIME_ID);
    return out;
  }
  double rest() const { return process - hub - hub_io - other_hubs - driver - driver_io; }
  CpuSplit operator-(const CpuSplit& b) const {
    return {hub - b.hub,       hub_io - b.hub_io,       other_hubs - b.other_hubs,
            driver - b.driver, driver_io - b.driver_io, process - b.process};
  }
  CpuSplit& operator+=(const CpuSplit& b) {
    hub += b.hub;
    hub_io += b.hub_io;
    other_hubs += b.other_hubs;
    driver += b.driver;
    driver_io += b.driver_io;
    process += b.process;
    return *this;
  }
};

// The hubs as shipped, but for a shorter first isolation under --isolation-base-ms.
void tune_hub(hub::HubConfig& c, const Options& o) {
  if (o.isolation_base.count() > 0) c.isolation.base_isolation = o.isolation_base;
}

using Counters = std::map<std::string, std::uint64_t>;

std::uint64_t delta(const Counters& after, const Counters& before, const std::string& name) {
  const auto a = after.count(name) ? after.at(name) : 0;
  const auto b = before.count(name) ? before.at(name) : 0;
  return a - b;
}

// How far every counter of the hub moved since `before`.
Counters counter_deltas(HubProbe& probe, const Counters& before) {
  auto after = probe.counters();
  Counters out;
  for (const auto& [name, v] : after)
    out[name] = delta(after, before, name);
  return out;
}

// ---------------------------------------------------------------- [1] isolation latency

// Conditions on the consumers' caches ("instance X of service S has health
// H"). Checked against the cache when armed; after that from the messages a
// consumer applies: what an update says about X counts once the core applied
// it (it reported S changed), so the check costs no copy of the cache (the
// driver thread is on the measured path). Armed and updated on the fleet's
// driver thread; waited for on any thread.
class HealthWatch : public bench::FleetObserver {
 public:
  struct Condition {
    proto::ServiceKey service;
    std::string id;
    proto::Health want = proto::Health::kIsolated;
    std::vector<char> met;  // per consumer
    std::size_t count = 0;
    std::optional<SteadyTime> first;  // the first consumer met it
    std::optional<SteadyTime> all;    // the last one did
    std::size_t by_beat = 0;          // consumers that learned it from a beat reply, not a push
    bool last_by_beat = false;        // ... the last consumer among them
    std::size_t last_agent = 0;
    SteadyTime armed{};
    std::vector<std::uint64_t> held_at_arm;  // per consumer: the version its cache held
    // Per consumer: the updates of the service it received while armed, for
    // describing a slow trial ("+12ms push 41->42" ...).
    std::vector<std::string> received;
  };

  explicit HealthWatch(std::size_t consumers) : last_was_push_(consumers, 0), noted_(consumers) {}

  // Driver thread (inside AgentFleet::call): the condition's index.
  std::size_t arm(AgentFleet::Access& access, proto::ServiceKey service, std::string id,
                  proto::Health want) {
    std::lock_guard lock(mu_);
    Condition c;
    c.service = std::move(service);
    c.id = std::move(id);
    c.want = want;
    c.met.assign(access.size(), 0);
    c.armed = SteadyClock::now();
    c.held_at_arm.assign(access.size(), 0);
    c.received.assign(access.size(), {});
    const auto index = conditions_.size();
    conditions_.push_back(std::move(c));
    active_.push_back(index);
    const auto at = SteadyClock::now();
    for (std::size_t agent = 0; agent < access.size(); ++agent) {
      const auto held = access.core(agent).peek(access.now(), 0, conditions_[index].service);
      if (!held) continue;
      conditions_[index].held_at_arm[agent] = held->version;
      for (const auto& in : held->instances)
        if (in.id == conditions_[index].id) note(index, agent, in.health, at);
    }
    return index;
  }

  void on_received(std::size_t agent, const proto::Message& message, SteadyTime at) override {
    auto& noted = noted_[agent];
    noted.clear();
    const auto* down = std::get_if<proto::DownBeat>(&message);
    if (down == nullptr) return;
    last_was_push_[agent] = down->push ? 1 : 0;
    std::lock_guard lock(mu_);
    for (const auto& update : down->updates) {
      for (const auto index : active_) {
        Condition& c = conditions_[index];
        if (update.service != c.service) continue;
        c.received[agent] += " +" + std::to_string(static_cast<int>(ms_between(c.armed, at))) +
                             "ms " + (down->push ? "push " : "reply ") +
                             std::to_string(update.from_version) + "->" +
                             std::to_string(update.version);
        for (const auto& in : update.upserts)
          if (in.id == c.id) noted.push_back({index, in.health});
      }
    }
  }

  void on_changed(std::size_t agent, const proto::ServiceKey& service, SteadyTime at) override {
    auto& noted = noted_[agent];
    if (noted.empty()) return;
    std::lock_guard lock(mu_);
    for (const auto& [index, health] : noted)
      if (conditions_[index].service == service) note(index, agent, health, at);
  }

  // True once every consumer met condition `index`, false at `deadline`.
  bool wait(std::size_t index, SteadyTime deadline) {
    std::unique_lock lock(mu_);
    return cv_.wait_until(lock, deadline, [&] { return conditions_[index].all.has_value(); });
  }

  Condition snapshot(std::size_t index) {
    std::lock_guard lock(mu_);
    return conditions_[index];
  }

 private:
  // The consumer's cache shows the instance with `health` since `at`. Caller holds mu_.
  void note(std::size_t index, std::size_t agent, proto::Health health, SteadyTime at) {
    Condition& c = conditions_[index];
    if (c.met[agent] || c.all || health != c.want) return;
    c.met[agent] = 1;
    if (!last_was_push_[agent]) ++c.by_beat;
    if (c.count++ == 0) c.first = at;
    if (c.count < c.met.size()) return;
    c.all = at;
    c.last_by_beat = !last_was_push_[agent];
    c.last_agent = agent;
    std::erase(active_, index);
    cv_.notify_all();
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Condition> conditions_;
  std::vector<std::size_t> active_;  // conditions not met by every consumer yet
  // Driver thread only, per consumer: whether its last DownBeat was a push,
  // and what that DownBeat said about watched instances.
  std::vector<char> last_was_push_;
  std::vector<std::vector<std::pair<std::size_t, proto::Health>>> noted_;
};

// How long an isolation can last (a first one: base + 10% jitter), with margin.
Duration isolation_wait(const Options& o) {
  const Duration base =
      o.isolation_base.count() > 0 ? o.isolation_base : hub::IsolationPolicy{}.base_isolation;
  return base + base / 5 + Duration{5000};
}

struct CaseResult {
  std::string name;
  std::size_t consumers = 0;
  std::vector<double> all_ms;    // report -> last consumer, per trial
  std::vector<double> first_ms;  // report -> first consumer
  std::size_t trials = 0;
  std::size_t missed = 0;  // isolations some consumer never saw
  std::size_t not_readmitted = 0;
  std::size_t by_beat = 0;         // consumer-trials where the isolation came with a beat reply
  std::size_t trials_by_beat = 0;  // trials where at least one consumer learned it so
  Counters owner;                  // dc1's counter deltas over the case
  Counters consumer_hub;           // the consumers' hub (dc1 or dc2)
  Counters upper;                  // the L2
  double seconds = 0;
  double driver_cpu = 0;  // the consumer fleet's driver thread, CPU s per wall s
  double hub_cpu = 0;     // the consumers' hub thread, CPU s per wall s
  bench::FleetCounters fleet;
  CpuSplit window_cpu;  // summed over the trials' windows (first report -> last consumer)
  double window_s = 0;  // the windows' wall time, summed
};

struct CaseSpec {
  std::string name;
  std::string prefix;  // service names: prefix + number
  bool cross = false;  // consumers on dc2
  int port = 0;        // provider addresses: 10.x.y.z:port
};

std::string service_name(const CaseSpec& c, std::size_t s) {
  return c.prefix + std::to_string(s);
}
std::string instance_id(const CaseSpec& c, std::size_t s, std::size_t j) {
  return service_name(c, s) + "-i" + std::to_string(j);
}
std::string provider_address(const CaseSpec& c, std::size_t s, std::size_t j, std::size_t per) {
  return bench::address(s * per + j, c.port);
}

std::vector<FleetAgent> providers(const std::vector<CaseSpec>& cases, const Options& o) {
  std::vector<FleetAgent> out;
  std::uint64_t epoch = 1;
  for (const auto& c : cases) {
    for (std::size_t s = 0; s < o.services; ++s) {
      for (std::size_t j = 0; j < o.instances; ++j) {
        FleetAgent a;
        a.config = bench::default_agent_config("prov-" + instance_id(c, s, j), epoch++);
        proto::Registration r;
        r.service = key(service_name(c, s));
        r.instance.id = instance_id(c, s, j);
        r.instance.address = provider_address(c, s, j, o.instances);
        r.instance.zone = "dc1";
        r.instance.metadata.emplace("version", "1.4.2");
        a.registrations.push_back(std::move(r));
        out.push_back(std::move(a));
      }
    }
  }
  return out;
}

// Every consumer holds every service of the case with all its instances, none isolated.
bool consumers_ready(AgentFleet& fleet, const CaseSpec& c, const Options& o) {
  bool ready = true;
  fleet.call([&](AgentFleet::Access& a) {
    for (std::size_t k = 0; ready && k < a.size(); ++k) {
      for (std::size_t s = 0; ready && s < o.services; ++s) {
        const auto held = a.core(k).peek(a.now(), 0, key(service_name(c, s)));
        ready =
            held && held->instances.size() == o.instances &&
            std::all_of(held->instances.begin(), held->instances.end(),
                        [](const proto::Instance& in) { return in.health == proto::Health::kOk; });
      }
    }
  });
  return ready;
}

CaseResult run_case(const Options& o, bench::TwoTierHubs& d, const CaseSpec& c,
                    std::vector<std::string>& problems) {
  CaseResult result;
  result.name = c.name;
  result.consumers = o.consumers;
  InProcessHub& home = c.cross ? d.dc2 : d.dc1;
  const std::string home_thread = c.cross ? "hub-dc2" : "hub-dc1";
  HubProbe owner_probe(d.dc1.endpoint());
  HubProbe home_probe(home.endpoint());
  HubProbe upper_probe(d.l2.endpoint());

  progress(c.name + ": starting " + std::to_string(o.consumers) + " consumers");
  std::vector<FleetAgent> specs;
  std::uint64_t epoch = 1;
  for (std::size_t k = 0; k < o.consumers; ++k) {
    FleetAgent a;
    a.config = bench::default_agent_config(c.prefix + "consumer-" + std::to_string(k), epoch++);
    for (std::size_t s = 0; s < o.services; ++s)
      a.pinned.push_back(key(service_name(c, s)));
    specs.push_back(std::move(a));
  }
  HealthWatch watch(o.consumers);
  FleetConfig fc;
  fc.name = kConsumersThread;
  fc.io_thread_prefix = kConsumersIo;
  fc.endpoint = home.endpoint();
  fc.start_spread = kBeat;  // a fleet's beats are spread over the interval, as in production
  fc.seed = c.cross ? 2 : 1;
  AgentFleet fleet(fc, std::move(specs), &watch);

  const auto ready_by = SteadyClock::now() + kReadyPatience;
  while (!consumers_ready(fleet, c, o)) {
    if (SteadyClock::now() >= ready_by) {
      problems.push_back(c.name + ": the consumers never held every service");
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // One more interval: every consumer's hub (and, across tiers, the L2)
  // knows who uses what, so a push finds them all.
  std::this_thread::sleep_for(kBeat + kBeat / 2);

  progress(c.name + ": " + std::to_string(o.trials) + " trials");
  const auto owner_before = owner_probe.counters();
  const auto home_before = home_probe.counters();
  const auto upper_before = upper_probe.counters();
  const auto started = SteadyClock::now();
  const double driver_cpu0 = fleet.cpu_seconds();
  const double hub_cpu0 = home.cpu_seconds();
  std::mt19937_64 rng(c.cross ? 7 : 3);
  std::uniform_int_distribution<Duration::rep> gap(o.gap_min.count(), o.gap_max.count());
  std::vector<std::optional<std::size_t>> readmitted(o.trials);  // condition per trial
  // Isolations of one service that may overlap with a new one (the cap allows
  // max_isolated_share of its instances; the new one is one of them).
  const auto allowed = static_cast<std::size_t>(hub::IsolationPolicy{}.max_isolated_share *
                                                static_cast<double>(o.instances));
  const std::size_t concurrent = std::max<std::size_t>(allowed, 1) - 1;
  for (std::size_t i = 0; i < o.trials; ++i) {
    const std::size_t s = i % o.services;
    const std::size_t j = i / o.services;  // a provider never isolated before
    // The cap holds back isolating more than half a service: wait until
    // enough of this service's earlier isolations ended everywhere.
    for (std::size_t t = s; t + concurrent * o.services < i; t += o.services) {
      if (!readmitted[t]) continue;
      if (!watch.wait(*readmitted[t], SteadyClock::now() + isolation_wait(o))) {
        problems.push_back(c.name + ": trial " + std::to_string(t) +
                           "'s isolation was not readmitted at every consumer in time");
        return result;
      }
    }
    const auto svc = key(service_name(c, s));
    const auto id = instance_id(c, s, j);
    const auto addr = provider_address(c, s, j, o.instances);
    const std::size_t r1 = (2 * i) % o.consumers;
    const std::size_t r2 = (2 * i + 1) % o.consumers;
    std::size_t isolated = 0;
    SteadyTime reported{};
    const auto home_pushes = home_probe.counters()["pushes"];
    const auto upper_pushes = upper_probe.counters()["pushes"];
    const auto cpu_before = CpuSplit::now(home_thread, home.io_prefix());
    fleet.call([&](AgentFleet::Access& a) {
      isolated = watch.arm(a, svc, id, proto::Health::kIsolated);
      reported = SteadyClock::now();
      a.core(r1).report_failure(a.now(), svc, addr, proto::FailureKind::kTimeout);
      if (o.report_gap.count() == 0)
        a.core(r2).report_failure(a.now(), svc, addr, proto::FailureKind::kTimeout);
    });
    if (o.report_gap.count() > 0) {
      std::this_thread::sleep_for(o.report_gap);
      fleet.call([&](AgentFleet::Access& a) {
        a.core(r2).report_failure(a.now(), svc, addr, proto::FailureKind::kTimeout);
      });
    }
    ++result.trials;
    const bool seen = watch.wait(isolated, reported + kTrialPatience);
    const auto cond = watch.snapshot(isolated);
    if (!seen) {
      ++result.missed;
      problems.push_back(c.name + ": trial " + std::to_string(i) + " (" + id +
                         "): " + std::to_string(cond.count) + " of " + std::to_string(o.consumers) +
                         " consumers saw the isolation within " +
                         std::to_string(kTrialPatience.count()) + " s");
      continue;
    }
    result.all_ms.push_back(ms_between(reported, *cond.all));
    result.first_ms.push_back(ms_between(reported, *cond.first));
    result.window_cpu += CpuSplit::now(home_thread, home.io_prefix()) - cpu_before;
    result.window_s += result.all_ms.back() / 1000;
    result.by_beat += cond.by_beat;
    if (result.all_ms.back() > kSlowTrialMs)
      progress(
          c.name + ": trial " + std::to_string(i) + " (" + id + ") took " +
          std::to_string(static_cast<int>(result.all_ms.back())) + " ms (first consumer " +
          std::to_string(static_cast<int>(result.first_ms.back())) + " ms); " +
          std::to_string(cond.by_beat) + " consumers learned it from a beat reply, the last (" +
          std::to_string(cond.last_agent) + ") from " +
          (cond.last_by_beat ? "a beat reply" : "a push") +
          "; pushes meanwhile: " + std::to_string(home_probe.counters()["pushes"] - home_pushes) +
          " by " + home_thread.substr(4) + ", " +
          std::to_string(upper_probe.counters()["pushes"] - upper_pushes) +
          " by the L2; the last held version " + std::to_string(cond.held_at_arm[cond.last_agent]) +
          " when armed and received:" + cond.received[cond.last_agent]);
    if (cond.by_beat > 0) ++result.trials_by_beat;
    fleet.call(
        [&](AgentFleet::Access& a) { readmitted[i] = watch.arm(a, svc, id, proto::Health::kOk); });
    std::this_thread::sleep_for(Duration{gap(rng)});
  }
  result.seconds = bench::seconds_since(started);
  result.driver_cpu = (fleet.cpu_seconds() - driver_cpu0) / result.seconds;
  result.hub_cpu = (home.cpu_seconds() - hub_cpu0) / result.seconds;

  progress(c.name + ": waiting for the readmissions");
  const auto readmit_by = SteadyClock::now() + isolation_wait(o);
  for (std::size_t i = 0; i < o.trials; ++i)
    if (readmitted[i] && !watch.wait(*readmitted[i], readmit_by)) ++result.not_readmitted;
  if (result.not_readmitted > 0)
    problems.push_back(c.name + ": " + std::to_string(result.not_readmitted) +
                       " isolation(s) never readmitted at every consumer");
  result.owner = counter_deltas(owner_probe, owner_before);
  result.consumer_hub = counter_deltas(home_probe, home_before);
  result.upper = counter_deltas(upper_probe, upper_before);
  result.fleet = fleet.counters();
  const auto isolations = result.owner["isolations"];
  if (isolations != result.trials)
    problems.push_back(c.name + ": dc1 isolated " + std::to_string(isolations) + " instances for " +
                       std::to_string(result.trials) + " trials");
  if (result.owner["isolations_capped"] != 0)
    problems.push_back(c.name + ": dc1 capped " +
                       std::to_string(result.owner["isolations_capped"]) + " isolations");
  if (result.fleet.decode_failures != 0 || result.fleet.unrouted != 0)
    problems.push_back(c.name + ": the consumers received " +
                       std::to_string(result.fleet.decode_failures) + " undecodable and " +
                       std::to_string(result.fleet.unrouted) + " unroutable messages");
  progress(c.name + ": done");
  return result;
}

// ---------------------------------------------------------------- [2] report flood

// The round trip of every beat the fleet sends while a step is current
// (counted in the step it was sent in), and the pushes it receives.
class BeatClock : public bench::FleetObserver {
 public:
  static constexpr int kIdle = -1;

  struct Step {
    std::uint64_t sent = 0;
    std::uint64_t answered = 0;
    std::uint64_t pushes = 0;
    std::uint64_t errors = 0;  // ErrorReply instead of a DownBeat
    std::vector<double> rtt_ms;
  };

  BeatClock(std::size_t agents, std::size_t steps) : pending_(agents), steps_(steps) {}

  void set_step(int step) { step_.store(step); }  // any thread

  void on_sent(std::size_t agent, const proto::Message& message, SteadyTime at) override {
    const auto* beat = std::get_if<proto::UpBeat>(&message);
    const int step = step_.load();
    if (beat == nullptr || step == kIdle) return;
    auto& pending = pending_[agent];
    if (pending.size() >= kMaxPending) pending.pop_front();
    pending.push_back({beat->seq, at, step});
    ++steps_[static_cast<std::size_t>(step)].sent;
  }

  void on_received(std::size_t agent, const proto::Message& message, SteadyTime at) override {
    if (std::holds_alternative<proto::ErrorReply>(message)) {
      if (const int step = step_.load(); step != kIdle)
        ++steps_[static_cast<std::size_t>(step)].errors;
      return;
    }
    const auto* down = std::get_if<proto::DownBeat>(&message);
    if (down == nullptr) return;
    if (down->push) {
      if (const int step = step_.load(); step != kIdle)
        ++steps_[static_cast<std::size_t>(step)].pushes;
      return;
    }
    auto& pending = pending_[agent];
    const auto it = std::find_if(pending.begin(), pending.end(),
                                 [&](const Sent& s) { return s.seq == down->ack_seq; });
    if (it == pending.end()) return;
    auto& step = steps_[static_cast<std::size_t>(it->step)];
    ++step.answered;
    step.rtt_ms.push_back(ms_between(it->at, at));
    pending.erase(it);
  }

  // Driver thread (inside AgentFleet::call).
  Step take(std::size_t step) { return std::exchange(steps_[step], Step{}); }

 private:
  static constexpr std::size_t kMaxPending = 8;  // beats of one agent awaiting a reply
  struct Sent {
    std::uint64_t seq = 0;
    SteadyTime at{};
    int step = 0;
  };
  std::atomic<int> step_{kIdle};
  std::vector<std::deque<Sent>> pending_;  // per agent
  std::vector<Step> steps_;
};

struct FloodTarget {
  proto::ServiceKey service;
  std::string address;
};

// FailureReports at a paced rate from a few DEALERs (open loop: a report
// ZeroMQ refuses is counted, not retried). One signal per report, no request
// id, as agents send them. run(): noise about the first `noise_size`
// addresses of the pool in turn, each always from the same caller, so an
// address stays below the quorum (2 callers, or 5 failures, within 10 s)
// while rate * 10 s < 5 * noise_size; and every 2/quorum_share signals a pair
// from two callers about one address (walking those addresses with a prime
// stride), which isolates it unless the service's cap holds it back.
// run_fresh(): one report about each address of a range of the rest.
class ReportFlood {
 public:
  struct Sent {
    std::uint64_t signals = 0;
    std::uint64_t refused = 0;
    std::uint64_t pairs = 0;
    double seconds = 0;
  };

  ReportFlood(const std::string& endpoint, std::size_t senders, std::vector<FloodTarget> pool,
              std::size_t noise_size, std::size_t reporters, double quorum_share)
      : context_(make_context()),
        pool_(std::move(pool)),
        noise_size_(std::min(noise_size, pool_.size())),
        pair_every_(quorum_share > 0 ? std::max<std::uint64_t>(
                                           2, static_cast<std::uint64_t>(2.0 / quorum_share + 0.5))
                                     : 0) {
    if (noise_size_ == 0) throw std::invalid_argument("report flood: no addresses");
    for (std::size_t r = 0; r < reporters; ++r)
      reporters_.push_back("caller-" + std::to_string(r));
    for (std::size_t s = 0; s < senders; ++s) {
      auto& socket = sockets_.emplace_back(context_, zmq::socket_type::dealer);
      socket.set(zmq::sockopt::linger, 0);
      socket.set(zmq::sockopt::sndhwm, 100'000);
      socket.connect(endpoint);
    }
    report_.signals.resize(1);
    report_.signals[0].kind = proto::FailureKind::kTimeout;
  }

  std::size_t pool_size() const { return pool_.size(); }
  std::size_t noise_size() const { return noise_size_; }

  // Noise and quorum pairs at `rate` signals per second for `length`.
  Sent run(double rate, Duration length) {
    const auto end = SteadyClock::now() + length;
    return paced(rate, [&](Sent& sent, std::uint64_t) -> std::uint64_t {
      if (SteadyClock::now() >= end) return 0;
      return emit(sent);
    });
  }

  // One report about each of pool[from, from + count), in order, at `rate`.
  Sent run_fresh(std::size_t from, std::size_t count, double rate) {
    return paced(rate, [&](Sent& sent, std::uint64_t emitted) -> std::uint64_t {
      if (emitted >= count) return 0;
      const std::size_t n = from + static_cast<std::size_t>(emitted);
      send(pool_.at(n), reporters_[n % reporters_.size()], sent);
      return 1;
    });
  }

 private:
  // Calls next(sent, emitted so far) as fast as `rate` signals per second
  // allows, until it returns 0 (else how many signals it sent), on a thread
  // of its own, named so its CPU shows.
  template <typename Next>
  Sent paced(double rate, Next next) {
    Sent sent;
    std::thread sender([&] {
      pthread_setname_np(pthread_self(), kFloodSenderThread);
      const auto start = SteadyClock::now();
      std::uint64_t emitted = 0;
      for (bool more = true; more;) {
        const auto due = static_cast<std::uint64_t>(
            rate * std::chrono::duration<double>(SteadyClock::now() - start).count());
        if (emitted >= due) {
          std::this_thread::sleep_for(std::chrono::microseconds(500));
          continue;
        }
        for (std::size_t burst = 0; more && emitted < due && burst < 256; ++burst) {
          const auto n = next(sent, emitted);
          emitted += n;
          more = n > 0;
        }
      }
      sent.seconds = bench::seconds_since(start);
    });
    sender.join();
    return sent;
  }

  // One noise signal, or a quorum pair; returns how many signals it sent.
  std::uint64_t emit(Sent& sent) {
    if (pair_every_ != 0 && ++since_pair_ >= pair_every_) {
      since_pair_ = 0;
      victim_ = (victim_ + kStride) % noise_size_;
      const std::size_t first = (2 * sent.pairs) % reporters_.size();
      send(pool_[victim_], reporters_[first], sent);
      send(pool_[victim_], reporters_[(first + 1) % reporters_.size()], sent);
      ++sent.pairs;
      return 2;
    }
    const std::size_t n = noise_++ % noise_size_;
    send(pool_[n], reporters_[n % reporters_.size()], sent);
    return 1;
  }

  void send(const FloodTarget& target, const std::string& reporter, Sent& sent) {
    auto& signal = report_.signals[0];
    signal.service = target.service;
    signal.address = target.address;
    signal.reporter = reporter;
    const auto bytes = proto::encode(report_);
    auto& socket = sockets_[next_socket_++ % sockets_.size()];
    if (socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait))
      ++sent.signals;
    else
      ++sent.refused;
  }

  static constexpr std::size_t kStride = 7919;  // prime: walks any pool it does not divide

  static zmq::context_t make_context() {
    zmq::context_t context(1);
    zmq_ctx_set(context.handle(), ZMQ_THREAD_NAME_PREFIX, kFloodSenderIo);
    return context;
  }

  zmq::context_t context_;
  std::vector<zmq::socket_t> sockets_;
  std::vector<FloodTarget> pool_;
  std::size_t noise_size_;
  std::vector<std::string> reporters_;
  std::uint64_t pair_every_;
  std::uint64_t since_pair_ = 0;
  std::size_t victim_ = 0;
  std::size_t noise_ = 0;
  std::size_t next_socket_ = 0;
  proto::FailureReport report_;
};

struct FloodStep {
  double offered = 0;  // reports/s asked for (0: no flood)
  std::string label;
  bool beyond = false;  // reports about instances the full tracker has not seen
  ReportFlood::Sent sent;
  double window_s = 0;
  double handled_per_s = 0;  // failure signals the hub handled during the window
  double drain_s = 0;        // after the window, until it had handled every one sent
  bool drained = true;
  // CPU s per wall s over the window: the hub thread, its I/O thread, the
  // agents' driver with its I/O thread, the report sender with its I/O thread.
  double hub_cpu = 0;
  double hub_io_cpu = 0;
  double agents_cpu = 0;
  double sender_cpu = 0;
  Counters hub;  // counter deltas over the step and its drain
  BeatClock::Step beats;
  Percentiles rtt;
};

struct FloodResult {
  std::size_t agents = 0;
  std::size_t instances = 0;
  double registration_s = 0;
  std::vector<FloodStep> steps;
  bench::FleetCounters fleet;
};

FloodResult run_flood(const Options& o, std::vector<std::string>& problems) {
  FloodResult result;
  bench::TempDir dir("cascade-fast-fail-flood");
  auto config = bench::loopback_hub_config("flood", 1, dir.path());
  tune_hub(config, o);
  InProcessHub hub(config, {.io_prefix = kFloodHubIo});
  HubProbe probe(hub.endpoint());

  const std::size_t total = o.flood_agents * o.flood_instances;
  result.agents = o.flood_agents;
  result.instances = total;
  std::vector<FloodTarget> pool;
  std::vector<FleetAgent> specs;
  std::mt19937_64 rng(11);
  std::uniform_int_distribution<std::size_t> pick(0, o.flood_services - 1);
  for (std::size_t a = 0; a < o.flood_agents; ++a) {
    FleetAgent spec;
    spec.config = bench::default_agent_config("agent-" + std::to_string(a), a + 1);
    for (std::size_t m = 0; m < o.flood_instances; ++m) {
      const std::size_t g = a * o.flood_instances + m;
      proto::Registration r;
      r.service = key("svc-" + std::to_string(g % o.flood_services));
      r.instance.id = "i" + std::to_string(g);
      r.instance.address = bench::address(g, 9000);
      r.instance.zone = "dc1";
      r.instance.metadata.emplace("version", "1.4.2");
      pool.push_back({r.service, r.instance.address});
      spec.registrations.push_back(std::move(r));
    }
    std::set<std::size_t> uses;
    while (uses.size() < o.flood_uses)
      uses.insert(pick(rng));
    for (const auto u : uses)
      spec.pinned.push_back(key("svc-" + std::to_string(u)));
    specs.push_back(std::move(spec));
  }

  // The steps: none, the ascending rates, then (--beyond) reports about
  // instances the isolation tracker has not seen once it is full, then none.
  enum class Kind : std::uint8_t { kQuiet, kRate, kBeyond };
  struct PlanStep {
    Kind kind;
    double rate;
    std::string label;
  };
  std::vector<PlanStep> plan{{Kind::kQuiet, 0, "no flood"}};
  for (const double r : o.rates)
    plan.push_back({Kind::kRate, r, si(r)});
  if (o.beyond > 0) plan.push_back({Kind::kBeyond, o.beyond_rate, "beyond"});
  plan.push_back({Kind::kQuiet, 0, "after"});
  BeatClock beats(o.flood_agents, plan.size());
  FleetConfig fc;
  fc.name = kFloodAgentsThread;
  fc.endpoint = hub.endpoint();
  fc.sockets = o.flood_sockets;
  // Started over agents x 2 ms (10 s for 5,000): all at once is a
  // registration storm of its own, not the subject here.
  fc.start_spread = std::max(kBeat, Duration{static_cast<Duration::rep>(2 * o.flood_agents)});
  fc.seed = 5;
  fc.io_thread_prefix = kFloodAgentsIo;
  progress("flood: " + std::to_string(o.flood_agents) + " agents register " +
           std::to_string(total) + " instances");
  const auto registering = SteadyClock::now();
  AgentFleet fleet(fc, std::move(specs), &beats);
  const auto ready_by = SteadyClock::now() + kReadyPatience;
  for (;;) {
    const auto status = probe.status();
    if (status.instances == total && status.unconfirmed == 0) break;
    if (SteadyClock::now() >= ready_by) {
      problems.push_back("flood: the hub never held the " + std::to_string(total) +
                         " instances registered, all confirmed (it holds " +
                         std::to_string(status.instances) + ", " +
                         std::to_string(status.unconfirmed) + " unconfirmed)");
      return result;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  result.registration_s = bench::seconds_since(registering);
  // Then a steady state: right after the registrations the hub still works
  // off a backlog and late replies make agents retry. Wait for a 2 s window in
  // which the agents beat at their rate and the hub answered about as many.
  const double beats_per_s =
      static_cast<double>(o.flood_agents) / std::chrono::duration<double>(kBeat).count();
  for (int window = 0;; ++window) {
    const auto sent0 = fleet.counters().sent;
    const auto answered0 = probe.counters()["beats"];
    std::this_thread::sleep_for(std::chrono::seconds(2));
    const double sent = static_cast<double>(fleet.counters().sent - sent0) / 2;
    const double answered = static_cast<double>(probe.counters()["beats"] - answered0) / 2;
    if (sent <= 1.2 * beats_per_s && answered >= 0.9 * sent && answered <= 1.1 * sent) break;
    if (window == 30) {
      problems.push_back("flood: the agents never settled into steady beats (last 2 s: " +
                         si(sent) + " sent/s, " + si(answered) + " answered/s)");
      return result;
    }
  }
  ReportFlood flood(hub.endpoint(), o.flood_senders, std::move(pool), o.flood_pool,
                    o.flood_reporters, o.quorum_share);
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the senders are connected

  const std::vector<std::string> cpu_groups{
      "hub-flood",        std::to_string(kFloodHubIo) + "/ZMQbg",
      kFloodAgentsThread, std::to_string(kFloodAgentsIo) + "/ZMQbg",
      kFloodSenderThread, std::to_string(kFloodSenderIo) + "/ZMQbg"};
  bool saturated = false;
  auto drain = [&](std::uint64_t handled_before, std::uint64_t sent) {
    const auto by = SteadyClock::now() + std::chrono::seconds(60);
    while (probe.counters()["failure_signals"] - handled_before < sent) {
      if (SteadyClock::now() >= by) return false;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    return true;
  };
  for (std::size_t k = 0; k < plan.size(); ++k) {
    const auto& [kind, rate, label] = plan[k];
    if (saturated && kind == Kind::kRate) continue;
    std::size_t fresh_from = 0;
    if (kind == Kind::kBeyond) {
      // Fill the tracker to its bound with instances it has not seen (fast,
      // not measured), so that each measured report is about one more.
      const auto tracked = probe.counters()["isolation_tracked"];
      const auto bound = hub::IsolationPolicy{}.max_tracked;
      const std::size_t fill = bound > tracked ? bound - tracked : 0;
      fresh_from = flood.noise_size() + fill;
      if (fresh_from + o.beyond > flood.pool_size()) {
        problems.push_back("flood beyond: " + std::to_string(flood.pool_size()) +
                           " instances are too few to fill the tracker (" +
                           std::to_string(tracked) + " of " + std::to_string(bound) +
                           " tracked) and report " + std::to_string(o.beyond) +
                           " more; raise --flood-instances or lower --flood-pool");
        continue;
      }
      progress("flood: filling the isolation tracker with " + std::to_string(fill) +
               " reports about instances it has not seen");
      const auto handled_before = probe.counters()["failure_signals"];
      const auto filled = flood.run_fresh(flood.noise_size(), fill, 10'000);
      if (!drain(handled_before, filled.signals)) {
        problems.push_back("flood beyond: the hub did not handle the reports filling its tracker");
        continue;
      }
    }
    progress("flood: " + label + (rate > 0 ? " (" + si(rate) + " reports/s)" : ""));
    FloodStep step;
    step.offered = rate;
    step.label = label;
    step.beyond = kind == Kind::kBeyond;
    const auto before = probe.counters();
    const auto fleet_before = fleet.counters();
    const auto cpu0 = bench::threads_cpu(cpu_groups);
    const auto t0 = SteadyClock::now();
    beats.set_step(static_cast<int>(k));
    if (kind == Kind::kRate)
      step.sent = flood.run(rate, o.step);
    else if (kind == Kind::kBeyond)
      step.sent = flood.run_fresh(fresh_from, o.beyond, rate);
    else
      std::this_thread::sleep_for(o.step);
    beats.set_step(BeatClock::kIdle);
    step.window_s = bench::seconds_since(t0);
    const auto at_end = probe.counters();
    const auto cpu1 = bench::threads_cpu(cpu_groups);
    auto share = [&](std::size_t i) { return (cpu1[i] - cpu0[i]) / step.window_s; };
    step.hub_cpu = share(0);
    step.hub_io_cpu = share(1);
    step.agents_cpu = share(2) + share(3);
    step.sender_cpu = share(4) + share(5);
    step.handled_per_s =
        static_cast<double>(delta(at_end, before, "failure_signals")) / step.window_s;
    const auto drain_start = SteadyClock::now();
    step.drained = drain(before.count("failure_signals") ? before.at("failure_signals") : 0,
                         step.sent.signals);
    step.drain_s = bench::seconds_since(drain_start);
    std::this_thread::sleep_for(std::chrono::milliseconds(700));  // late beat replies
    const auto after = probe.counters();
    for (const auto& [name, v] : after)
      step.hub[name] = delta(after, before, name);
    step.hub["isolation_tracked"] =
        after.count("isolation_tracked") ? after.at("isolation_tracked") : 0;
    fleet.call([&](AgentFleet::Access&) { step.beats = beats.take(k); });
    step.rtt = bench::percentiles(step.beats.rtt_ms);
    const auto fleet_after = fleet.counters();
    progress("flood: " + label + ": agents sent " +
             std::to_string(fleet_after.sent - fleet_before.sent) + " (refused " +
             std::to_string(fleet_after.not_sent - fleet_before.not_sent) + "), received " +
             std::to_string(fleet_after.messages_received - fleet_before.messages_received) +
             " in " + std::to_string(fleet_after.loop_passes - fleet_before.loop_passes) +
             " passes; the hub answered " + std::to_string(step.hub["beats"]) + " beats");
    const auto handled = step.hub["failure_signals"];
    if (handled != step.sent.signals)
      problems.push_back("flood " + label + ": sent " + std::to_string(step.sent.signals) +
                         " reports, the hub handled " + std::to_string(handled));
    if (kind == Kind::kRate && step.handled_per_s < 0.5 * rate) saturated = true;
    result.steps.push_back(std::move(step));
  }
  result.fleet = fleet.counters();
  if (result.fleet.decode_failures != 0 || result.fleet.unrouted != 0)
    problems.push_back("flood: the agents received " +
                       std::to_string(result.fleet.decode_failures) + " undecodable and " +
                       std::to_string(result.fleet.unrouted) + " unroutable messages");
  return result;
}

// ---------------------------------------------------------------- report

void print_cases(const Options& o, const std::vector<CaseResult>& cases) {
  const auto base =
      o.isolation_base.count() > 0 ? o.isolation_base : hub::IsolationPolicy{}.base_isolation;
  std::printf(
      "\n[1] failure report -> isolation visible at every consumer (L2 + dc1 + dc2 HubServers on "
      "tcp loopback; beats 2 s, push delay %lld ms, quorum %u reporters, isolation %lld ms; "
      "%zu services x %zu providers in dc1; 2 consumers report, trials %lld-%lld ms apart)\n",
      static_cast<long long>(hub::PushConfig{}.delay.count()), hub::IsolationPolicy{}.min_reporters,
      static_cast<long long>(base.count()), o.services, o.instances,
      static_cast<long long>(o.gap_min.count()), static_cast<long long>(o.gap_max.count()));
  std::printf("%-34s %9s %6s %8s %8s %8s %8s %10s %10s %9s %8s %7s\n", "case", "consumers",
              "trials", "p50_ms", "p99_ms", "max_ms", "mean_ms", "first_p50", "first_p99",
              "pushes/tr", "hub_cpu", "drv_cpu");
  for (auto c : cases) {
    const auto all = bench::percentiles(c.all_ms);
    const auto first = bench::percentiles(c.first_ms);
    const double pushes =
        c.trials ? static_cast<double>(c.consumer_hub["pushes"]) / static_cast<double>(c.trials)
                 : 0;
    std::printf("%-34s %9zu %6zu %8.1f %8.1f %8.1f %8.1f %10.1f %10.1f %9.0f %7.0f%% %6.0f%%\n",
                c.name.c_str(), c.consumers, all.count, all.p50, all.p99, all.max, all.mean,
                first.p50, first.p99, pushes, 100 * c.hub_cpu, 100 * c.driver_cpu);
  }
  std::printf(
      "p*_ms: first report_failure call -> the last consumer's cache shows the instance isolated; "
      "first_*: -> the first consumer; pushes/tr: pushed DownBeats by the consumers' hub per trial "
      "(readmissions included); hub_cpu: that hub's thread; drv_cpu: the thread driving all "
      "consumers\n");
  for (const auto& c : cases) {
    if (c.window_s <= 0 || c.all_ms.empty()) continue;
    const double n = static_cast<double>(c.all_ms.size());
    const auto& w = c.window_cpu;
    std::printf(
        "%s: CPU per trial window (first report -> last consumer, mean %.1f ms): consumers' hub "
        "%.1f ms + its I/O thread %.1f ms, other hubs %.1f ms; bench: consumer driver %.1f ms + "
        "its I/O thread %.1f ms, rest %.1f ms; %.2f cores busy in this process\n",
        c.name.c_str(), 1000 * c.window_s / n, 1000 * w.hub / n, 1000 * w.hub_io / n,
        1000 * w.other_hubs / n, 1000 * w.driver / n, 1000 * w.driver_io / n, 1000 * w.rest() / n,
        w.process / c.window_s);
  }
  for (auto c : cases)
    std::printf(
        "%s: dc1 isolations %llu, capped %llu, readmissions %llu, signals counted %llu; "
        "consumers' hub signals sent up %llu; L2 signals sent down %llu, pushes %llu; "
        "consumers that learned an isolation from a beat reply instead of a push: %zu (in %zu "
        "trials); every isolation readmitted at every consumer: %s\n",
        c.name.c_str(), static_cast<unsigned long long>(c.owner["isolations"]),
        static_cast<unsigned long long>(c.owner["isolations_capped"]),
        static_cast<unsigned long long>(c.owner["readmissions"]),
        static_cast<unsigned long long>(c.owner["signals_counted"]),
        static_cast<unsigned long long>(c.consumer_hub["signals_sent_up"]),
        static_cast<unsigned long long>(c.upper["signals_sent_down"]),
        static_cast<unsigned long long>(c.upper["pushes"]), c.by_beat, c.trials_by_beat,
        c.not_readmitted == 0 ? "yes" : "NO");
  std::fflush(stdout);
}

void print_flood(const Options& o, const FloodResult& r) {
  std::printf(
      "\n[2] report flood at one L1 HubServer (tcp loopback): %zu agents (AgentCores over %zu "
      "DEALERs, beats 2 s +-10%%, %zu uses each) hold %s instances in %zu services "
      "(registered in %.1f s); reports of one signal from %zu DEALERs, %zu callers, %.1f%% in "
      "quorum pairs; %.1f s per rate\n",
      r.agents, o.flood_sockets, o.flood_uses, si(static_cast<double>(r.instances)).c_str(),
      o.flood_services, r.registration_s, o.flood_senders, o.flood_reporters, 100 * o.quorum_share,
      static_cast<double>(o.step.count()) / 1000);
  std::printf("%-9s %7s %9s %7s %5s %6s %7s %7s %6s %7s %7s %7s %6s %6s %5s %6s %6s %5s %7s\n",
              "offered", "sent/s", "handled/s", "drain_s", "hub%", "hubio%", "agents%", "sender%",
              "beats", "p50_ms", "p99_ms", "max_ms", "unansw", "errors", "isol", "capped", "pushes",
              "readm", "tracked");
  for (auto s : r.steps) {
    const double sent =
        s.sent.seconds > 0 ? static_cast<double>(s.sent.signals) / s.sent.seconds : 0;
    std::printf(
        "%-9s %7s %9s %7.2f %4.0f%% %5.0f%% %6.0f%% %6.0f%% %6llu %7.2f %7.2f %7.1f %6llu %6llu "
        "%5llu %6llu %6llu %5llu %7llu%s\n",
        s.label.c_str(), si(sent).c_str(), si(s.handled_per_s).c_str(), s.drain_s, 100 * s.hub_cpu,
        100 * s.hub_io_cpu, 100 * s.agents_cpu, 100 * s.sender_cpu,
        static_cast<unsigned long long>(s.beats.sent), s.rtt.p50, s.rtt.p99, s.rtt.max,
        static_cast<unsigned long long>(s.beats.sent - s.beats.answered),
        static_cast<unsigned long long>(s.beats.errors),
        static_cast<unsigned long long>(s.hub["isolations"]),
        static_cast<unsigned long long>(s.hub["isolations_capped"]),
        static_cast<unsigned long long>(s.hub["pushes"]),
        static_cast<unsigned long long>(s.hub["readmissions"]),
        static_cast<unsigned long long>(s.hub["isolation_tracked"]),
        s.drained ? "" : "  (backlog not drained in 60 s)");
  }
  std::printf(
      "handled/s: the hub's failure_signals counter over the window; drain_s: then until it had "
      "handled every report sent; hub%%, hubio%%: the hub thread and its ZeroMQ I/O thread, "
      "agents%%: the agents' driver and its I/O thread, sender%%: the report sender and its I/O "
      "thread (CPU per wall second of the window); beats: sent by the agents in the window, p*_ms "
      "their round trips, unansw: of them never answered; isol/capped/pushes/readm: hub counters "
      "over the step and its drain; tracked: instances the isolation tracker holds after it\n");
  std::fflush(stdout);
}

int run(const Options& o) {
  const auto started = SteadyClock::now();
  std::printf("cascade_fast_fail_bench%s: %u cores (%s)\n", o.quick ? " --quick" : "",
              std::thread::hardware_concurrency(), bench::cpu_model().c_str());
  std::printf("load average at start: %s (other work on the machine skews every timing)\n",
              bench::load_average().c_str());
  std::fflush(stdout);

  std::vector<std::string> problems;
  std::vector<CaseResult> cases;
  if (o.same_tier || o.cross_tier) {
    std::vector<CaseSpec> specs;
    if (o.same_tier) specs.push_back({"same tier (dc1 -> dc1)", "same-", false, 8080});
    if (o.cross_tier)
      specs.push_back({"cross tier (dc2 -> L2 -> dc1 -> dc2)", "cross-", true, 8081});
    progress("starting L2, dc1, dc2 (in-process HubServers on tcp loopback)");
    bench::TwoTierHubs d("cascade-fast-fail-bench", [&o](hub::HubConfig& c) { tune_hub(c, o); },
                         {kL2Io, kDc1Io, kDc2Io});
    FleetConfig pc;
    pc.name = "providers";
    pc.endpoint = d.dc1.endpoint();
    pc.sockets = 16;
    pc.start_spread = kBeat;
    pc.seed = 9;
    pc.io_thread_prefix = kProvidersIo;
    AgentFleet provider_fleet(pc, providers(specs, o), nullptr);
    for (const auto& spec : specs) {
      cases.push_back(run_case(o, d, spec, problems));
      if (cases.back().trials == 0) break;
    }
    print_cases(o, cases);
    std::printf("load average after step 1: %s\n", bench::load_average().c_str());
  }
  std::optional<FloodResult> flood;
  if (o.flood) {
    flood = run_flood(o, problems);
    if (!flood->steps.empty()) print_flood(o, *flood);
  }

  if (!o.quick) {
    std::printf("\ntargets:\n");
    bench::Verdicts v;
    char what[300];
    for (auto c : cases) {
      const bool cross = c.name.starts_with("cross");
      const double target = cross ? kTargetCrossTierP99Ms : kTargetSameTierP99Ms;
      const auto p = bench::percentiles(c.all_ms);
      std::snprintf(what, sizeof what,
                    "%s: isolation at all %zu consumers p99 %.1f ms over %zu trials (target <= "
                    "%.0f ms; p50 %.1f, max %.1f)",
                    c.name.c_str(), c.consumers, p.p99, p.count, target, p.p50, p.max);
      v.line(c.missed == 0 && p.count > 0 && p.p99 <= target, what);
    }
    std::printf("%d target(s) missed\n", v.misses);
    if (flood && !flood->steps.empty()) {
      // No target was set for the flood: this says what the hub took in
      // while it kept answering beats, against the step without a flood.
      const FloodStep* best = nullptr;
      for (const auto& s : flood->steps)
        if (!s.beyond && s.offered > 0 && s.handled_per_s >= kHandledShare * s.offered &&
            s.drain_s <= kMaxDrainS)
          best = &s;
      const auto& quiet = flood->steps.front();
      if (best != nullptr)
        std::printf(
            "report flood: absorbed %s reports/s (the highest rate with >= %.0f%% handled in the "
            "window and the rest within %.0f s); beat p99 %.2f ms then, %.2f ms without a flood\n",
            si(best->handled_per_s).c_str(), 100 * kHandledShare, kMaxDrainS, best->rtt.p99,
            quiet.rtt.p99);
      else
        std::printf("report flood: no rate was absorbed\n");
      for (const auto& s : flood->steps)
        if (s.beyond)
          std::printf(
              "report flood beyond the isolation tracker's bound (%zu instances): %s reports/s "
              "handled of %s offered, backlog drained in %.1f s; beat p99 %.0f ms, max %.0f ms, "
              "%llu of %llu beats unanswered\n",
              hub::IsolationPolicy{}.max_tracked, si(s.handled_per_s).c_str(),
              si(s.offered).c_str(), s.drain_s, s.rtt.p99, s.rtt.max,
              static_cast<unsigned long long>(s.beats.sent - s.beats.answered),
              static_cast<unsigned long long>(s.beats.sent));
    }
  }
  for (const auto& p : problems)
    std::printf("CHECK FAILED: %s\n", p.c_str());
  std::printf(
      "%s; total run %.0f s; load average at end: %s\n",
      problems.empty() ? "every isolation, readmission and report checked" : "checks FAILED",
      bench::seconds_since(started), bench::load_average().c_str());
  return problems.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_fast_fail_bench",
                                             "fast-fail-bench", parse_options, run);
}
