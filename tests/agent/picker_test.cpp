#include "agent/picker.hpp"

#include <gtest/gtest.h>

#include <map>

namespace cascade::agent {
namespace {

proto::Instance inst(const std::string& id, std::uint32_t weight,
                     proto::InstanceStatus status = proto::InstanceStatus::kUp) {
  proto::Instance i;
  i.id = id;
  i.address = id + ":80";
  i.weight = weight;
  i.status = status;
  return i;
}

std::map<std::string, int> tally(const std::vector<proto::Instance>& list, PickPolicy policy,
                                 int n) {
  Rng rng(7);
  PickState state;
  std::map<std::string, int> seen;
  for (int i = 0; i < n; ++i)
    ++seen[pick_instance(list, policy, rng, state)->id];
  return seen;
}

TEST(Picker, RoundRobinVisitsEveryUpInstanceInTurn) {
  auto seen = tally({inst("a", 100), inst("b", 100), inst("c", 100)}, PickPolicy::kRoundRobin, 300);
  EXPECT_EQ(seen, (std::map<std::string, int>{{"a", 100}, {"b", 100}, {"c", 100}}));
}

TEST(Picker, DownAndZeroWeightInstancesAreNeverPicked) {
  std::vector<proto::Instance> list{inst("a", 100), inst("down", 100, proto::InstanceStatus::kDown),
                                    inst("oos", 100, proto::InstanceStatus::kOutOfService),
                                    inst("drained", 0)};
  for (auto policy : {PickPolicy::kRoundRobin, PickPolicy::kRandom, PickPolicy::kWeighted,
                      PickPolicy::kSmoothWeighted})
    EXPECT_EQ(tally(list, policy, 100), (std::map<std::string, int>{{"a", 100}}));
}

TEST(Picker, WeightedFollowsTheWeights) {
  auto seen = tally({inst("heavy", 300), inst("light", 100)}, PickPolicy::kWeighted, 40'000);
  EXPECT_NEAR(seen["heavy"] / 40'000.0, 0.75, 0.02);
}

TEST(Picker, RandomSpreadsEvenly) {
  auto seen = tally({inst("a", 1), inst("b", 1000)}, PickPolicy::kRandom, 20'000);
  EXPECT_NEAR(seen["a"] / 20'000.0, 0.5, 0.03);
}

TEST(Picker, SmoothWeightedSpreadsHeavyInstancesInsteadOfBunchingThem) {
  const std::vector<proto::Instance> list{inst("a", 3), inst("b", 2), inst("c", 1)};
  Rng rng(1);
  PickState state;
  std::string sequence;
  for (int i = 0; i < 12; ++i)
    sequence += pick_instance(list, PickPolicy::kSmoothWeighted, rng, state)->id;
  EXPECT_EQ(sequence, "abacbaabacba") << "nginx's smooth weighted round robin, not aaabbc";
}

TEST(Picker, SmoothWeightedForgetsInstancesThatLeftTheList) {
  Rng rng(1);
  PickState state;
  pick_instance({inst("a", 1), inst("gone", 5)}, PickPolicy::kSmoothWeighted, rng, state);
  pick_instance({inst("a", 1)}, PickPolicy::kSmoothWeighted, rng, state);
  EXPECT_EQ(state.current.size(), 1u);
  EXPECT_TRUE(state.current.contains("a"));
}

TEST(Picker, OwnTierInstancesArePreferredWhileAnyIsUp) {
  auto remote = inst("dc2", 100);
  remote.tier = 2;
  auto local_down = inst("dc1-down", 100, proto::InstanceStatus::kDown);
  const std::vector<proto::Instance> mixed{remote, inst("dc1", 100), local_down};
  for (auto policy : {PickPolicy::kRoundRobin, PickPolicy::kRandom, PickPolicy::kWeighted,
                      PickPolicy::kSmoothWeighted})
    EXPECT_EQ(tally(mixed, policy, 100), (std::map<std::string, int>{{"dc1", 100}}));
  // No UP instance in the own tier: the upper tier's take the traffic.
  EXPECT_EQ(tally({remote, local_down}, PickPolicy::kRoundRobin, 10),
            (std::map<std::string, int>{{"dc2", 10}}));
}

TEST(Picker, NothingUpMeansNoPick) {
  Rng rng(1);
  PickState state;
  EXPECT_FALSE(pick_instance({inst("x", 100, proto::InstanceStatus::kDown)}, PickPolicy::kRandom,
                             rng, state));
  EXPECT_FALSE(pick_instance({}, PickPolicy::kRoundRobin, rng, state));
}

TEST(PickPolicyNames, KnownNamesParseUnknownDoNot) {
  EXPECT_EQ(parse_pick_policy("rr"), PickPolicy::kRoundRobin);
  EXPECT_EQ(parse_pick_policy("weighted"), PickPolicy::kWeighted);
  EXPECT_EQ(parse_pick_policy("smooth_weighted"), PickPolicy::kSmoothWeighted);
  EXPECT_FALSE(parse_pick_policy("fastest"));
}

}  // namespace
}  // namespace cascade::agent
