#pragma once
// The fixture of the tier scenarios: the standard tiered network, the probes
// every scenario asserts with, quiet logs.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cascade/tests/sim/tier_fleet.hpp"
#include "cascade/tests/sim/tier_probes.hpp"

namespace cascade::sim::testing {

// Every agent has started and beaten, consumers have got their first answers
// (a cross-tier query may be lost and retried, or find its service not yet
// registered above): 8 s in practice.
inline constexpr Duration kTierWarmUp{12'000};

class TierFixture : public ::testing::Test {
 protected:
  explicit TierFixture(std::uint64_t seed = 1, bool eviction_protection = true)
      : world(tier_config(seed, eviction_protection)),
        fleet(build_tier_fleet(world)),
        live(world, fleet),
        same_tier(world, fleet),
        observers{&live, &same_tier, &beats} {
    spdlog::set_level(spdlog::level::err);  // the cores log every expiry and lost upstream
    world.set_observer(&observers);
  }

  // Every hub of the scenario kept its running totals (audited every kTotalsAudit).
  void TearDown() override {
    EXPECT_THAT(totals_drift(world), ::testing::IsEmpty()) << "running totals of the hubs";
  }

  // Afterwards every provider is in its L1 and above, every consumer holds
  // the live set of each service it uses, and the probes check from now on.
  void warm_up() {
    world.run_for(kTierWarmUp);
    ASSERT_THAT(missing_same_tier(world, fleet), ::testing::IsEmpty()) << "after warm-up";
    ASSERT_EQ(world.hub(fleet.l3).registry().instance_count(), providers());
    ASSERT_THAT(consumers_off_live(world, fleet), ::testing::IsEmpty()) << "after warm-up";
    live.refresh(world.now());
    same_tier.arm();
  }

  // Runs until `until`, checking every second that no datacenter's L1 lacks
  // one of its live providers (SameTierWatch checks every expiry besides).
  void run_checking_same_tier(MonoTime until) {
    while (world.now() < until) {
      world.run_until(std::min(until, world.now() + Duration{1000}));
      ASSERT_THAT(missing_same_tier(world, fleet), ::testing::IsEmpty())
          << "at +" << elapsed_ms() << " ms";
    }
  }

  // The consumers' views are checked against the live set as it is now.
  void live_set_changed() { live.refresh(world.now()); }

  std::size_t providers() const {
    std::size_t n = 0;
    for (const auto& dc : fleet.dcs)
      n += dc.providers.size();
    return n;
  }
  // Milliseconds since the start, for messages.
  std::int64_t elapsed_ms() const { return (world.now() - world.config().start).count(); }

  TieredWorld world;
  TierFleet fleet;
  LiveViewProbe live;
  SameTierWatch same_tier;
  BeatArrivals beats;
  TieredObserverList observers;
};

}  // namespace cascade::sim::testing
