// cascade_config_bench: what the config centre costs and how fast it delivers
// (docs/benchmarks.md, "Config centre").
//
// Steps:
//  1. propagation: three real HubServers on their own threads over tcp
//     loopback (an L2 and two L1s, dc1 and dc2, SQLite each; bench/
//     in_process_hub.hpp), and --subscribers AgentCores following one group,
//     half beating to each L1, driven by two AgentFleets (one thread each,
//     --sockets DEALERs shared per fleet; bench/fast_fail_fleet.hpp). Each
//     sample is one change of one key at L2 (an operator's kConfigEdit over
//     the wire); its latency, per subscriber, is the time from the moment
//     the edit was sent until that subscriber's core holds the new value
//     (config_changed). It crosses L2 -> L1's uplink -> subscriber, pushed
//     between beats at each hop.
//  2. steady-state bytes: the codec's bytes of an AgentCore's UpBeat
//     following --groups groups against one following none, and of the
//     hub's reply when nothing changed, from a HubCore answering its beats;
//     and the one beat that carries the whole list after a change.
//
// Every sample is checked (each subscriber holds exactly the new value with
// L2 as its origin). A failed check exits 1; a target MISS is a result.

#include <unistd.h>

#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/fast_fail_fleet.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/hub/hub_core.hpp"

namespace {

using namespace cascade;
using bench::AgentFleet;
using bench::FleetAgent;
using bench::FleetConfig;
using bench::HubProbe;
using SteadyClock = std::chrono::steady_clock;

// Targets (the issue): a change reaches 10,000 subscribers across two tiers
// with p99 <= 250 ms; following a group costs a few bytes per beat.
constexpr double kTargetP99Ms = 250;
constexpr double kTargetBytesPerGroup = 8;

constexpr const char* kGroup = "bench.limits";
constexpr const char* kKey = "timeout_ms";
constexpr auto kReadyPatience = std::chrono::seconds(60);
constexpr auto kSamplePatience = std::chrono::seconds(15);

constexpr const char* kUsage = R"(cascade_config_bench [options]
  --subscribers N   AgentCores following the group, half under each L1 (default 10000)
  --samples N       changes at L2, one after the other (default 20)
  --gap-ms N        pause between two changes, after the last subscriber got one (default 300)
  --sockets N       DEALERs each fleet's agents share (default 50)
  --groups N        groups followed in the bytes-per-beat figure (default 10)
  --quick           1,000 subscribers, 5 samples; timings not judged
)";

struct Options {
  std::size_t subscribers = 10'000;
  std::size_t samples = 20;
  Duration gap{300};
  std::size_t sockets = 50;
  std::size_t groups = 10;
  bool quick = false;
};

Options parse_options(int argc, char** argv) {
  auto o = bench::parse_flags<Options>(argc, argv, kUsage, [](bench::Flags& f, Options& opt) {
    f.add({
        {"--subscribers", &opt.subscribers},
        {"--samples", &opt.samples},
        {"--gap-ms", &opt.gap, bench::kZeroOk},
        {"--sockets", &opt.sockets},
        {"--groups", &opt.groups},
    });
    f.first("--quick", [&opt] {
      opt.quick = true;
      opt.subscribers = 1000;
      opt.samples = 5;
    });
  });
  if (o.subscribers < 2) throw std::invalid_argument("--subscribers: at least 2");
  return o;
}

void progress(const std::string& what) {
  bench::progress("config-bench", what);
}

// Per subscriber of one fleet: when it first held the expected value.
// Callbacks run on the fleet's driver thread; expect() and the results are
// read through AgentFleet::call, on that thread too.
class ValueWatch final : public bench::FleetObserver {
 public:
  explicit ValueWatch(std::size_t agents) : at_(agents) {}
  void bind(const AgentFleet* fleet) { fleet_ = fleet; }

  // Driver thread: from now on a subscriber is done when it holds `value`.
  void expect(const std::string& value) {
    value_ = value;
    done_.store(0);
    wrong_origin_ = 0;
    for (std::size_t a = 0; a < at_.size(); ++a) {
      at_[a].reset();
      check(a, SteadyClock::now());
    }
  }
  std::size_t done() const { return done_.load(); }
  // Driver thread.
  const std::vector<std::optional<SteadyClock::time_point>>& at() const { return at_; }
  std::size_t wrong_origin() const { return wrong_origin_; }

