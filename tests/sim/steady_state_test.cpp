// Scenario (a): a full fleet under 5% message loss keeps every live instance.

#include "cascade/tests/sim/fleet_fixture.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

constexpr auto kSteadyRun = std::chrono::minutes(10);

class SimSteadyStateTest : public FleetFixture {};

TEST_F(SimSteadyStateTest, NoLiveInstanceIsLostOverTenMinutesAtFivePercentLoss) {
  warm_up();
  const auto end = world.now() + kSteadyRun;
  while (world.now() < end) {
    world.run_for(Duration{1000});
    ASSERT_THAT(missing_live_instances(world, fleet), IsEmpty()) << "at +" << elapsed_ms() << " ms";
  }
  // A lease that ran out and was renewed within the same second shows here.
  EXPECT_EQ(world.hub().counters().nodes_expired, 0u);
  EXPECT_THAT(consumers_out_of_date(world, fleet), IsEmpty());
  EXPECT_GT(world.network().stats().dropped, 0u);
  EXPECT_EQ(world.network().stats().decode_failures, 0u);
}

}  // namespace
}  // namespace cascade::sim::testing
