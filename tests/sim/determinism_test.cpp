// Scenario (f): a run is a function of its seed.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {
namespace {

struct RunSummary {
  std::uint64_t trace_hash;
  std::uint64_t messages_sent;
  std::uint64_t nodes_expired;
  bool operator==(const RunSummary&) const = default;
};

// A small fleet through crashes, graceful stops, restarts and a hub crash.
RunSummary run_with_seed(std::uint64_t seed) {
  spdlog::set_level(spdlog::level::warn);
  World world(standard_config(seed));
  Fleet fleet = build_fleet(world, FleetShape{10, 10, 40, 3, Duration{2000}});
  world.run_for(Duration{10'000});
  for (std::size_t i = 0; i < 10; ++i)
    world.kill(fleet.providers[i * 10]);
  for (std::size_t i = 0; i < 10; ++i)
    world.stop(fleet.providers[i * 10 + 1]);
  world.run_for(Duration{3000});
  world.restart_hub(HubCrash::kLosingUnflushedBatch, Duration{200});
  for (std::size_t i = 0; i < 10; ++i)
    world.restart(fleet.providers[i * 10]);
  world.run_for(Duration{30'000});
  EXPECT_THAT(totals_drift(world), ::testing::IsEmpty());
  return {world.network().trace_hash(), world.network().stats().sent,
          world.hub().counters().nodes_expired};
}

TEST(SimDeterminismTest, SameSeedGivesAnIdenticalTrace) {
  EXPECT_EQ(run_with_seed(42), run_with_seed(42));
}

TEST(SimDeterminismTest, DifferentSeedsGiveDifferentTraces) {
  EXPECT_NE(run_with_seed(42).trace_hash, run_with_seed(43).trace_hash);
}

}  // namespace
}  // namespace cascade::sim::testing