  void on_config_changed(std::size_t agent, const std::string&, bench::SteadyTime at) override {
    if (!at_[agent]) check(agent, at);
  }

 private:
  void check(std::size_t agent, SteadyClock::time_point at) {
    const auto* held = fleet_->core(agent).configs().find(kGroup);
    if (held == nullptr) return;
    const auto it = held->entries.find(kKey);
    if (it == held->entries.end() || it->second.value != value_) return;
    if (it->second.origin.tier != 2 || it->second.origin.hub != "l2") ++wrong_origin_;
    at_[agent] = at;
    done_.fetch_add(1);
  }

  const AgentFleet* fleet_ = nullptr;
  std::vector<std::optional<SteadyClock::time_point>> at_;
  std::string value_;
  std::atomic<std::size_t> done_{0};
  std::size_t wrong_origin_ = 0;
};

struct Fleet {
  explicit Fleet(std::size_t agents) : watch(agents) {}
  ValueWatch watch;
  std::unique_ptr<AgentFleet> fleet;
};

std::unique_ptr<Fleet> start_fleet(const std::string& dc, const std::string& endpoint,
                                   std::size_t agents, const Options& o, std::uint64_t seed) {
  auto f = std::make_unique<Fleet>(agents);
  std::vector<FleetAgent> specs;
  for (std::size_t k = 0; k < agents; ++k) {
    FleetAgent a;
    a.config.node_id = dc + "-sub-" + std::to_string(k);  // the agent's defaults: beat 2 s +-10%
    a.config.epoch = 1;
    a.configs = {kGroup};
    specs.push_back(std::move(a));
  }
  FleetConfig fc;
  fc.name = dc + "-subs";
  fc.endpoint = endpoint;
  fc.sockets = o.sockets;
  fc.start_spread = Duration{2000};  // beats spread over the interval, as in production
  fc.seed = seed;
  f->fleet = std::make_unique<AgentFleet>(fc, std::move(specs), &f->watch);
  f->watch.bind(f->fleet.get());
  return f;
}

proto::AdminReply edit(HubProbe& probe, const std::string& value) {
  proto::AdminRequest r;
  r.op = proto::AdminOp::kConfigEdit;
  r.actor = "bench";
  r.service = proto::ServiceKey{"", ""};
  r.config_group = kGroup;
  r.config_edits = {{kKey, value}};
  auto reply = probe.request(std::move(r));
  auto* a = std::get_if<proto::AdminReply>(&reply);
  if (a == nullptr) throw std::runtime_error("the config edit was not answered with an AdminReply");
  return *a;
}

struct Propagation {
  std::vector<double> ms;  // every subscriber of every sample
  std::vector<double> sample_max_ms;
  std::size_t wrong_origin = 0;
  std::size_t missing = 0;
};

Propagation run_propagation(const Options& o) {
  progress("starting L2, dc1, dc2 (in-process HubServers on tcp loopback)");
  bench::TwoTierHubs d("cascade-config-bench", [](hub::HubConfig&) {});
  HubProbe l2(d.l2.endpoint());
  if (auto r = edit(l2, "v0"); !r.ok) throw std::runtime_error("edit refused: " + r.message);
  const std::size_t half = o.subscribers / 2;
  progress("starting " + std::to_string(o.subscribers) + " subscribers");
  std::array<std::unique_ptr<Fleet>, 2> fleets{
      start_fleet("dc1", d.dc1.endpoint(), half, o, 1),
      start_fleet("dc2", d.dc2.endpoint(), o.subscribers - half, o, 2)};
  auto expect_all = [&](const std::string& value) {
    for (auto& f : fleets)
      f->fleet->call([&](AgentFleet::Access&) { f->watch.expect(value); });
  };
  auto done = [&] { return fleets[0]->watch.done() + fleets[1]->watch.done(); };
  expect_all("v0");
  const auto ready_by = SteadyClock::now() + kReadyPatience;
  while (done() < o.subscribers) {
    if (SteadyClock::now() > ready_by) throw std::runtime_error("subscribers never all held v0");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  // One more interval: both L1s and L2 know every follower, so pushes find them.
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));

  Propagation p;
  for (std::size_t s = 1; s <= o.samples; ++s) {
    const std::string value = "v" + std::to_string(s);
    expect_all(value);
    const auto sent = SteadyClock::now();
    if (auto r = edit(l2, value); !r.ok) throw std::runtime_error("edit refused: " + r.message);
    const auto by = sent + kSamplePatience;
    while (done() < o.subscribers && SteadyClock::now() < by)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    double sample_max = 0;
    for (auto& f : fleets) {
      f->fleet->call([&](AgentFleet::Access&) {
        for (const auto& at : f->watch.at()) {
          if (!at) {
            ++p.missing;
            continue;
          }
          const double ms = std::chrono::duration<double, std::milli>(*at - sent).count();
          p.ms.push_back(ms);
          sample_max = std::max(sample_max, ms);
        }
        p.wrong_origin += f->watch.wrong_origin();
      });
    }
    p.sample_max_ms.push_back(sample_max);
    progress("sample " + std::to_string(s) + ": slowest subscriber " +
             std::to_string(static_cast<int>(sample_max)) + " ms");
    std::this_thread::sleep_for(o.gap);
  }
  return p;
}

