#pragma once
// The fixture of the fleet scenarios: the standard world and fleet, quiet logs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {

class FleetFixture : public ::testing::Test {
 protected:
  explicit FleetFixture(std::uint64_t seed = 1, FleetShape shape = {})
      : world(standard_config(seed)), fleet(build_fleet(world, shape)) {
    spdlog::set_level(spdlog::level::warn);  // the cores log every expiry at info
  }

  // Every scenario's hub kept its running totals (audited every kTotalsAudit).
  void TearDown() override {
    EXPECT_THAT(totals_drift(world), ::testing::IsEmpty()) << "running totals of the hub";
  }

  // Runs the warm-up: afterwards every provider is registered and every
  // consumer holds the hub's list of each service it uses.
  void warm_up() {
    world.run_for(kWarmUp);
    ASSERT_THAT(missing_live_instances(world, fleet), ::testing::IsEmpty()) << "after warm-up";
    ASSERT_EQ(world.hub().registry().instance_count(), fleet.providers.size());
    ASSERT_THAT(consumers_out_of_date(world, fleet), ::testing::IsEmpty()) << "after warm-up";
  }

  // Milliseconds since the start, for messages.
  std::int64_t elapsed_ms() const { return (world.now() - world.config().start).count(); }

  World world;
  Fleet fleet;
};

}  // namespace cascade::sim::testing
