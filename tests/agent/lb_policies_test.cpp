// The load-balancing policies of agent/lb, each driven through the
// LoadBalancer interface with a seeded Rng and fed call outcomes by hand.
#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <string>

#include "cascade/agent/lb/consistent_hash_balancer.hpp"
#include "cascade/agent/lb/load_balancer.hpp"

namespace cascade::agent {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

constexpr LbPolicy kAllPolicies[] = {
    LbPolicy::kRoundRobin,     LbPolicy::kRandom,      LbPolicy::kWeighted,
    LbPolicy::kSmoothWeighted, LbPolicy::kLeastActive, LbPolicy::kConsistentHash,
    LbPolicy::kAdaptive,       LbPolicy::kP2c,
};

proto::Instance inst(const std::string& name, std::uint32_t weight = 100) {
  proto::Instance i;
  i.id = name;
  i.address = name;  // short addresses keep the expectations readable
  i.weight = weight;
  return i;
}

std::vector<proto::Instance> numbered(int n, const std::string& prefix = "10.0.0.") {
  std::vector<proto::Instance> list;
  for (int i = 1; i <= n; ++i)
    list.push_back(inst(prefix + std::to_string(i) + ":8080"));
  return list;
}

std::unique_ptr<LoadBalancer> balancer(LbPolicy policy, std::vector<proto::Instance> list,
                                       const LbConfig& config = {}) {
  auto lb = make_load_balancer(policy, config);
  lb->set_candidates(std::move(list));
  return lb;
}

std::string picked(LoadBalancer& lb, Rng& rng, const PickContext& ctx = {}) {
  const auto i = lb.pick(ctx, rng);
  return i ? lb.candidates()[*i].address : "(none)";
}

std::map<std::string, int> tally(LoadBalancer& lb, int n, std::uint64_t seed = 7,
                                 const PickContext& ctx = {}) {
  Rng rng(seed);
  std::map<std::string, int> seen;
  for (int i = 0; i < n; ++i)
    ++seen[picked(lb, rng, ctx)];
  return seen;
}

// The addresses of `picks` picks in a row, concatenated.
std::string sequence(LoadBalancer& lb, Rng& rng, int picks) {
  std::string out;
  for (int i = 0; i < picks; ++i)
    out += picked(lb, rng);
  return out;
}

// ------------------------------------------------------------ the rotations

TEST(RoundRobin, VisitsEveryCandidateInTurn) {
  auto lb = balancer(LbPolicy::kRoundRobin, {inst("a"), inst("b"), inst("c")});
  Rng rng(1);
  EXPECT_EQ(sequence(*lb, rng, 6), "abcabc");
}

TEST(SmoothWeighted, Weights321GiveNginxSequenceNotBunches) {
  auto lb = balancer(LbPolicy::kSmoothWeighted, {inst("a", 3), inst("b", 2), inst("c", 1)});
  Rng rng(1);
  EXPECT_EQ(sequence(*lb, rng, 12), "abacbaabacba");
}

// ------------------------------------------------------------ random draws

TEST(Random, SpreadsEvenlyWhateverTheWeights) {
  auto lb = balancer(LbPolicy::kRandom, {inst("a", 1), inst("b", 1000)});
  auto seen = tally(*lb, 20'000);
  EXPECT_NEAR(seen["a"] / 20'000.0, 0.5, 0.02);
}

TEST(Weighted, FollowsTheWeights) {
  auto lb = balancer(LbPolicy::kWeighted, {inst("heavy", 300), inst("light", 100)});
  auto seen = tally(*lb, 40'000);
  EXPECT_NEAR(seen["heavy"] / 40'000.0, 0.75, 0.01);
}

// ------------------------------------------------------------ least active

TEST(LeastActive, PrefersTheIdleAddress) {
  auto lb = balancer(LbPolicy::kLeastActive, {inst("a"), inst("idle"), inst("c")});
  lb->on_call_started("a");
  lb->on_call_started("c");
  lb->on_call_started("c");
  EXPECT_EQ(tally(*lb, 200), (std::map<std::string, int>{{"idle", 200}}));
  // Once the others' calls finish, everyone is idle again and shares.
  lb->on_call_finished("a", microseconds{100}, true);
  lb->on_call_finished("c", microseconds{100}, true);
  lb->on_call_finished("c", microseconds{100}, true);
  EXPECT_EQ(tally(*lb, 300).size(), 3u);
}

TEST(LeastActive, IdleTiesAreBrokenInProportionToWeight) {
  // A caller making one call at a time sees everybody idle on every pick.
  auto lb = balancer(LbPolicy::kLeastActive, {inst("heavy", 300), inst("light", 100)});
  auto seen = tally(*lb, 20'000);
  EXPECT_NEAR(seen["heavy"] / 20'000.0, 0.75, 0.02);
}

TEST(LeastActive, FinishingMoreCallsThanStartedNeverMakesAnAddressLookIdler) {
  auto lb = balancer(LbPolicy::kLeastActive, {inst("a"), inst("b")});
  lb->on_call_finished("a", microseconds{1}, true);  // no start: must not go below zero
  lb->on_call_started("a");
  EXPECT_EQ(tally(*lb, 50), (std::map<std::string, int>{{"b", 50}}));
}

// ------------------------------------------------------------ p2c

TEST(P2c, AvoidsTheLoadedAddress) {
  auto lb = balancer(LbPolicy::kP2c, {inst("loaded"), inst("b"), inst("c"), inst("d")});
  for (int i = 0; i < 10; ++i)
    lb->on_call_started("loaded");
  auto seen = tally(*lb, 3000);
  EXPECT_EQ(seen.count("loaded"), 0u) << "it loses every comparison it is drawn into";
  for (const char* other : {"b", "c", "d"})
    EXPECT_NEAR(seen[other] / 3000.0, 1 / 3.0, 0.04) << other;
}

TEST(P2c, EqualLoadGoesToTheLowerLatencyAverage) {
  auto lb = balancer(LbPolicy::kP2c, {inst("slow"), inst("fast")});
  lb->on_call_started("slow");
  lb->on_call_finished("slow", milliseconds{40}, true);
  lb->on_call_started("fast");
  lb->on_call_finished("fast", milliseconds{2}, true);
  EXPECT_EQ(tally(*lb, 100), (std::map<std::string, int>{{"fast", 100}}));
}

// ------------------------------------------------------------ consistent hash

std::vector<std::string> owners(LoadBalancer& lb, int keys) {
  Rng unused(0);
  std::vector<std::string> out;
  for (int k = 0; k < keys; ++k) {
    PickContext ctx;
    ctx.hash_key = static_cast<std::uint64_t>(k);
    out.push_back(picked(lb, unused, ctx));
  }
  return out;
}

TEST(ConsistentHash, SameKeyGoesToTheSameAddressWhateverTheListOrder) {
  auto list = numbered(10);
  auto lb = balancer(LbPolicy::kConsistentHash, list);
  std::reverse(list.begin(), list.end());
  auto reversed = balancer(LbPolicy::kConsistentHash, list);
  const auto first = owners(*lb, 2000);
  EXPECT_EQ(owners(*lb, 2000), first);
  EXPECT_EQ(owners(*reversed, 2000), first) << "another client builds the same ring";
}

TEST(ConsistentHash, SequentialKeysSpreadOverEveryAddressByWeight) {
  auto list = numbered(4);
  list[0].weight = 200;  // twice the others: 2/5 of the keys
  auto lb = balancer(LbPolicy::kConsistentHash, list);
  std::map<std::string, int> seen;
  for (const auto& owner : owners(*lb, 10'000))
    ++seen[owner];
  ASSERT_EQ(seen.size(), 4u);
  EXPECT_NEAR(seen[list[0].address] / 10'000.0, 0.4, 0.06);
  for (std::size_t i = 1; i < 4; ++i)
    EXPECT_NEAR(seen[list[i].address] / 10'000.0, 0.2, 0.05) << list[i].address;
}

struct Move {
  std::string from{};
  std::string to{};
};

// The keys 0 .. keys - 1 whose owner changes when `lb` takes `list`.
std::map<int, Move> moves(LoadBalancer& lb, const std::vector<proto::Instance>& list, int keys) {
  const auto before = owners(lb, keys);
  lb.set_candidates(list);
  const auto after = owners(lb, keys);
  std::map<int, Move> out;
  for (int k = 0; k < keys; ++k)
    if (before[k] != after[k]) out[k] = Move{before[k], after[k]};
  return out;
}

TEST(ConsistentHash, AddingOneAddressMovesOnlyKeysToItAndAtMostItsShare) {
  constexpr int kKeys = 10'000;
  auto list = numbered(10);
  auto lb = balancer(LbPolicy::kConsistentHash, list);
  list.push_back(inst("10.0.0.11:8080"));
  const auto moved = moves(*lb, list, kKeys);
  for (const auto& [k, move] : moved)
    EXPECT_EQ(move.to, "10.0.0.11:8080") << "key " << k << " moved between old addresses";
  EXPECT_GT(moved.size(), 0u);
  EXPECT_LE(static_cast<double>(moved.size()) / kKeys, 1.0 / 11 + 0.05);
}

TEST(ConsistentHash, RemovingOneAddressMovesOnlyItsKeysAndAtMostItsShare) {
  constexpr int kKeys = 10'000;
  auto list = numbered(10);
  auto lb = balancer(LbPolicy::kConsistentHash, list);
  const auto gone = list[3].address;
  list.erase(list.begin() + 3);
  const auto moved = moves(*lb, list, kKeys);
  for (const auto& [k, move] : moved)
    EXPECT_EQ(move.from, gone) << "key " << k << " of a surviving address moved";
  EXPECT_GT(moved.size(), 0u);
  EXPECT_LE(static_cast<double>(moved.size()) / kKeys, 1.0 / 10 + 0.05);
}

TEST(ConsistentHash, AKeyGoesToTheOwnerOfTheNextPointClockwise) {
  // The pick's shortcut into the ring (buckets by top bits) must agree with
  // a plain search of the whole ring, for tiny and large rings alike.
  for (const std::uint32_t points : {1u, 3u, 160u, 1000u}) {
    for (const int n : {1, 3, 50}) {
      LbConfig config;
      config.ring_points_per_instance = points;
      lb::ConsistentHashBalancer lb(config);
      lb.set_candidates(numbered(n));
      const auto& ring = lb.ring_points();
      ASSERT_FALSE(ring.empty());
      ASSERT_TRUE(std::is_sorted(ring.begin(), ring.end()));
      Rng keys(static_cast<std::uint64_t>(points) * 100 + static_cast<std::uint64_t>(n));
      for (int k = 0; k < 5000; ++k) {
        PickContext ctx;
        ctx.hash_key = k < 3 ? std::uint64_t{0} - static_cast<std::uint64_t>(k) : keys.next_u64();
        auto at = std::lower_bound(ring.begin(), ring.end(),
                                   lb::ConsistentHashBalancer::mix(ctx.hash_key));
        const std::size_t point =
            at == ring.end() ? 0 : static_cast<std::size_t>(at - ring.begin());
        ASSERT_EQ(lb.pick(ctx, keys), lb.point_owner(point))
            << points << " points, " << n << " candidates, key " << ctx.hash_key;
      }
    }
  }
}

TEST(ConsistentHash, ExcludedOwnerPassesItsKeyToTheNextAddressOnTheRing) {
  auto lb = balancer(LbPolicy::kConsistentHash, numbered(5));
  Rng rng(0);
  PickContext ctx;
  ctx.hash_key = 42;
  const auto owner = picked(*lb, rng, ctx);
  const std::vector<std::string> tried{owner};
  ctx.exclude = &tried;
  const auto retry = picked(*lb, rng, ctx);
  EXPECT_NE(retry, owner);
  EXPECT_EQ(picked(*lb, rng, ctx), retry) << "the retry target is stable too";
}

// ------------------------------------------------------------ adaptive

// `rounds` rounds of one call to each of numbered(5): the i-th, 10.0.0.i:8080,
// answers after latency_of(i), ok or failed as ok_of(i) says.
void feed_rounds(
    LoadBalancer& lb, int rounds, const std::function<microseconds(int)>& latency_of,
    const std::function<bool(int)>& ok_of = [](int) { return true; }) {
  for (int round = 0; round < rounds; ++round)
    for (int i = 1; i <= 5; ++i) {
      const std::string address = "10.0.0." + std::to_string(i) + ":8080";
      lb.on_call_started(address);
      lb.on_call_finished(address, latency_of(i), ok_of(i));
    }
}

// 10.0.0.3 answers in 50 ms, the others in 5 ms.
microseconds third_slow(int i) {
  return i == 3 ? milliseconds{50} : milliseconds{5};
}

microseconds all_fast(int) {
  return milliseconds{5};
}

TEST(Adaptive, ShiftsLoadAwayFromASlowAddress) {
  auto lb = balancer(LbPolicy::kAdaptive, numbered(5));
  feed_rounds(*lb, 20, third_slow);
  auto seen = tally(*lb, 20'000);
  // Weight 100 x 3/5 against four of 100: 60 / 460 of the calls, not 1/5.
  EXPECT_NEAR(seen["10.0.0.3:8080"] / 20'000.0, 60.0 / 460, 0.015);
  EXPECT_NEAR(seen["10.0.0.1:8080"] / 20'000.0, 100.0 / 460, 0.02);
}

TEST(Adaptive, EqualLatenciesPenaliseNobody) {
  auto lb = balancer(LbPolicy::kAdaptive, numbered(5));
  feed_rounds(*lb, 20, [](int i) { return milliseconds{5 + i % 2}; });
  for (const auto& [address, count] : tally(*lb, 20'000))
    EXPECT_NEAR(count / 20'000.0, 0.2, 0.02) << address;
}

TEST(Adaptive, FailingFastDoesNotLookFast) {
  auto lb = balancer(LbPolicy::kAdaptive, numbered(5));
  feed_rounds(*lb, 20, all_fast, [](int i) { return i != 2; });
  auto seen = tally(*lb, 20'000);
  EXPECT_NEAR(seen["10.0.0.2:8080"] / 20'000.0, 60.0 / 460, 0.015);
}

TEST(Adaptive, RegainsItsWeightOnceItIsFastAgain) {
  auto lb = balancer(LbPolicy::kAdaptive, numbered(5));
  feed_rounds(*lb, 20, third_slow);
  feed_rounds(*lb, 60, all_fast);
  EXPECT_NEAR(tally(*lb, 20'000)["10.0.0.3:8080"] / 20'000.0, 0.2, 0.02);
}

// ------------------------------------------------------------ every policy

TEST(EveryPolicy, ExcludedAddressesAreNeverPickedAndExcludingAllPicksNothing) {
  for (const auto policy : kAllPolicies) {
    auto lb = balancer(policy, {inst("a", 3), inst("b", 2), inst("c", 1)});
    const std::vector<std::string> tried{"a", "b", "not-a-candidate"};
    Rng rng(3);
    for (std::uint64_t k = 0; k < 50; ++k) {
      PickContext ctx;
      ctx.hash_key = k;
      ctx.exclude = &tried;
      EXPECT_EQ(picked(*lb, rng, ctx), "c") << to_string(policy);
    }
    const std::vector<std::string> everything{"c", "b", "a"};
    PickContext all;
    all.exclude = &everything;
    EXPECT_FALSE(lb->pick(all, rng)) << to_string(policy);
    // The exclusion was for that call only.
    EXPECT_TRUE(lb->pick({}, rng)) << to_string(policy);
  }
}

TEST(EveryPolicy, AnEmptyListPicksNothing) {
  for (const auto policy : kAllPolicies) {
    Rng rng(1);
    auto never_set = make_load_balancer(policy);
    EXPECT_FALSE(never_set->pick({}, rng)) << to_string(policy);
    auto emptied = balancer(policy, {inst("a")});
    emptied->set_candidates({});
    EXPECT_FALSE(emptied->pick({}, rng)) << to_string(policy);
    emptied->on_call_started("a");  // feedback for a departed address: ignored
    emptied->on_call_finished("a", microseconds{5}, false);
  }
}

TEST(EveryPolicy, ReportsItsPolicy) {
  for (const auto policy : kAllPolicies)
    EXPECT_EQ(make_load_balancer(policy)->policy(), policy);
}

// ------------------------------------------------------------ list changes

TEST(ListChange, SmoothWeightedSequenceContinuesAcrossANewListOfTheSameAddresses) {
  const std::vector<proto::Instance> list{inst("a", 3), inst("b", 2), inst("c", 1)};
  auto lb = balancer(LbPolicy::kSmoothWeighted, list);
  Rng rng(1);
  std::string picks = sequence(*lb, rng, 3);
  lb->set_candidates(list);  // a new version with the same addresses
  picks += sequence(*lb, rng, 3);
  EXPECT_EQ(picks, "abacba") << "restarting from zero would give abaaba";
}

TEST(ListChange, InFlightCountsFollowTheAddressToItsNewPositionAndDieWithIt) {
  auto lb = balancer(LbPolicy::kLeastActive, {inst("busy"), inst("b")});
  lb->on_call_started("busy");
  lb->on_call_started("b");
  lb->on_call_started("b");
  // Reordered, with a newcomer: the newcomer is idle, busy still has 1, b 2.
  lb->set_candidates({inst("b"), inst("new"), inst("busy")});
  EXPECT_EQ(tally(*lb, 20), (std::map<std::string, int>{{"new", 20}}));
  lb->on_call_started("new");
  lb->on_call_started("new");
  EXPECT_EQ(tally(*lb, 20), (std::map<std::string, int>{{"busy", 20}}));
  // busy leaves and comes back: its count was forgotten, it is idle now.
  lb->set_candidates({inst("b"), inst("new")});
  lb->set_candidates({inst("b"), inst("new"), inst("busy")});
  lb->on_call_started("busy");
  EXPECT_EQ(tally(*lb, 20), (std::map<std::string, int>{{"busy", 20}}));
}

TEST(ListChange, LatencyAverageOfASurvivingAddressKeepsItsPenalty) {
  auto lb = balancer(LbPolicy::kAdaptive, numbered(5));
  feed_rounds(*lb, 20, third_slow);
  auto list = numbered(5);
  std::reverse(list.begin(), list.end());
  list.push_back(inst("10.0.0.6:8080"));
  lb->set_candidates(list);
  auto seen = tally(*lb, 20'000);
  EXPECT_NEAR(seen["10.0.0.3:8080"] / 20'000.0, 60.0 / 560, 0.015);
  EXPECT_NEAR(seen["10.0.0.6:8080"] / 20'000.0, 100.0 / 560, 0.02);
}

TEST(ListChange, CandidatesSharingAnAddressShareTheirLoad) {
  auto lb = balancer(LbPolicy::kLeastActive, {inst("x"), inst("y")});
  auto twin = inst("x");
  twin.id = "x-twin";
  lb->set_candidates({inst("x"), twin, inst("y")});
  lb->on_call_started("x");
  Rng rng(1);
  for (int i = 0; i < 20; ++i)
    EXPECT_EQ(lb->candidates()[*lb->pick({}, rng)].id, "y");
}

// ------------------------------------------------------------ config

TEST(LbConfigCheck, DefaultsAreValidAndBadValuesAreNamed) {
  EXPECT_EQ(check_lb_config({}), "");
  LbConfig c;
  c.latency_decay = 1.0;
  EXPECT_NE(check_lb_config(c).find("latency_decay"), std::string::npos);
  c = {};
  c.adaptive_slow_weight_factor = 0;
  EXPECT_NE(check_lb_config(c).find("adaptive_slow_weight_factor"), std::string::npos);
  c = {};
  c.ring_points_per_instance = 0;
  EXPECT_NE(check_lb_config(c).find("ring_points_per_instance"), std::string::npos);
  c = {};
  c.adaptive_slow_ratio = 0.5;
  EXPECT_NE(check_lb_config(c).find("adaptive_slow_ratio"), std::string::npos);
  EXPECT_THROW(make_load_balancer(LbPolicy::kAdaptive, c), std::invalid_argument);
}

}  // namespace
}  // namespace cascade::agent