// ---------------------------------------------------------------- [2] bytes per beat

struct Bytes {
  std::size_t up_without = 0;
  std::size_t up_with = 0;
  std::size_t down_without = 0;
  std::size_t down_with = 0;  // nothing changed since the last reply
  std::size_t up_list = 0;    // the beat that carries the list (a change moved a version)
  std::size_t name_bytes = 0;
};

struct BeatSizes {
  std::size_t up = 0;
  std::size_t down = 0;
};

// One agent core beating a hub core directly (no transport, one clock): what
// each of its beats and the hub's replies cost on the wire.
class DirectAgent {
 public:
  DirectAgent(hub::HubCore& hub, std::string node, MonoTime now)
      : hub_(hub), core_(config_of(std::move(node)), 7) {
    deliver(now, core_.start(now));
  }
  agent::AgentCore& core() { return core_; }

  // Runs the agent's timers until it beat once more; that beat's sizes.
  BeatSizes beat(MonoTime& now) {
    const auto beats = core_.counters().beats_sent;
    while (core_.counters().beats_sent == beats) {
      now = core_.next_deadline();
      deliver(now, core_.on_timer(now));
    }
    return last_;
  }
  const proto::UpBeat& last_beat() const { return last_beat_; }
  const proto::DownBeat& last_reply() const { return last_reply_; }

 private:
  static agent::AgentCoreConfig config_of(std::string node) {
    agent::AgentCoreConfig c;
    c.node_id = std::move(node);
    return c;
  }
  void deliver(MonoTime now, agent::AgentActions actions) {
    while (!actions.send.empty()) {
      agent::AgentActions next;
      for (const auto& out : actions.send) {
        auto result = hub_.handle(now, out.message);
        if (const auto* beat = std::get_if<proto::UpBeat>(&out.message)) {
          last_beat_ = *beat;
          last_reply_ = std::get<proto::DownBeat>(result.reply);
          last_ = {proto::encode(out.message).size(), proto::encode(result.reply).size()};
        }
        next.merge(core_.on_message(now, 0, result.reply));
      }
      actions = std::move(next);
    }
  }

  hub::HubCore& hub_;
  agent::AgentCore core_;
  BeatSizes last_;
  proto::UpBeat last_beat_;
  proto::DownBeat last_reply_;
};

// Two agents against one hub core, one following nothing and one the groups,
// beating until steady (nothing to send but digests); then one group changes
// and the follower's next beats are measured too.
Bytes measure_bytes(const Options& o) {
  MonoTime now = mono_from_ms(1'000'000);
  hub::HubCore hub(hub::HubCoreConfig{"dc1", 1, Duration{6000}}, 1, now);
  std::vector<std::string> groups;
  Bytes b;
  for (std::size_t g = 0; g < o.groups; ++g) {
    // Names as an operator gives them: service name and a purpose.
    groups.push_back("orders-svc-" + std::to_string(g) + ".limits");
    b.name_bytes += groups.back().size();
    hub.edit_config(now, groups.back(), {{"timeout_ms", "300"}, {"retries", "3"}}, "bench", 0);
  }
  DirectAgent plain(hub, "dc1-sub-000001", now);
  DirectAgent follower(hub, "dc1-sub-000002", now);
  for (const auto& g : groups)
    follower.core().pin_config(now, g);
  constexpr int kBeatsToSteady = 4;
  BeatSizes plain_beat;
  BeatSizes follower_beat;
  for (int i = 0; i < kBeatsToSteady; ++i) {
    plain_beat = plain.beat(now);
    follower_beat = follower.beat(now);
  }
  const auto& steady = follower.last_beat();
  if (!steady.configs.empty() || steady.configs_digest == 0)
    throw std::runtime_error("a steady follower's beat is not its digest alone");
  if (!follower.last_reply().config_updates.empty() || follower.last_reply().send_configs)
    throw std::runtime_error("a follower holding every group current was sent updates");
  if (follower.core().configs().size() != groups.size())
    throw std::runtime_error("the follower does not hold every group");
  b.up_without = plain_beat.up;
  b.up_with = follower_beat.up;
  b.down_without = plain_beat.down;
  b.down_with = follower_beat.down;
  hub.edit_config(now, groups.front(), {{"timeout_ms", "250"}}, "bench", 0);
  follower.beat(now);  // its reply carries the change
  b.up_list = follower.beat(now).up;
  if (follower.last_beat().configs.size() != groups.size())
    throw std::runtime_error("the beat after a change does not carry the list");
  return b;
}

