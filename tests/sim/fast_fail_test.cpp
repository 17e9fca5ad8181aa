// Fast-fail scenarios on a virtual clock: consumers call a service through
// their agents' picks, a provider starts timing out, the callers report it,
// the hub that holds it isolates it and the isolation is pushed to every
// consumer (hub/isolation.hpp, hub/push_gate.hpp, agent/failure_reporter.hpp).
//  (a) Same tier, 1% loss: 200 consumers, 10 providers, one times out. Every
//      consumer stops picking it within the bounds below, no healthy provider
//      is isolated, and once the isolation time is over the recovered
//      provider is picked again.
//  (b) Cross tier: a provider in dc1 times out for dc2's callers; their
//      reports travel dc2's L1 -> L2 -> dc1's L1, which isolates it; the
//      isolation comes back up and is pushed down to dc2's consumers. No
//      loss here (what loss costs is (a)'s subject): the bound holds for all.
//  (d) Scenario (a) twice with one seed: identical traces.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <variant>
#include <vector>

#include "cascade/sim/call_load.hpp"
#include "cascade/sim/tiered_world.hpp"
#include "cascade/sim/world.hpp"
#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

// ---- timing of both scenarios
constexpr double kLoss = 0.01;
constexpr Duration kCallPeriod{250};    // each consumer calls the service 4 times a second
constexpr Duration kReportBatch{5};     // FailureReporterConfig::batch_delay
constexpr Duration kPushDelay{5};       // PushConfig::delay: a hub's pushes coalesce this long
constexpr Duration kUplinkChange{20};   // UplinkConfig::change_delay
constexpr Duration kReplyTimeout{500};  // AgentCoreConfig::reply_timeout: a lost beat goes again
constexpr Duration kIsolation{10'000};  // IsolationPolicy::base_isolation, jittered by 10%
constexpr Duration kShortestIsolation = kIsolation - kIsolation / 10;
constexpr Duration kLongestIsolation = kIsolation + kIsolation / 10;

// A consumer whose push was lost (or arrived onto a version it no longer
// held) learns at its next beat: the beat declares the version it holds and
// the reply carries the change. That beat leaves within one jittered interval;
// if it or its reply is lost, it goes again one reply timeout later.
constexpr Duration lost_push_bound(Duration max_delay) {
  return kLongestBeatInterval + kReplyTimeout + 2 * max_delay;
}

std::int64_t ms(Duration d) {
  return d.count();
}

// The value below which `share` of the sorted `values` lie (nearest rank).
std::int64_t percentile(std::vector<std::int64_t> values, double share) {
  if (values.empty()) return -1;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<std::size_t>(share * static_cast<double>(values.size()) + 0.999);
  return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
}

// What one consumer saw of the bad provider.
struct ConsumerView {
  std::optional<MonoTime> learned;        // its cache first showed the address isolated
  bool by_push = false;                   // ... through a pushed DownBeat
  std::optional<MonoTime> last_bad_pick;  // before the hub readmitted it
  std::optional<MonoTime> picked_again;   // first pick after the readmission
  bool push_ignored = false;  // a push of the isolation arrived and left its cache as it was
  bool operator==(const ConsumerView&) const = default;
};

bool is_push(const proto::Message& m) {
  const auto* down = std::get_if<proto::DownBeat>(&m);
  return down != nullptr && down->push;
}

// What every consumer saw of the bad provider. Both scenarios feed it what a
// consumer received (from their observers) and what it picked (from their
// calls); one piece, so (a) and (b) measure "learned" and "picked" alike.
struct ConsumerViews {
  ConsumerViews(const std::vector<std::size_t>& consumers, proto::ServiceKey used,
                std::string bad_address)
      : service(std::move(used)), bad(std::move(bad_address)), views(consumers.size()) {
    for (std::size_t i = 0; i < consumers.size(); ++i)
      index.emplace(consumers[i], i);
  }

  // `agent` processed `m`: notes when its cache first listed the bad address
  // isolated, and whether a push told it; any other address listed isolated
  // goes to healthy_isolated. Returns its view (nullptr: not a consumer, or
  // nothing cached). `WorldT`: World or TieredWorld.
  template <typename WorldT>
  ConsumerView* received(const WorldT& world, MonoTime now, std::size_t agent,
                         const proto::Message& m) {
    const auto it = index.find(agent);
    if (it == index.end()) return nullptr;
    const auto cached = world.cached_instances(agent, service);
    if (!cached) return nullptr;
    ConsumerView& view = views[it->second];
    for (const auto& in : *cached) {
      if (in.health != proto::Health::kIsolated) continue;
      if (in.address != bad) {
        healthy_isolated.insert(world.spec(agent).node_id + " " + in.address);
      } else if (!view.learned) {
        view.learned = now;
        view.by_push = is_push(m);
      }
    }
    return &view;
  }

  // A consumer's call: its last pick of the bad provider before the hub
  // readmitted it, and its first pick after.
  void picked(const Call& call, const std::optional<MonoTime>& readmitted_at) {
    if (call.picked.address != bad) return;
    ConsumerView& view = views[index.at(call.consumer)];
    if (!readmitted_at)
      view.last_bad_pick = call.at;
    else if (!view.picked_again)
      view.picked_again = call.at;
  }

  proto::ServiceKey service;
  std::string bad;                           // the bad provider's address
  std::map<std::size_t, std::size_t> index;  // agent -> consumer number
  std::vector<ConsumerView> views;           // by consumer number
  std::set<std::string> healthy_isolated;    // "consumer address" a cache showed isolated
};

// When a group of agents starts: agent n at now + first + n * step.
struct Stagger {
  Duration first{};
  Duration step{};
};

// Adds the agents and starts them staggered. `hubs`: what TieredWorld::
// add_agent takes after the spec (nothing for World). Returns their indexes.
template <typename WorldT, typename... Hubs>
std::vector<std::size_t> start_staggered(WorldT& world, const std::vector<AgentSpec>& specs,
                                         Stagger when, const Hubs&... hubs) {
  std::vector<std::size_t> agents;
  for (std::size_t n = 0; n < specs.size(); ++n) {
    agents.push_back(world.add_agent(specs[n], hubs...));
    const auto offset = when.first + when.step * static_cast<std::int64_t>(n);
    world.start_at(agents.back(), world.now() + offset);
  }
  return agents;
}

// `count` providers of `service`, one instance each: provider n registers
// "<service>-<n>" at "<subnet><n + 1>:<port>" from node "<node_prefix><instance>".
std::vector<AgentSpec> provider_specs(const proto::ServiceKey& service, std::size_t count,
                                      const std::string& node_prefix, const std::string& subnet,
                                      const std::string& port) {
  std::vector<AgentSpec> specs;
  for (std::size_t n = 0; n < count; ++n) {
    proto::Registration reg;
    reg.service = service;
    reg.instance.id = service.name + "-" + std::to_string(n);
    reg.instance.address = subnet + std::to_string(n + 1) + ":" + port;
    specs.push_back(AgentSpec{node_prefix + reg.instance.id, {reg}, {}});
  }
  return specs;
}

// `count` consumers of `service`, "<node_prefix><n>".
std::vector<AgentSpec> consumer_specs(const proto::ServiceKey& service, std::size_t count,
                                      const std::string& node_prefix) {
  std::vector<AgentSpec> specs;
  for (std::size_t n = 0; n < count; ++n)
    specs.push_back(AgentSpec{node_prefix + std::to_string(n), {}, {service}});
  return specs;
}

// The one instance a provider spec registers.
const proto::Instance& instance_of(const AgentSpec& provider) {
  return provider.provides.front().instance;
}

// ---------------------------------------------------------------- (a)

constexpr std::size_t kProviders = 10;
constexpr std::size_t kConsumers = 200;
constexpr Duration kLanDelay{20};  // one datacenter: 1..20 ms one way
constexpr Duration kSameTierWarmUp{10'000};
constexpr Duration kCallsBeforeFault{2000};
constexpr Duration kRecoverAfter{5000};  // the provider answers again (while still isolated)

// ---- Bounds of (a).
// Detection: from the fault each consumer calls once per period, and its round
// robin lands on the bad provider one call in ten, so about 20 of the 200
// consumers call it within the first period. Two distinct callers isolate it
// (IsolationPolicy::min_reporters); their reports leave after the batch delay
// and take one network delay. A lost report (1%) leaves ~18 other callers.
constexpr Duration kDetectBound = kCallPeriod + kReportBatch + kLanDelay;  // 275 ms
// The push: the hub pushes at the tick after the coalescing delay; it takes
// one network delay to each consumer.
constexpr Duration kPushSpread = kPushDelay + kLanDelay;  // 25 ms
// Every consumer the push reached stops picking the provider within:
constexpr Duration kPushedStopBound = kDetectBound + kPushSpread;  // 300 ms
// Every consumer, the ones whose push was lost included (pushes are not
// acknowledged; the next beat repairs a lost one):
constexpr Duration kStopBound = kDetectBound + lost_push_bound(kLanDelay);  // 3015 ms
// Only a consumer whose push was lost (1%) is slower than kPushedStopBound
// (one whose beat reply overtook the push learns as fast, by the beat): ~2 of
// the 200 expected, more than 10 with a probability < 1e-5.
constexpr std::size_t kMinFast = kConsumers - 10;
// After the readmission every consumer learns it within the same bounds and
// its round robin reaches the provider within one turn over the 10 providers.
constexpr Duration kPickAgainBound = lost_push_bound(kLanDelay) + kProviders * kCallPeriod;

proto::ServiceKey pay_service() {
  return {"pay", std::string(proto::kDefaultGroup)};
}

WorldConfig same_tier_config(std::uint64_t seed) {
  WorldConfig c = standard_config(seed);
  c.network = NetworkConfig{kLoss, Duration{1}, kLanDelay};
  return c;
}

struct SameTierRun {
  std::uint64_t trace_hash = 0;
  std::uint64_t messages = 0;
  MonoTime fault{};
  std::optional<MonoTime> isolated_at;  // at the hub
  std::optional<MonoTime> readmitted_at;
  std::vector<ConsumerView> consumers;
  std::set<std::string> healthy_isolated;  // "consumer address" a cache showed isolated
  std::size_t warm_consumers = 0;          // holding all 10 providers before the fault
  std::uint64_t isolations = 0;
  std::uint64_t isolations_capped = 0;
  std::uint64_t pushes = 0;
  std::uint64_t signals = 0;
  CallLoadStats calls;
  std::uint64_t failed_after_recovery = 0;
  std::uint64_t unroutable = 0;  // pushes for a consumer the hub had no route to
};

// Watches the bad provider: at the hub (isolated, readmitted) and in every
// consumer's cache, at the moments they can change.
class IsolationWatch final : public WorldObserver {
 public:
  IsolationWatch(const World& world, ConsumerViews& views, std::string bad_id, SameTierRun& run)
      : world_(world), views_(views), bad_id_(std::move(bad_id)), run_(run) {}

  void on_agent_received(MonoTime now, std::size_t agent, const proto::Message& m) override {
    ConsumerView* view = views_.received(world_, now, agent, m);
    if (view != nullptr && is_push(m) && !view->learned && run_.isolated_at && !run_.readmitted_at)
      view->push_ignored = true;
  }
  void on_hub_received(MonoTime now, std::size_t, const proto::Message&) override { check(now); }
  void on_hub_tick(MonoTime now) override { check(now); }

 private:
  void check(MonoTime now) {
    const auto* svc = world_.hub().registry().find(pay_service());
    if (svc == nullptr || !svc->instances.contains(bad_id_)) return;
    const bool isolated = svc->instances.at(bad_id_).health() == proto::Health::kIsolated;
    if (isolated && !run_.isolated_at) run_.isolated_at = now;
    if (!isolated && run_.isolated_at && !run_.readmitted_at) run_.readmitted_at = now;
  }

  const World& world_;
  ConsumerViews& views_;
  std::string bad_id_;
  SameTierRun& run_;
};

SameTierRun run_same_tier(std::uint64_t seed) {
  spdlog::set_level(spdlog::level::err);  // every isolation is logged at warn
  World world(same_tier_config(seed));
  const auto providers = provider_specs(pay_service(), kProviders, "node-", "10.0.1.", "8443");
  start_staggered(world, providers, {Duration{0}, Duration{50}});
  const auto consumers = start_staggered(
      world, consumer_specs(pay_service(), kConsumers, "consumer-"), {Duration{1000}, Duration{5}});
  const proto::Instance& bad = instance_of(providers[3]);

  SameTierRun run;
  ConsumerViews views(consumers, pay_service(), bad.address);
  IsolationWatch watch(world, views, bad.id, run);
  world.set_observer(&watch);

  world.run_for(kSameTierWarmUp);
  for (auto c : consumers)
    if (world.candidates(c, pay_service()).size() == kProviders) ++run.warm_consumers;

  // The provider times out from the fault until it recovers.
  std::optional<MonoTime> fault;
  std::optional<MonoTime> recovered;
  const auto fails = [&](MonoTime now, std::size_t, const std::string& address) {
    return address == bad.address && fault && now >= *fault && !(recovered && now >= *recovered);
  };
  const auto on_call = [&](const Call& call) {
    if (call.failed && recovered && call.at >= *recovered) ++run.failed_after_recovery;
    views.picked(call, run.readmitted_at);
  };
  CallLoad<World> load(world, pay_service(), consumers, kCallPeriod, fails, on_call);
  load.start();
  world.run_for(kCallsBeforeFault);

  fault = world.now();
  run.fault = *fault;
  world.at(*fault + kRecoverAfter, [&] { recovered = world.now(); });
  world.run_for(kRecoverAfter + kLongestIsolation + kPickAgainBound + Duration{1000});

  run.consumers = std::move(views.views);
  run.healthy_isolated = std::move(views.healthy_isolated);
  run.trace_hash = world.network().trace_hash();
  run.messages = world.network().stats().sent;
  run.isolations = world.hub().counters().isolations;
  run.isolations_capped = world.hub().counters().isolations_capped;
  run.pushes = world.hub().counters().pushes;
  run.signals = world.hub().counters().signals_counted;
  run.calls = load.stats();
  run.unroutable = world.hub_stats().node_messages_unroutable;
  EXPECT_THAT(totals_drift(world), IsEmpty());
  return run;
}

TEST(SimFastFailTest, EveryConsumerStopsPickingATimingOutProviderWithinTheBoundAndPicksItAgain) {
  const SameTierRun run = run_same_tier(1);
  ASSERT_EQ(run.warm_consumers, kConsumers) << "every consumer holds the 10 providers";

  // The hub isolated the bad provider, and nothing else.
  ASSERT_TRUE(run.isolated_at.has_value()) << "no isolation";
  EXPECT_LE(*run.isolated_at - run.fault, kDetectBound);
  EXPECT_EQ(run.isolations, 1u) << "a healthy provider was isolated";
  EXPECT_EQ(run.isolations_capped, 0u);
  EXPECT_THAT(run.healthy_isolated, IsEmpty());

  // Every consumer stopped picking it: it learned, and never picked it
  // afterwards until the readmission.
  std::vector<std::int64_t> spread;  // learned - isolated, ms
  std::vector<std::int64_t> stops;   // last bad pick - fault, ms (consumers that picked it)
  std::size_t pushed = 0;
  std::size_t fast = 0;
  for (std::size_t c = 0; c < kConsumers; ++c) {
    SCOPED_TRACE("consumer-" + std::to_string(c));
    const ConsumerView& view = run.consumers[c];
    ASSERT_TRUE(view.learned.has_value()) << "never saw the isolation";
    spread.push_back(ms(*view.learned - *run.isolated_at));
    EXPECT_LE(*view.learned - run.fault, kStopBound);
    if (*view.learned - run.fault <= kPushedStopBound) ++fast;
    if (view.by_push) {
      ++pushed;
      EXPECT_LE(*view.learned - run.fault, kPushedStopBound);
    }
    if (view.last_bad_pick) {
      stops.push_back(ms(*view.last_bad_pick - run.fault));
      EXPECT_LE(*view.last_bad_pick, *view.learned)
          << "picked it after its cache showed it isolated";
    }
  }
  EXPECT_GE(fast, kMinFast) << "the push is the way consumers learn; the beat the exception";
  const auto ignored =
      static_cast<std::size_t>(std::count_if(run.consumers.begin(), run.consumers.end(),
                                             [](const ConsumerView& v) { return v.push_ignored; }));

  // The isolation ends after its time; the recovered provider is picked again.
  ASSERT_TRUE(run.readmitted_at.has_value()) << "never readmitted";
  EXPECT_GE(*run.readmitted_at - *run.isolated_at, kShortestIsolation);
  EXPECT_LE(*run.readmitted_at - *run.isolated_at, kLongestIsolation);
  std::vector<std::int64_t> again;
  for (std::size_t c = 0; c < kConsumers; ++c) {
    SCOPED_TRACE("consumer-" + std::to_string(c));
    const auto& picked = run.consumers[c].picked_again;
    ASSERT_TRUE(picked.has_value()) << "never picked the readmitted provider";
    EXPECT_LE(*picked - *run.readmitted_at, kPickAgainBound);
    again.push_back(ms(*picked - *run.readmitted_at));
  }
  EXPECT_EQ(run.failed_after_recovery, 0u);
  EXPECT_GT(run.calls.failed, 0u);
  EXPECT_EQ(run.calls.no_candidate, 0u);
  EXPECT_EQ(run.unroutable, 0u);

  RecordProperty("detect_ms", std::to_string(ms(*run.isolated_at - run.fault)));
  RecordProperty("spread_p50_ms", std::to_string(percentile(spread, 0.5)));
  RecordProperty("spread_p99_ms", std::to_string(percentile(spread, 0.99)));
  RecordProperty("spread_max_ms", std::to_string(percentile(spread, 1.0)));
  RecordProperty("last_bad_pick_max_ms", std::to_string(percentile(stops, 1.0)));
  RecordProperty("learned_by_push", std::to_string(pushed));
  RecordProperty("learned_within_push_bound", std::to_string(fast));
  RecordProperty("push_arrived_without_effect", std::to_string(ignored));
  RecordProperty("isolation_ms", std::to_string(ms(*run.readmitted_at - *run.isolated_at)));
  RecordProperty("picked_again_p50_ms", std::to_string(percentile(again, 0.5)));
  RecordProperty("picked_again_max_ms", std::to_string(percentile(again, 1.0)));
  RecordProperty("failed_calls", std::to_string(run.calls.failed));
  RecordProperty("signals_counted", std::to_string(run.signals));
  RecordProperty("pushes", std::to_string(run.pushes));
}

// ---------------------------------------------------------------- (d)

TEST(SimFastFailTest, SameSeedGivesAnIdenticalTraceOfTheIsolation) {
  const SameTierRun first = run_same_tier(7);
  const SameTierRun second = run_same_tier(7);
  ASSERT_TRUE(first.isolated_at.has_value());
  EXPECT_EQ(first.trace_hash, second.trace_hash);
  EXPECT_EQ(first.messages, second.messages);
  EXPECT_EQ(first.isolated_at, second.isolated_at);
  EXPECT_EQ(first.readmitted_at, second.readmitted_at);
  EXPECT_EQ(first.pushes, second.pushes);
  std::vector<std::string> differ;
  for (std::size_t c = 0; c < kConsumers; ++c)
    if (!(first.consumers[c] == second.consumers[c])) differ.push_back(std::to_string(c));
  EXPECT_THAT(differ, IsEmpty()) << "consumers whose view of the isolation or picks differ";
}

// ---------------------------------------------------------------- (b)

constexpr std::size_t kDc1Providers = 6;
constexpr std::size_t kDc2Consumers = 40;
constexpr Duration kWanDelay{40};  // between datacenters and within: 1..40 ms one way, no loss
constexpr Duration kL1Lease{6000};
constexpr Duration kL2Lease{9000};
constexpr Duration kTierWarmUp{12'000};

// ---- Bounds of (b).
// Detection: 40 consumers call 4 times a second over 6 providers, ~27 calls
// a second to the bad one: two distinct callers within two periods (each
// consumer's two calls reach it with 1/3; fewer than two of the 40 with < 1e-5).
constexpr Duration kCrossDetect = 2 * kCallPeriod;
// The report goes consumer -> dc2's L1 -> L2 -> dc1's L1 (three hops; each
// hub routes it at once), which isolates it.
constexpr Duration kReportPath = kReportBatch + 3 * kWanDelay;  // 125 ms
// The isolation travels back: dc1's uplink carries it up after its coalescing
// delay, L2 pushes it to dc2's L1 (a consumer of the service there), which
// pushes it to its consumers.
constexpr Duration kIsolationPath =
    kUplinkChange + kWanDelay + 2 * (kPushDelay + kWanDelay);  // 150 ms
// Every dc2 consumer stops picking it within (pulls alone would take two
// beat intervals: dc2's uplink, then the consumer's):
constexpr Duration kCrossStopBound = kCrossDetect + kReportPath + kIsolationPath;  // 775 ms

proto::ServiceKey ledger_service() {
  return {"ledger", std::string(proto::kDefaultGroup)};
}

// Watches the bad provider at the L1 that owns it (isolated) and in every dc2
// consumer's cache.
class CrossTierWatch final : public TieredObserver {
 public:
  CrossTierWatch(const TieredWorld& world, ConsumerViews& views, std::size_t owner,
                 std::string bad_id)
      : world_(world), views_(views), owner_(owner), bad_id_(std::move(bad_id)) {}

  void on_agent_received(MonoTime now, std::size_t agent, const proto::Message& m) override {
    views_.received(world_, now, agent, m);
  }
  void on_hub_received(MonoTime now, std::size_t hub, Address, const proto::Message&) override {
    check(now, hub);
  }
  void on_hub_tick(MonoTime now, std::size_t hub) override { check(now, hub); }

  std::optional<MonoTime> isolated_at;  // at the owning L1

 private:
  void check(MonoTime now, std::size_t hub) {
    if (hub != owner_ || isolated_at || !world_.hub_up(hub)) return;
    const auto* svc = world_.hub(hub).registry().find(ledger_service());
    if (svc != nullptr && svc->instances.contains(bad_id_) &&
        svc->instances.at(bad_id_).health() == proto::Health::kIsolated)
      isolated_at = now;
  }

  const TieredWorld& world_;
  ConsumerViews& views_;
  std::size_t owner_;
  std::string bad_id_;
};

TEST(SimFastFailTest, DcTwoConsumersStopPickingATimingOutProviderOfDcOneWithinTheBound) {
  spdlog::set_level(spdlog::level::err);
  TieredWorldConfig config;
  config.seed = 3;
  config.network = NetworkConfig{0.0, Duration{1}, kWanDelay};
  config.audit_interval = kTotalsAudit;
  TieredWorld world(config);
  const auto l2 = world.add_hub(TierHubSpec{"l2", 2, kL2Lease, {}, "global"});
  const auto dc1 = world.add_hub(TierHubSpec{"dc1-l1", 1, kL1Lease, {l2}, "dc1"});
  const auto dc2 = world.add_hub(TierHubSpec{"dc2-l1", 1, kL1Lease, {l2}, "dc2"});

  const auto providers =
      provider_specs(ledger_service(), kDc1Providers, "dc1-node-", "10.1.0.", "7000");
  start_staggered(world, providers, {Duration{0}, Duration{100}}, std::vector<std::size_t>{dc1});
  // Consumers start once the providers have reached L2 (a first query that
  // finds nothing would wait for the next use of the service).
  const auto consumers =
      start_staggered(world, consumer_specs(ledger_service(), kDc2Consumers, "dc2-consumer-"),
                      {Duration{3000}, Duration{25}}, std::vector<std::size_t>{dc2});
  const proto::Instance& bad = instance_of(providers[0]);
  ConsumerViews views(consumers, ledger_service(), bad.address);
  CrossTierWatch watch(world, views, dc1, bad.id);
  world.set_observer(&watch);

  world.run_for(kTierWarmUp);
  for (auto c : consumers)
    ASSERT_EQ(world.candidates(c, ledger_service()).size(), kDc1Providers)
        << world.spec(c).node_id << " does not hold dc1's providers";

  const MonoTime fault = world.now();
  CallLoad<TieredWorld> load(
      world, ledger_service(), consumers, kCallPeriod,
      [&](MonoTime, std::size_t, const std::string& address) { return address == bad.address; },
      [&](const Call& call) { views.picked(call, std::nullopt); });  // never readmitted here
  load.start();
  world.run_for(kCrossStopBound + Duration{3000});  // well within the isolation time

  ASSERT_TRUE(watch.isolated_at.has_value()) << "dc1's L1 never isolated it";
  EXPECT_LE(*watch.isolated_at - fault, kCrossDetect + kReportPath);
  EXPECT_EQ(world.hub(dc1).counters().isolations, 1u);
  EXPECT_GE(world.hub(dc2).counters().signals_sent_up, 2u) << "dc2's L1 did not send reports up";
  EXPECT_GE(world.hub(l2).counters().signals_sent_down, 2u) << "L2 did not route them down";
  EXPECT_THAT(views.healthy_isolated, IsEmpty());

  std::vector<std::int64_t> spread;
  std::size_t pushed = 0;
  for (std::size_t c = 0; c < consumers.size(); ++c) {
    SCOPED_TRACE(world.spec(consumers[c]).node_id);
    const ConsumerView& view = views.views[c];
    ASSERT_TRUE(view.learned.has_value()) << "never saw the isolation";
    spread.push_back(ms(*view.learned - *watch.isolated_at));
    EXPECT_LE(*view.learned - fault, kCrossStopBound);
    if (view.by_push) ++pushed;
    if (view.last_bad_pick) {  // some learned before their round robin reached it
      EXPECT_LE(*view.last_bad_pick, *view.learned)
          << "picked it after its cache showed it isolated";
    }
  }
  // A consumer whose beat reply overtook the push learned from the beat.
  EXPECT_GE(world.hub(l2).counters().pushes, 1u) << "L2 did not push to dc2's L1";
  EXPECT_GE(world.hub(dc2).counters().pushes, 1u) << "dc2's L1 did not push to its consumers";
  RecordProperty("detect_ms", std::to_string(ms(*watch.isolated_at - fault)));
  RecordProperty("spread_p50_ms", std::to_string(percentile(spread, 0.5)));
  RecordProperty("spread_p99_ms", std::to_string(percentile(spread, 0.99)));
  RecordProperty("spread_max_ms", std::to_string(percentile(spread, 1.0)));
  RecordProperty("learned_by_push", std::to_string(pushed));
  EXPECT_THAT(totals_drift(world), IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
