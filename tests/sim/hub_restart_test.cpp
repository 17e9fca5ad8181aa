// Scenario (e): the hub crashes and a new incarnation restores the disk.
//
// Just before the crash, 50 providers crash too (still registered), and one
// provider stops gracefully: the crash hits the instant its Deregister is
// handled, so that change is the unflushed batch. Claims:
//  - live providers are all registered the moment the new hub is up (no lease wait);
//  - crashed-before-restart providers are restored with exactly one lease of grace;
//  - a change lost with the unflushed batch was never acknowledged, so its agent
//    repeats it and the new hub applies it;
//  - consumers converge again; no live instance is ever missing.

#include "cascade/tests/sim/fleet_fixture.hpp"
#include "cascade/tests/sim/probes.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

constexpr std::size_t kCrashed = 50;
constexpr Duration kDowntime{500};

// Crashes the hub right after it handles the first Deregister from `agent`,
// before the change reaches the disk. Must be the last observer.
class CrashOnDeregister final : public WorldObserver {
 public:
  CrashOnDeregister(World& world, std::size_t agent, HubCrash crash)
      : world_(world), agent_(agent), crash_(crash) {}
  std::optional<MonoTime> crashed_at() const { return crashed_at_; }

  void on_hub_received(MonoTime now, std::size_t agent, const proto::Message& m) override {
    if (crashed_at_ || agent != agent_ || !std::holds_alternative<proto::Deregister>(m)) return;
    crashed_at_ = now;
    world_.restart_hub(crash_, kDowntime);
  }

 private:
  World& world_;
  std::size_t agent_;
  HubCrash crash_;
  std::optional<MonoTime> crashed_at_;
};

class SimHubRestartTest : public FleetFixture {
 protected:
  void run_scenario(HubCrash crash);
};

void SimHubRestartTest::run_scenario(HubCrash crash) {
  const auto crashed = pick_providers(fleet, kCrashed);
  const std::size_t stopping = fleet.providers[1];  // not among `crashed`
  const auto& stopping_reg = provided(world, stopping);
  std::vector<std::size_t> watched = crashed;
  watched.push_back(stopping);
  DepartureRecorder departures(world, watched);
  ConvergenceProbe convergence(world, fleet, kConvergenceBound);
  CrashOnDeregister crasher(world, stopping, crash);
  ObserverList observers{&departures, &convergence, &crasher};
  world.set_observer(&observers);
  convergence.check_from(world.now() + kWarmUp);
  warm_up();

  for (auto p : crashed)
    world.kill(p);
  world.run_for(Duration{300});
  world.stop(stopping);
  world.run_for(Duration{300});
  ASSERT_TRUE(crasher.crashed_at().has_value()) << "the Deregister never reached the hub";
  const MonoTime restored = *crasher.crashed_at() + kDowntime;
  world.run_until(restored);
  ASSERT_TRUE(world.hub_up());
  ASSERT_EQ(world.hub().epoch(), 2u);

  EXPECT_THAT(missing_live_instances(world, fleet), IsEmpty()) << "live agents wait for nothing";
  for (auto p : crashed)
    EXPECT_TRUE(departures.of(p).present) << world.spec(p).node_id;
  if (crash == HubCrash::kLosingUnflushedBatch)
    ASSERT_TRUE(world.hub_has(stopping_reg.service, stopping_reg.instance.id))
        << "the deregistration must have been in the lost batch";
  else
    EXPECT_FALSE(world.hub_has(stopping_reg.service, stopping_reg.instance.id));

  const auto end = restored + kLease + kConvergenceBound + kBeatInterval;
  while (world.now() < end) {
    world.run_for(Duration{1000});
    ASSERT_THAT(missing_live_instances(world, fleet), IsEmpty()) << "at +" << elapsed_ms() << " ms";
  }
  for (auto p : crashed) {
    SCOPED_TRACE(world.spec(p).node_id);
    ASSERT_TRUE(departures.of(p).gone_at.has_value());
    EXPECT_EQ(*departures.of(p).gone_at, restored + kLease) << "one lease of grace, no more";
  }
  EXPECT_EQ(world.hub().counters().nodes_expired, kCrashed);
  EXPECT_FALSE(world.hub_has(stopping_reg.service, stopping_reg.instance.id));
  EXPECT_EQ(world.state(stopping), AgentState::kDown) << "its Deregister was acknowledged";
  EXPECT_THAT(convergence.failures(), IsEmpty());
  EXPECT_GE(convergence.checks(), 2u);
  EXPECT_THAT(consumers_out_of_date(world, fleet), IsEmpty());
}

TEST_F(SimHubRestartTest, LiveAgentsKeepTheirInstancesAcrossARestartAfterTheLastFlush) {
  run_scenario(HubCrash::kAfterFlush);
}

TEST_F(SimHubRestartTest, LiveAgentsKeepTheirInstancesAcrossARestartThatLosesTheUnflushedBatch) {
  run_scenario(HubCrash::kLosingUnflushedBatch);
  EXPECT_GT(world.stats().replies_lost_in_crash, 0u);
}

}  // namespace
}  // namespace cascade::sim::testing
