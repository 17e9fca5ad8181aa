// GrantedStretch (hub/granted_stretch.hpp): the longest interval stretch a
// node may still hold, as the hub persists it for a restart's grace.

#include "cascade/hub/granted_stretch.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace cascade::hub {
namespace {

constexpr Duration kLease{6000};
const MonoTime kStart = mono_from_ms(1'000'000);

TEST(GrantedStretch, RisesWithTheGovernorAtOnceAndSaysToPersistIt) {
  GrantedStretch granted(kLease);
  EXPECT_EQ(granted.on_pass(kStart, 1), std::nullopt);
  EXPECT_EQ(granted.on_pass(kStart, 2), 2u);
  EXPECT_EQ(granted.on_pass(kStart + Duration{10}, 2), std::nullopt)
      << "unchanged: nothing to write";
  EXPECT_EQ(granted.on_pass(kStart + Duration{20}, 8), 8u);
  EXPECT_EQ(granted.held(), 8u);
}

// A node granted 8 beats within 8 intervals and renews within 8 leases: until
// then it may still hold the grant, though the governor grants less.
TEST(GrantedStretch, FallsOnlyWhenTheLastGrantOfTheOldStretchHasRunALease) {
  GrantedStretch granted(kLease);
  granted.on_pass(kStart, 8);
  const MonoTime relaxed = kStart + Duration{1000};
  EXPECT_EQ(granted.on_pass(relaxed, 1), std::nullopt);
  EXPECT_EQ(granted.on_pass(relaxed + 8 * kLease - Duration{1}, 1), std::nullopt);
  EXPECT_EQ(granted.held(), 8u);
  EXPECT_EQ(granted.on_pass(relaxed + 8 * kLease, 1), 1u);
  EXPECT_EQ(granted.held(), 1u);
}

// 8 -> 4 -> 1: what was granted while the 8s ran out is held one lease of
// its own longer.
TEST(GrantedStretch, AFallInStepsKeepsEachStepUntilItsGrantsRanOut) {
  GrantedStretch granted(kLease);
  granted.on_pass(kStart, 8);
  granted.on_pass(kStart, 4);
  const MonoTime back_to_one = kStart + Duration{20'000};
  granted.on_pass(back_to_one, 1);
  EXPECT_EQ(granted.on_pass(kStart + 8 * kLease, 1), 4u);
  EXPECT_EQ(granted.on_pass(kStart + 8 * kLease + 4 * kLease - Duration{1}, 1), std::nullopt);
  EXPECT_EQ(granted.on_pass(kStart + 8 * kLease + 4 * kLease, 1), 1u);
}

TEST(GrantedStretch, ARiseWhileFallingCancelsTheFall) {
  GrantedStretch granted(kLease);
  granted.on_pass(kStart, 4);
  granted.on_pass(kStart + Duration{10}, 2);
  EXPECT_EQ(granted.on_pass(kStart + Duration{20}, 4), std::nullopt);
  EXPECT_EQ(granted.on_pass(kStart + 5 * kLease, 4), std::nullopt);
  EXPECT_EQ(granted.held(), 4u);
}

TEST(GrantedStretch, ARestoredValueIsHeldUntilItRunsALeaseUnderTheNewGovernor) {
  GrantedStretch granted(kLease);
  granted.restore(8);
  EXPECT_EQ(granted.held(), 8u);
  EXPECT_EQ(granted.on_pass(kStart, 1), std::nullopt);
  EXPECT_EQ(granted.on_pass(kStart + 8 * kLease, 1), 1u);
  granted.restore(0);
  EXPECT_EQ(granted.held(), 1u) << "0 is no stretch";
}

}  // namespace
}  // namespace cascade::hub
