// A TieredWorld in lock step with an L1 hub in the agents' partition
// (TierHubSpec::beside_agents) and its L2 in the hubs': the L1 serves its
// agents within one queue, its uplink crosses to the L2, a cut between the
// two holds in both directions, and one thread runs what two run.

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <string>

#include "cascade/sim/tiered_world.hpp"

namespace cascade::sim {
namespace {

const proto::ServiceKey kService{"orders", "prod"};
constexpr Duration kL1Lease{6000};
constexpr Duration kL2Lease{9000};

proto::Registration provider(int n) {
  proto::Registration reg;
  reg.service = kService;
  reg.instance.id = "p-" + std::to_string(n);
  reg.instance.address = "10.0.0." + std::to_string(n) + ":8080";
  return reg;
}

struct SplitWorld {
  explicit SplitWorld(Partitions partitions) : world(config(partitions)) {
    l2 = world.add_hub({"l2", 2, kL2Lease, {}, "region"});
    l1 = world.add_hub({"l1", 1, kL1Lease, {l2}, "dc", /*beside_agents=*/true});
    for (int n = 0; n < 20; ++n) {
      const auto agent =
          world.add_agent(AgentSpec{"node-" + std::to_string(n), {provider(n)}, {}}, {l1});
      world.start_at(agent, world.now() + Duration{10 * n});
    }
  }
  static TieredWorldConfig config(Partitions partitions) {
    spdlog::set_level(spdlog::level::err);
    TieredWorldConfig c;
    c.seed = 11;
    c.network = NetworkConfig{0.02, Duration{1}, Duration{30}, /*in_order=*/true};
    c.partitions = partitions;
    return c;
  }
  std::size_t held_by(std::size_t hub) const { return world.hub_instances(hub, kService).size(); }

  TieredWorld world;
  std::size_t l2 = 0;
  std::size_t l1 = 0;
};

// Counts what each hub got from the other.
struct HubLinkCounter final : TieredObserver {
  HubLinkCounter(std::size_t l1_hub, std::size_t l2_hub) : l1(l1_hub), l2(l2_hub) {}
  void on_hub_received(MonoTime, std::size_t hub, Address from, const proto::Message&) override {
    if (hub == l2 && from == TieredWorld::hub_address(l1)) ++l2_from_l1;
    if (hub == l1 && from == TieredWorld::hub_address(l2)) ++l1_from_l2;
  }
  std::size_t l1, l2;
  std::size_t l2_from_l1 = 0;
  std::size_t l1_from_l2 = 0;
};

// Threads change nothing in a run (the last test): one thread runs these.
TEST(SimTieredPartition, AnL1BesideTheAgentsServesThemAndFeedsItsL2AcrossThePartitions) {
  SplitWorld split(Partitions::kLockStep);
  auto& world = split.world;
  EXPECT_FALSE(world.in_hub_partition(TieredWorld::hub_address(split.l1)));
  EXPECT_TRUE(world.in_hub_partition(TieredWorld::hub_address(split.l2)));
  world.run_for(Duration{10'000});
  EXPECT_EQ(split.held_by(split.l1), 20u);
  EXPECT_EQ(split.held_by(split.l2), 20u);
}

// Each partition's network carries its own hubs' sends: a cut made in only
// the hubs' network would stop the L2's replies and let the L1's beats through.
TEST(SimTieredPartition, ACutBetweenTheTwoPartitionsHoldsBothWaysUntilHealed) {
  SplitWorld split(Partitions::kLockStep);
  auto& world = split.world;
  HubLinkCounter counter(split.l1, split.l2);
  world.set_observer(&counter);
  world.run_for(Duration{10'000});
  ASSERT_GT(counter.l2_from_l1, 0u);
  ASSERT_GT(counter.l1_from_l2, 0u);
  world.cut(split.l1, split.l2);
  world.run_for(Duration{100});  // what was on the way before the cut
  const HubLinkCounter at_cut = counter;
  world.run_for(kL2Lease);
  EXPECT_EQ(counter.l2_from_l1, at_cut.l2_from_l1) << "the L1's uplink got through the cut";
  EXPECT_EQ(counter.l1_from_l2, at_cut.l1_from_l2) << "the L2 got through the cut";
  EXPECT_EQ(split.held_by(split.l1), 20u) << "the agents' side of the L1 is untouched";
  world.heal(split.l1, split.l2);
  world.run_for(kL2Lease);
  EXPECT_GT(counter.l2_from_l1, at_cut.l2_from_l1);
  EXPECT_GT(counter.l1_from_l2, at_cut.l1_from_l2);
  EXPECT_EQ(split.held_by(split.l2), 20u);
}

TEST(SimTieredPartition, OneThreadRunsWhatTwoRunWithHubsOnBothSides) {
  auto run = [](Partitions partitions) {
    SplitWorld split(partitions);
    split.world.run_for(Duration{3000});
    split.world.cut(split.l1, split.l2);
    split.world.run_for(Duration{3000});
    split.world.heal(split.l1, split.l2);
    split.world.run_for(Duration{3000});
    return split.world.trace_hash();
  };
  EXPECT_EQ(run(Partitions::kLockStep), run(Partitions::kLockStepThreaded));
}

}  // namespace
}  // namespace cascade::sim