int run(const Options& o) {
  const auto started = SteadyClock::now();
  std::printf("cascade_config_bench: %u cores, load average at start: %s\n",
              std::thread::hardware_concurrency(), bench::load_average().c_str());
  const auto p = run_propagation(o);
  auto all = p.ms;
  const auto stats = bench::percentiles(all);
  auto worst = p.sample_max_ms;
  const auto per_sample = bench::percentiles(worst);
  std::printf(
      "\n[1] propagation: a change of one key at L2 reaching %zu subscribers (L2 -> 2 L1s -> "
      "agents, tcp loopback, beats 2 s)\n",
      o.subscribers);
  std::printf("    %zu samples, %zu deliveries: p50 %.1f ms  p99 %.1f ms  max %.1f ms\n", o.samples,
              stats.count, stats.p50, stats.p99, stats.max);
  std::printf("    slowest subscriber per sample: median %.1f ms, worst %.1f ms\n", per_sample.p50,
              per_sample.max);

  const auto b = measure_bytes(o);
  const double up_per_group =
      static_cast<double>(b.up_with - b.up_without) / static_cast<double>(o.groups);
  const double down_per_group =
      (static_cast<double>(b.down_with) - static_cast<double>(b.down_without)) /
      static_cast<double>(o.groups);
  std::printf(
      "\n[2] steady-state bytes per beat, following %zu groups (names %.1f bytes on average)\n",
      o.groups, static_cast<double>(b.name_bytes) / static_cast<double>(o.groups));
  std::printf("    UpBeat:   %zu bytes without groups, %zu with: +%.1f bytes per group\n",
              b.up_without, b.up_with, up_per_group);
  std::printf("    UpBeat after a change of one group: %zu bytes, once (the list goes whole)\n",
              b.up_list);
  std::printf(
      "    DownBeat: %zu bytes without groups, %zu with nothing changed: %+.1f bytes per group\n",
      b.down_without, b.down_with, down_per_group);

  bool ok = p.missing == 0 && p.wrong_origin == 0;
  if (p.missing) std::printf("CHECK FAILED: %zu deliveries never came\n", p.missing);
  if (p.wrong_origin) std::printf("CHECK FAILED: %zu values with a wrong origin\n", p.wrong_origin);
  if (!o.quick) {
    std::printf("\ntargets:\n");
    std::printf("  propagation p99 %.1f ms <= %.0f ms: %s\n", stats.p99, kTargetP99Ms,
                stats.p99 <= kTargetP99Ms ? "ok" : "MISS");
    std::printf("  UpBeat +%.1f bytes per group <= %.0f: %s\n", up_per_group, kTargetBytesPerGroup,
                up_per_group <= kTargetBytesPerGroup ? "ok" : "MISS");
    std::printf("  DownBeat %+.1f bytes per group (nothing changed) <= %.0f: %s\n", down_per_group,
                kTargetBytesPerGroup, down_per_group <= kTargetBytesPerGroup ? "ok" : "MISS");
  }
  std::printf("%s; total run %.0f s; load average at end: %s\n",
              ok ? "every delivery checked" : "checks FAILED", bench::seconds_since(started),
              bench::load_average().c_str());
  return ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_config_bench", "config-bench",
                                             parse_options, run);
}
