// Tier scenario (3): an L2 crashes and restarts from its disk, under 3% loss.
//
// A provider of dc1 (under l2-a) stops gracefully; l2-a crashes the instant
// it has handled the uplink delta that removes the instance, so that removal
// is the unflushed batch, and comes back one second later. Claims:
//  - the new incarnation serves the restored tiers at once; a change lost
//    with the unflushed batch was never acknowledged, so dc1's uplink repeats
//    it and the new L2 applies it;
//  - each L1 below re-sends its set to the new incarnation on its own (once:
//    one lost on the way is not repeated while the restored set matches);
//  - nothing below loses a same-tier instance, no lease runs out anywhere,
//    no consumer's view ever regresses, and everyone holds the live set
//    within kRestartBound of the crash.

#include "cascade/tests/sim/tier_fixture.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

constexpr Duration kDowntime{1000};
// The L2 is back after the downtime; its children's uplinks get through
// within the rejoin time (they may have failed over meanwhile); then the
// removal crosses the network.
constexpr Duration kRestartBound = kDowntime + kRejoin + kCrossTierBound;  // 14.87 s

// Crashes `hub` right after it handles the first beat from hub `child` whose
// delta removes `instance`, before any flush. Must be the last observer.
class CrashOnRemoval final : public TieredObserver {
 public:
  CrashOnRemoval(TieredWorld& world, std::size_t hub, std::size_t child, std::string instance,
                 HubCrash crash)
      : world_(world), hub_(hub), child_(child), instance_(std::move(instance)), crash_(crash) {}
  std::optional<MonoTime> crashed_at() const { return crashed_at_; }

  void on_hub_received(MonoTime now, std::size_t hub, Address from,
                       const proto::Message& m) override {
    if (crashed_at_ || hub != hub_ || from != TieredWorld::hub_address(child_) ||
        !delta_removes(m, instance_))
      return;
    crashed_at_ = now;
    world_.restart_hub(hub_, crash_, kDowntime);
  }

 private:
  TieredWorld& world_;
  std::size_t hub_;
  std::size_t child_;
  std::string instance_;
  HubCrash crash_;
  std::optional<MonoTime> crashed_at_;
};

class SimTiersL2RestartTest : public TierFixture {
 protected:
  void run_scenario(HubCrash crash);
};

void SimTiersL2RestartTest::run_scenario(HubCrash crash) {
  const Datacenter& dc = fleet.dcs[1];
  const std::size_t stopping = dc.providers[7];
  const auto& reg = provided(world, stopping);
  TierDepartures departures(world, fleet, {stopping});
  CrashOnRemoval crasher(world, dc.l2, dc.l1, reg.instance.id, crash);
  observers.add(&departures);
  observers.add(&crasher);
  warm_up();

  world.stop(stopping);
  live_set_changed();
  world.run_for(Duration{1000});
  ASSERT_TRUE(crasher.crashed_at().has_value()) << "the removal never reached L2";
  const MonoTime crashed = *crasher.crashed_at();
  world.run_until(crashed + kDowntime);
  ASSERT_TRUE(world.hub_up(dc.l2));
  ASSERT_EQ(world.hub(dc.l2).epoch(), 2u);
  const bool lost = crash == HubCrash::kLosingUnflushedBatch;
  EXPECT_EQ(world.hub_has(dc.l2, reg.service, reg.instance.id), lost)
      << "the restored registry is the disk's: the removal is there only if it was flushed";
  EXPECT_EQ(world.hub(dc.l2).registry().instance_count(),
            fleet.dcs[0].providers.size() + dc.providers.size() - (lost ? 0 : 1));

  run_checking_same_tier(crashed + kRestartBound + kPull);
  EXPECT_THAT(live.out_of_date_pairs(), IsEmpty());
  EXPECT_LE(live.last_settled() - crashed, kRestartBound);
  RecordProperty("settled_ms", std::to_string((live.last_settled() - crashed).count()));
  EXPECT_EQ(live.breaks(), 0u) << "a consumer's view regressed across the restart";
  EXPECT_THAT(same_tier.failures(), IsEmpty());
  const auto& d = departures.of(stopping);
  EXPECT_TRUE(d.present.empty()) << "the stopped instance survives somewhere";
  EXPECT_EQ(d.returns, lost ? 1u : 0u) << "back only with the lost batch, at the restart";
  // Each L1 re-sends its set once to the new incarnation; one lost on the way
  // is not repeated while the restored set gives the L1's digest (a delta or
  // beat that does not is answered send_full), so under loss one may be missing.
  EXPECT_GE(world.hub(dc.l2).counters().full_sets_received, 1u)
      << "the L1s below re-send their sets to the new incarnation";
  for (std::size_t h = 0; h < world.hub_count(); ++h)
    EXPECT_EQ(world.hub(h).counters().nodes_expired, 0u) << world.hub(h).config().hub_id;
  EXPECT_EQ(world.hub(fleet.l3).registry().instance_count(), providers() - 1);
}

TEST_F(SimTiersL2RestartTest, EverythingConvergesAfterARestartThatKeptTheLastFlush) {
  run_scenario(HubCrash::kAfterFlush);
}

TEST_F(SimTiersL2RestartTest, EverythingConvergesAfterARestartThatLostTheUnflushedBatch) {
  run_scenario(HubCrash::kLosingUnflushedBatch);
  EXPECT_GT(world.hub_stats(fleet.dcs[1].l2).replies_lost_in_crash, 0u);
}

}  // namespace
}  // namespace cascade::sim::testing
