#include "cascade/sim/world.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {
namespace {

// One provider and one consumer of its service on a lossless network.
class SimWorldTest : public ::testing::Test {
 protected:
  SimWorldTest() : world(config()) {
    spdlog::set_level(spdlog::level::warn);
    reg.service = service_key(0);
    reg.instance.id = "i-1";
    reg.instance.address = "10.0.0.1:80";
    provider = world.add_agent(AgentSpec{"provider", {reg}, {}});
    consumer = world.add_agent(AgentSpec{"consumer", {}, {reg.service}});
  }
  static WorldConfig config() {
    WorldConfig c = standard_config(/*seed=*/3);
    c.network.drop_probability = 0;
    return c;
  }
  std::vector<proto::Instance> listed() const { return {reg.instance}; }
  void TearDown() override { EXPECT_THAT(totals_drift(world), ::testing::IsEmpty()); }

  World world;
  proto::Registration reg;
  std::size_t provider = 0;
  std::size_t consumer = 0;
};

TEST_F(SimWorldTest, AConsumerStartedAfterTheProviderResolvesItAtOnce) {
  world.start(provider);
  world.run_for(kRoundTrip);
  world.start(consumer);
  world.run_for(kRoundTrip);
  EXPECT_TRUE(world.hub_has(reg.service, reg.instance.id));
  EXPECT_EQ(world.cached_instances(consumer, reg.service), listed());
}

TEST_F(SimWorldTest, AConsumerStartedFirstLearnsOfTheProviderOnItsNextBeat) {
  world.start(consumer);
  world.run_for(kRoundTrip);
  world.start(provider);
  world.run_for(kLongestBeatInterval + kRoundTrip);
  EXPECT_EQ(world.cached_instances(consumer, reg.service), listed());
}

TEST_F(SimWorldTest, AProviderCutOffFromTheHubExpiresAndReturnsWhenHealed) {
  world.start(provider);
  world.run_for(kRoundTrip);
  world.network().cut(World::address_of(provider), kHubAddress);
  world.run_for(kLease + kLongestBeatInterval);
  EXPECT_FALSE(world.hub_has(reg.service, reg.instance.id));
  world.network().heal_all();
  world.run_for(kLongestBeatInterval * 4);  // after failover backoff
  EXPECT_TRUE(world.hub_has(reg.service, reg.instance.id));
}

TEST_F(SimWorldTest, ARestartedAgentIsANewIncarnation) {
  world.start(provider);
  world.run_for(kRoundTrip);
  world.kill(provider);
  world.restart(provider);
  world.run_for(kRoundTrip);
  EXPECT_EQ(world.epoch(provider), 2u);
  EXPECT_TRUE(world.hub_has(reg.service, reg.instance.id));
  EXPECT_EQ(world.hub().counters().nodes_expired, 0u);
}

TEST_F(SimWorldTest, AStoppingAgentThatHearsNothingExitsAfterTheStopTimeout) {
  world.start(provider);
  world.run_for(kRoundTrip);
  world.network().cut(World::address_of(provider), kHubAddress);
  world.stop(provider);
  world.run_for(world.config().stop_timeout);
  EXPECT_EQ(world.state(provider), AgentState::kDown);
  EXPECT_EQ(world.stats().stops_timed_out, 1u);
  EXPECT_TRUE(world.hub_has(reg.service, reg.instance.id)) << "left to the lease";
}

TEST_F(SimWorldTest, TheDiskHoldsEveryFlushedChangeAndARestartedHubServesIt) {
  world.start(provider);
  world.run_for(kRoundTrip + world.config().flush_interval);
  EXPECT_EQ(world.disk().instance_count(), 1u);
  EXPECT_EQ(world.disk().node_count(), 1u);
  world.restart_hub(HubCrash::kAfterFlush);
  EXPECT_EQ(world.hub().epoch(), 2u);
  EXPECT_TRUE(world.hub_has(reg.service, reg.instance.id));
}

TEST_F(SimWorldTest, MessagesToAHubThatIsDownAreLost) {
  world.start(provider);
  world.run_for(kRoundTrip);
  world.restart_hub(HubCrash::kAfterFlush, Duration{5000});
  EXPECT_FALSE(world.hub_up());
  world.run_for(Duration{4000});
  EXPECT_GT(world.stats().lost_while_hub_down, 0u);
  world.run_for(Duration{1000});
  EXPECT_TRUE(world.hub_up());
}

}  // namespace
}  // namespace cascade::sim::testing
