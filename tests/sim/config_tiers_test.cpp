// Config scenario: 2,000 subscribers in two datacenters (each an L1 hub under
// one L2) on a lossy network follow config groups through a sequence of
// changes, an L2 outage and its heal (docs/design-config.md).
//
// After each change every subscriber holds what a model of the two tiers
// says (L1's own keys over L2's; values and origins), within a bound derived
// from the timing below. During the outage each L1 serves its last upper copy
// and its own changes still reach its datacenter; after the heal L2's changes
// reach everyone again. Through the outage every subscriber's copy is marked
// stale (its L1 names the group in DownBeat.stale_configs with the age of its
// upper copy) and the values are kept.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cascade/sim/tiered_world.hpp"
#include "cascade/tests/sim/fleet.hpp"
#include "cascade/tests/sim/tier_fleet.hpp"

namespace cascade::sim::testing {
namespace {

constexpr std::size_t kSubscribers = 2000;  // half in each datacenter
constexpr double kConfigLoss = 0.05;        // every message, both directions
constexpr Duration kPushDelay{5};           // PushConfig::delay default: pushes coalesce this long
constexpr std::uint32_t kRetriesPerBeat = 3;  // AgentCoreConfig default

// ---- The bound every change is asserted against.
//
// A change travels two hops (L2 -> L1's uplink -> subscriber; a change at an
// L1 only the second). On each hop it is pushed at once (after the push
// coalescing delay and one network delay); if the push is lost, the receiver's
// next beat declares the version it holds and the reply carries the delta:
// within one jittered beat interval, a round trip and a flush. Under loss
// that beat or its reply may be lost too: it goes again after a reply
// timeout, up to kRetriesPerBeat times an interval. With 5% loss a hop needs
// more than that only if the push and four exchanges in a row are lost
// (~5e-6), so the bound holds for every one of the 2,000 subscribers.
constexpr Duration kHop =
    kLongestBeatInterval + kRetriesPerBeat * kReplyTimeout + kRoundTrip + kFlushInterval;  // 3.82 s
constexpr Duration kChangeBound = 2 * kHop;                                                // 7.64 s
// After the heal an L1's uplink gets through within kRejoin (tier_fleet.hpp:
// its failover backoff is capped by L2's lease); then the change takes its hops.
constexpr Duration kHealChangeBound = kRejoin + kChangeBound;  // 11.91 s
// Agents start over 2 s; the first answer of a group waits for L1's upper copy.
constexpr Duration kWarmUp{12'000};
// Long enough for every lease across the cut to lapse (L1's at L2: 9 s) and
// for the uplinks to fail over and back off several times.
constexpr Duration kOutage{30'000};

const std::string kOrders = "orders";
const std::string kBilling = "billing";

std::string dc_name(std::size_t dc) {
  return "dc" + std::to_string(dc);
}

// What each tier set, and what a subscriber of each datacenter should hold:
// an L1's own key wins in its datacenter; removing it serves L2's again.
class TwoTierModel {
 public:
  struct Expected {
    std::string group;
    std::string key;
    std::optional<std::string> value;  // nullopt: no tier has the key
    std::uint32_t tier = 0;
    std::string hub;
  };
  using Key = std::pair<std::string, std::string>;  // group, key

  void set_l2(const std::string& group, const std::vector<proto::ConfigEdit>& edits) {
    apply(l2_, group, edits);
  }
  void set_l1(std::size_t dc, const std::string& group,
              const std::vector<proto::ConfigEdit>& edits) {
    apply(l1_.at(dc), group, edits);
  }
  std::vector<Expected> expected(std::size_t dc) const {
    std::vector<Expected> out;
    for (const auto& key : keys_) {
      Expected e{key.first, key.second, std::nullopt, 0, ""};
      if (const auto it = l1_.at(dc).find(key); it != l1_.at(dc).end()) {
        e.value = it->second;
        e.tier = 1;
        e.hub = "l1-" + dc_name(dc);
      } else if (const auto up = l2_.find(key); up != l2_.end()) {
        e.value = up->second;
        e.tier = 2;
        e.hub = "l2";
      }
      out.push_back(std::move(e));
    }
    return out;
  }

 private:
  void apply(std::map<Key, std::string>& tier, const std::string& group,
             const std::vector<proto::ConfigEdit>& edits) {
    for (const auto& edit : edits) {
      const Key key{group, edit.key};
      keys_.push_back(key);
      if (edit.value)
        tier.insert_or_assign(key, *edit.value);
      else
        tier.erase(key);
    }
    std::sort(keys_.begin(), keys_.end());
    keys_.erase(std::unique(keys_.begin(), keys_.end()), keys_.end());
  }

  std::map<Key, std::string> l2_;
  std::array<std::map<Key, std::string>, 2> l1_;
  std::vector<Key> keys_;  // every key any tier ever set
};

// When each subscriber first held the model's values after a change (the
// config_changed hook: no polling between events).
class Convergence final : public TieredObserver {
 public:
  Convergence(const TieredWorld& world, std::vector<std::size_t> dc_of)
      : world_(world),
        dc_of_(std::move(dc_of)),
        at_(dc_of_.size()),
        unaffected_(dc_of_.size(), false) {}

  // From now on, a subscriber converges when it holds `expected[its dc]`.
  void expect(std::array<std::vector<TwoTierModel::Expected>, 2> expected) {
    expected_ = std::move(expected);
    since_ = world_.now();
    converged_ = 0;
    for (std::size_t a = 0; a < at_.size(); ++a) {
      at_[a].reset();
      check(a, since_);
      unaffected_[a] = at_[a].has_value();
    }
  }
  bool all() const { return converged_ == at_.size(); }
  // Subscribers not holding the model's values now.
  std::vector<std::string> off() const {
    std::vector<std::string> out;
    for (std::size_t a = 0; a < at_.size(); ++a)
      if (!holds(a)) out.push_back(world_.spec(a).node_id);
    return out;
  }
  // Subscribers that took longer than `bound` (or never converged).
  std::vector<std::string> later_than(Duration bound) const {
    std::vector<std::string> out;
    for (std::size_t a = 0; a < at_.size(); ++a)
      if (!at_[a] || *at_[a] - since_ > bound) out.push_back(world_.spec(a).node_id);
    return out;
  }
  // The slowest subscriber's time since expect(), and percentiles, among
  // the subscribers the change was for (not those that held it already).
  Duration slowest() const { return percentile(1.0); }
  Duration percentile(double p) const {
    std::vector<Duration> took;
    for (std::size_t a = 0; a < at_.size(); ++a)
      if (at_[a] && !unaffected_[a]) took.push_back(*at_[a] - since_);
    if (took.empty()) return Duration{0};
    std::sort(took.begin(), took.end());
    const auto i = static_cast<std::size_t>(p * static_cast<double>(took.size() - 1));
    return took[i];
  }

  void on_agent_config_changed(MonoTime t, std::size_t agent, const std::string&) override {
    if (agent < at_.size() && !at_[agent]) check(agent, t);
  }

 private:
  void check(std::size_t agent, MonoTime t) {
    if (!holds(agent)) return;
    at_[agent] = t;
    ++converged_;
  }
  bool holds(std::size_t agent) const {
    const auto& spec = world_.spec(agent);
    for (const auto& e : expected_[dc_of_[agent]]) {
      if (std::find(spec.configs.begin(), spec.configs.end(), e.group) == spec.configs.end())
        continue;
      if (world_.state(agent) == AgentState::kNew) return false;
      const auto* entry = world_.config_value(agent, e.group, e.key);
      if (!e.value) {
        if (entry != nullptr) return false;
        continue;
      }
      if (entry == nullptr || entry->value != *e.value || entry->origin.tier != e.tier ||
          entry->origin.hub != e.hub)
        return false;
    }
    return true;
  }

  const TieredWorld& world_;
  std::vector<std::size_t> dc_of_;
  std::vector<std::optional<MonoTime>> at_;
  std::vector<bool> unaffected_;  // held the values already when the change was made
  std::array<std::vector<TwoTierModel::Expected>, 2> expected_{};
  MonoTime since_{};
  std::size_t converged_ = 0;
};

TieredWorldConfig config_world(std::uint64_t seed) {
  TieredWorldConfig c = tier_config(seed, /*eviction_protection=*/true);
  c.network.drop_probability = kConfigLoss;
  return c;
}

class SimConfigTiersTest : public ::testing::Test {
 protected:
  SimConfigTiersTest() : world(config_world(/*seed=*/7)) {
    spdlog::set_level(spdlog::level::err);
    l2 = world.add_hub({"l2", 2, kL2Lease, {}, "global"});
    for (std::size_t d = 0; d < 2; ++d)
      l1[d] = world.add_hub({"l1-" + dc_name(d), 1, kL1Lease, {l2}, dc_name(d)});
    std::vector<std::size_t> dc_of;
    // Datacenters interleaved; every subscriber follows orders, every other
    // one billing too; all start over two seconds.
    for (std::size_t n = 0; n < kSubscribers; ++n) {
      const std::size_t d = n % 2;
      std::vector<std::string> groups{kOrders};
      if ((n / 2) % 2 == 0) groups.push_back(kBilling);
      const auto agent = world.add_agent(
          AgentSpec{dc_name(d) + "-sub-" + std::to_string(n / 2), {}, {}, "", std::move(groups)},
          {l1[d]});
      dc_of.push_back(d);
      world.start_at(agent, world.now() + Duration{2000 * static_cast<std::int64_t>(n) /
                                                   static_cast<std::int64_t>(kSubscribers)});
    }
    watch = std::make_unique<Convergence>(world, std::move(dc_of));
    world.set_observer(watch.get());
  }
  void TearDown() override {
    EXPECT_THAT(totals_drift(world), ::testing::IsEmpty()) << "running totals of the hubs";
  }

  void edit_l2(const std::string& group, const std::vector<proto::ConfigEdit>& edits) {
    ASSERT_TRUE(std::holds_alternative<std::vector<hub::ConfigHistoryRecord>>(
        world.edit_config(l2, group, edits)));
    model.set_l2(group, edits);
  }
  void edit_l1(std::size_t dc, const std::string& group,
               const std::vector<proto::ConfigEdit>& edits) {
    ASSERT_TRUE(std::holds_alternative<std::vector<hub::ConfigHistoryRecord>>(
        world.edit_config(l1[dc], group, edits)));
    model.set_l1(dc, group, edits);
  }
  // The model changed just now: every subscriber must hold it within `bound`.
  // Runs until all do (or the bound passed), then a little longer to see
  // that they stay.
  void expect_convergence(const std::string& what, Duration bound) {
    expect_convergence(what, bound, model);
  }
  void expect_convergence(const std::string& what, Duration bound, const TwoTierModel& m) {
    watch->expect({m.expected(0), m.expected(1)});
    const auto deadline = world.now() + bound;
    while (!watch->all() && world.now() < deadline)
      world.run_for(Duration{50});
    EXPECT_THAT(watch->later_than(bound), ::testing::IsEmpty())
        << what << ": subscribers that did not converge within " << bound.count() << " ms";
    world.run_for(Duration{500});
    EXPECT_THAT(watch->off(), ::testing::IsEmpty()) << what << ": and stayed";
    std::printf("%-44s p50 %5lld ms  p99 %5lld ms  max %5lld ms  (bound %lld ms)\n", what.c_str(),
                static_cast<long long>(watch->percentile(0.5).count()),
                static_cast<long long>(watch->percentile(0.99).count()),
                static_cast<long long>(watch->slowest().count()),
                static_cast<long long>(bound.count()));
  }
  // The upper copy L1 serves, as keys (L1's own keys not counted).
  std::size_t upper_keys(std::size_t dc, const std::string& group) const {
    const auto* served = world.hub(l1[dc]).config_centre().groups().served(group);
    if (served == nullptr) return 0;
    return static_cast<std::size_t>(
        std::count_if(served->entries.begin(), served->entries.end(),
                      [](const auto& kv) { return kv.second.origin.tier == 2; }));
  }

  TieredWorld world;
  std::size_t l2 = 0;
  std::array<std::size_t, 2> l1{};
  TwoTierModel model;
  std::unique_ptr<Convergence> watch;
};

TEST_F(SimConfigTiersTest, ChangesAtEachTierAndAnL2OutageConvergeForTwoThousandSubscribers) {
  // Set before anyone follows: the first answers carry it.
  edit_l2(kOrders, {{"timeout_ms", "300"}});
  edit_l2(kBilling, {{"mode", "safe"}});
  watch->expect({model.expected(0), model.expected(1)});
  world.run_for(kWarmUp);
  ASSERT_THAT(watch->off(), ::testing::IsEmpty()) << "after warm-up";

  edit_l2(kOrders, {{"timeout_ms", "250"}});
  expect_convergence("a change at L2", kChangeBound);

  edit_l1(0, kOrders, {{"timeout_ms", "150"}});
  expect_convergence("an override at L1 of dc0", kChangeBound);

  edit_l1(0, kOrders, {{"timeout_ms", std::nullopt}});
  expect_convergence("the override removed", kChangeBound);

  edit_l2(kOrders, {{"timeout_ms", "200"}, {"retries", "3"}, {"degrade.payments", "on"}});
  expect_convergence("a multi-key edit at L2", kChangeBound);

  edit_l2(kBilling, {{"mode", std::nullopt}, {"currency", "EUR"}});
  expect_convergence("a set and a removal in the second group", kChangeBound);

  // ---- L2 cut off from both L1s.
  const auto cut_at = world.now();
  for (auto h : l1)
    world.cut(h, l2);
  // What the subscribers hold through the cut: L2's changes from now on do
  // not reach them, an L1's do.
  TwoTierModel held = model;
  edit_l2(kOrders, {{"timeout_ms", "180"}});  // made during the outage: reaches nobody yet
  world.run_for(kOutage);
  {
    // Everyone keeps the last values, marked stale by their L1.
    watch->expect({held.expected(0), held.expected(1)});
    EXPECT_TRUE(watch->all()) << ::testing::PrintToString(watch->off());
    for (std::size_t d = 0; d < 2; ++d) {
      EXPECT_EQ(upper_keys(d, kOrders), 3u) << "L1 of dc" << d << " keeps its upper copy";
      EXPECT_EQ(upper_keys(d, kBilling), 1u) << "L1 of dc" << d;
    }
    std::size_t stale = 0;
    for (std::size_t a = 0; a < world.agent_count(); ++a) {
      const auto* copy = world.agent(a).configs().find(kOrders);
      if (copy != nullptr && copy->source_stale &&
          world.now() - copy->confirmed_at > 2 * kLongestBeatInterval)
        ++stale;
    }
    EXPECT_EQ(stale, world.agent_count()) << "every copy is stale, as old as its L1's upper copy";
  }

  // A change at an L1 during the outage still reaches its datacenter.
  edit_l1(1, kOrders, {{"retries", "5"}});
  held.set_l1(1, kOrders, {{"retries", "5"}});
  expect_convergence("an L1 change during the L2 outage", kChangeBound, held);
  EXPECT_LT(world.now() - cut_at, kOutage + kChangeBound + Duration{1000}) << "still in the outage";

  // ---- The heal: L2's change made during the outage reaches everyone.
  for (auto h : l1)
    world.heal(h, l2);
  expect_convergence("L2's outage-time change after the heal", kHealChangeBound);

  edit_l2(kOrders, {{"timeout_ms", "120"}, {"retries", "4"}});
  expect_convergence("a change at L2 after the heal", kChangeBound);
  world.run_for(2 * kLongestBeatInterval);
  std::size_t still_stale = 0;
  for (std::size_t a = 0; a < world.agent_count(); ++a) {
    const auto* copy = world.agent(a).configs().find(kOrders);
    if (copy != nullptr && copy->source_stale) ++still_stale;
  }
  EXPECT_EQ(still_stale, 0u) << "current again once L1 hears from L2";
  EXPECT_EQ(world.config_value(1, kOrders, "retries")->origin.hub, "l1-dc1")
      << "dc1's override still wins";
  EXPECT_EQ(world.network().stats().decode_failures, 0u);
  EXPECT_GT(world.network().stats().dropped, 0u) << "the network was lossy";
}

}  // namespace
}  // namespace cascade::sim::testing
