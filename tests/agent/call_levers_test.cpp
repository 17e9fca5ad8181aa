// The operator's levers as Client::call() reads them from config groups
// (agent/call_levers.hpp): degrade switches and in-flight limits.

#include "cascade/agent/call_levers.hpp"

#include <gtest/gtest.h>

namespace cascade::agent {
namespace {

const MonoTime kT0{Duration{1'000}};

proto::ConfigCopy copy_with(std::map<std::string, std::map<std::string, std::string>> groups) {
  proto::ConfigCopy copy(Duration{60'000});
  std::uint64_t version = 1;
  for (const auto& [group, values] : groups) {
    copy.use(kT0, group);
    proto::ConfigUpdate full{group, 0, version++, proto::UpdateKind::kFull, {}, {}};
    for (const auto& [key, value] : values)
      full.upserts.push_back({key, value, {2, "hub-l2", 1}});
    copy.apply(kT0, {full});
  }
  return copy;
}

TEST(CallLevers, DegradeSwitchesReadOnInAnyCommonSpellingAndOffOtherwise) {
  CallLevers levers;
  levers.update(copy_with({{"switches",
                            {{"degrade.orders", "on"},
                             {"degrade.billing", "TRUE"},
                             {"degrade.search", "off"},
                             {"degrade.", "on"},
                             {"unrelated", "on"}}}}));
  EXPECT_TRUE(levers.lever("orders").degraded);
  EXPECT_TRUE(levers.lever("billing").degraded);
  EXPECT_FALSE(levers.lever("search").degraded);
  EXPECT_FALSE(levers.lever("payments").degraded);
  EXPECT_FALSE(levers.lever("").degraded);
}

TEST(CallLevers, ALimitAdmitsThatManyCallsAndRefusesTheNextUntilOneEnds) {
  CallLevers levers;
  levers.update(copy_with({{"limits", {{"limit.orders.max_in_flight", "2"}}}}));
  const Lever lever = levers.lever("orders");
  ASSERT_EQ(lever.max_in_flight, 2u);
  auto first = levers.enter("orders", lever);
  auto second = levers.enter("orders", lever);
  ASSERT_TRUE(first && second);
  EXPECT_EQ(levers.in_flight("orders"), 2u);
  EXPECT_FALSE(levers.enter("orders", lever));
  EXPECT_EQ(levers.counters().over_limit, 1u);
  first.reset();
  EXPECT_EQ(levers.in_flight("orders"), 1u);
  EXPECT_TRUE(levers.enter("orders", lever));
  EXPECT_TRUE(levers.enter("billing", levers.lever("billing"))) << "no limit, no counting";
}

TEST(CallLevers, AZeroLimitRefusesEveryCallAndABadOneLimitsNothingButIsReported) {
  CallLevers levers;
  levers.update(copy_with({{"limits",
                            {{"limit.orders.max_in_flight", "0"},
                             {"limit.billing.max_in_flight", "lots"},
                             {"limit.search.max_in_flight", "99999999999"}}}}));
  EXPECT_FALSE(levers.enter("orders", levers.lever("orders")));
  EXPECT_EQ(levers.lever("billing").max_in_flight, std::nullopt);
  EXPECT_EQ(levers.lever("search").max_in_flight, std::nullopt);
  EXPECT_EQ(levers.problems().size(), 2u);
  EXPECT_EQ(levers.counters().problems, 2u);
}

TEST(CallLevers, AnUpdateReturnsOnlyTheProblemsThatAppeared) {
  CallLevers levers;
  const auto bad = copy_with({{"limits", {{"limit.orders.max_in_flight", "lots"}}}});
  EXPECT_EQ(levers.update(bad).size(), 1u);
  EXPECT_TRUE(levers.update(bad).empty()) << "told once, not at every change";
}

TEST(CallLevers, TheFirstGroupInNameOrderWinsAndTheConflictIsReported) {
  CallLevers levers;
  levers.update(
      copy_with({{"b-team", {{"degrade.orders", "on"}}}, {"a-team", {{"degrade.orders", "off"}}}}));
  EXPECT_FALSE(levers.lever("orders").degraded);
  ASSERT_EQ(levers.problems().size(), 1u);
  EXPECT_NE(levers.problems()[0].find("b-team"), std::string::npos);
}

TEST(CallLevers, ADegradeInOneGroupAndALimitInAnotherBothApply) {
  CallLevers levers;
  levers.update(copy_with({{"a-switches", {{"degrade.orders", "on"}}},
                           {"b-limits", {{"limit.orders.max_in_flight", "3"}}}}));
  EXPECT_TRUE(levers.lever("orders").degraded);
  EXPECT_EQ(levers.lever("orders").max_in_flight, 3u);
  EXPECT_TRUE(levers.problems().empty()) << "different keys: no conflict";
}

TEST(CallLevers, ASwitchTurnedOffOrRemovedLiftsTheLever) {
  CallLevers levers;
  levers.update(copy_with({{"switches", {{"degrade.orders", "on"}}}}));
  ASSERT_TRUE(levers.lever("orders").degraded);
  levers.update(copy_with({{"switches", {}}}));
  EXPECT_FALSE(levers.lever("orders").degraded);
}

TEST(CallLevers, ASlotTakenBeforeTheLimitChangedStillEndsCounted) {
  CallLevers levers;
  levers.update(copy_with({{"limits", {{"limit.orders.max_in_flight", "1"}}}}));
  auto slot = levers.enter("orders", levers.lever("orders"));
  ASSERT_TRUE(slot);
  levers.update(copy_with({{"limits", {}}}));
  slot.reset();
  EXPECT_EQ(levers.in_flight("orders"), 0u);
}

}  // namespace
}  // namespace cascade::agent
