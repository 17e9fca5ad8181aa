#include "cascade/agent/picker.hpp"

#include <gtest/gtest.h>

#include <string>

namespace cascade::agent {
namespace {

proto::Instance inst(const std::string& id, std::uint32_t weight,
                     proto::InstanceStatus status = proto::InstanceStatus::kUp,
                     std::uint32_t tier = 0) {
  proto::Instance i;
  i.id = id;
  i.address = id + ":80";
  i.weight = weight;
  i.status = status;
  i.tier = tier;
  return i;
}

std::string ids(const std::vector<proto::Instance>& list) {
  std::string out;
  for (const auto& in : list)
    out += (out.empty() ? "" : ",") + in.id;
  return out;
}

TEST(Candidates, DownOutOfServiceAndZeroWeightInstancesAreNotEligible) {
  const std::vector<proto::Instance> list{
      inst("a", 100), inst("down", 100, proto::InstanceStatus::kDown),
      inst("oos", 100, proto::InstanceStatus::kOutOfService), inst("drained", 0), inst("b", 1)};
  EXPECT_EQ(ids(eligible_instances(list)), "a,b");
}

TEST(Candidates, EligibilityKeepsEveryTierForTheRoutingFilterToSee) {
  const std::vector<proto::Instance> list{inst("remote", 100, proto::InstanceStatus::kUp, 2),
                                          inst("local", 100)};
  EXPECT_EQ(ids(eligible_instances(list)), "remote,local");
}

TEST(Candidates, NearestTierKeepsOnlyTheLowestTierPresentInOrder) {
  EXPECT_EQ(ids(nearest_tier({inst("dc2", 100, proto::InstanceStatus::kUp, 2), inst("a", 100),
                              inst("dc1", 100, proto::InstanceStatus::kUp, 1), inst("b", 100)})),
            "a,b");
  EXPECT_TRUE(nearest_tier({}).empty());
}

TEST(Candidates, UpperTierTakesTheTrafficOnlyWhenNoOwnTierInstanceIsEligible) {
  const auto remote = inst("dc2", 100, proto::InstanceStatus::kUp, 2);
  const auto local_down = inst("dc1-down", 100, proto::InstanceStatus::kDown);
  EXPECT_EQ(ids(nearest_tier(eligible_instances({remote, inst("dc1", 100), local_down}))), "dc1");
  EXPECT_EQ(ids(nearest_tier(eligible_instances({remote, local_down}))), "dc2");
}

TEST(LbPolicyNames, EveryNameAndAliasParsesAndUnknownNamesDoNot) {
  EXPECT_EQ(parse_lb_policy("round_robin"), LbPolicy::kRoundRobin);
  EXPECT_EQ(parse_lb_policy("rr"), LbPolicy::kRoundRobin);
  EXPECT_EQ(parse_lb_policy("random"), LbPolicy::kRandom);
  EXPECT_EQ(parse_lb_policy("weighted"), LbPolicy::kWeighted);
  EXPECT_EQ(parse_lb_policy("smooth_weighted"), LbPolicy::kSmoothWeighted);
  EXPECT_EQ(parse_lb_policy("swrr"), LbPolicy::kSmoothWeighted);
  EXPECT_EQ(parse_lb_policy("least_active"), LbPolicy::kLeastActive);
  EXPECT_EQ(parse_lb_policy("consistent_hash"), LbPolicy::kConsistentHash);
  EXPECT_EQ(parse_lb_policy("adaptive"), LbPolicy::kAdaptive);
  EXPECT_EQ(parse_lb_policy("p2c"), LbPolicy::kP2c);
  EXPECT_FALSE(parse_lb_policy("fastest"));
  EXPECT_FALSE(parse_lb_policy(""));
  EXPECT_FALSE(parse_lb_policy("RR"));
}

TEST(LbPolicyNames, CanonicalNameRoundTripsAndIsListedInTheHelpText) {
  for (std::size_t i = 0; i < kLbPolicyCount; ++i) {
    const auto policy = static_cast<LbPolicy>(i);
    const auto name = to_string(policy);
    EXPECT_EQ(parse_lb_policy(name), policy) << name;
    EXPECT_NE(lb_policy_names().find(name), std::string_view::npos) << name;
  }
  EXPECT_EQ(to_string(LbPolicy::kRoundRobin), "round_robin");
  EXPECT_EQ(to_string(LbPolicy::kSmoothWeighted), "smooth_weighted");
}

}  // namespace
}  // namespace cascade::agent
