// Scenario (d): providers that stop gracefully leave the hub the moment their
// Deregister arrives, and consumers drop them on their next beat.

#include "cascade/tests/sim/fleet_fixture.hpp"
#include "cascade/tests/sim/probes.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

constexpr std::size_t kStopped = 50;

class SimGracefulStopTest : public FleetFixture {};

TEST_F(SimGracefulStopTest,
       StoppedProvidersLeaveWhenTheirDeregisterArrivesAndConsumersSeeItNextBeat) {
  const auto stopped = pick_providers(fleet, kStopped);
  DepartureRecorder departures(world, stopped);
  NextBeatProbe next_beat(world, departures);
  ObserverList observers{&departures, &next_beat};
  world.set_observer(&observers);
  warm_up();
  world.run_for(Duration{777});

  for (auto p : stopped)
    world.stop(p);
  world.run_for(kLease + kBeatInterval);  // long enough for a lease to show, had one been used

  for (auto p : stopped) {
    SCOPED_TRACE(world.spec(p).node_id);
    const auto& d = departures.of(p);
    ASSERT_TRUE(d.first_deregister_arrival.has_value());
    ASSERT_TRUE(d.gone_at.has_value());
    EXPECT_EQ(*d.gone_at, *d.first_deregister_arrival) << "gone when the Deregister arrives";
    EXPECT_LE(*d.gone_at - *d.deregister_sent, kMaxDelay);
    EXPECT_FALSE(d.present);
    EXPECT_EQ(world.state(p), AgentState::kDown) << "the Deregister was acknowledged";
  }
  EXPECT_EQ(world.hub().counters().nodes_expired, 0u) << "nobody left by lease";
  EXPECT_EQ(world.hub().node_count(), fleet.providers.size() - kStopped + fleet.consumers.size());
  EXPECT_GT(next_beat.checks(), 0u);
  EXPECT_THAT(next_beat.failures(), IsEmpty());
  EXPECT_THAT(consumers_out_of_date(world, fleet), IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
