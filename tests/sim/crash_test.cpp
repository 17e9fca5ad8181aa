// Scenario (b): crashed providers leave the hub exactly one lease after their
// last beat reached it.
//
// The bound, reasoned out: the hub renews a lease when a beat *arrives* and
// expires it at exactly arrival + lease (the hub ticks at its next deadline).
// After a crash at T no beat is sent, but one sent just before T can still be
// in flight for up to the maximum network delay. So every crashed provider is
// gone at last_arrival + lease <= T + max_delay + lease < T + lease + one beat
// interval. There is no lower bound in T alone: under loss the last beat that
// arrived can be several intervals old, and then the instance leaves early
// (still exactly one lease after that beat).

#include "cascade/tests/sim/fleet_fixture.hpp"
#include "cascade/tests/sim/probes.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

constexpr std::size_t kCrashed = 100;

class SimCrashTest : public FleetFixture {};

TEST_F(SimCrashTest, KilledProvidersLeaveTheHubExactlyOneLeaseAfterTheirLastBeatArrived) {
  const auto killed = pick_providers(fleet, kCrashed);
  DepartureRecorder departures(world, killed);
  world.set_observer(&departures);
  warm_up();
  world.run_for(Duration{1234});  // the crash falls anywhere in the beat cycles
  ASSERT_THAT(missing_live_instances(world, fleet), IsEmpty());

  const MonoTime crash = world.now();
  for (auto p : killed)
    world.kill(p);
  world.run_until(crash + kLease + kBeatInterval);

  for (auto p : killed) {
    SCOPED_TRACE(world.spec(p).node_id);
    const auto& d = departures.of(p);
    ASSERT_TRUE(d.last_beat_arrival.has_value());
    ASSERT_TRUE(d.gone_at.has_value()) << "still registered at T + lease + one beat interval";
    EXPECT_EQ(*d.gone_at, *d.last_beat_arrival + kLease);
    EXPECT_LE(*d.last_beat_arrival, crash + kMaxDelay);
    EXPECT_LE(*d.gone_at, crash + kLease + kMaxDelay);
  }
  EXPECT_EQ(world.hub().counters().nodes_expired, kCrashed) << "only the killed providers expire";
  EXPECT_THAT(missing_live_instances(world, fleet), IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
