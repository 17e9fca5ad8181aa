// Minimal reproduction of a restarted agent deafened by its predecessor's
// reply (agent core).
//
// A restarted agent keeps its node id and address, and its beat seq starts
// again at 1. A DownBeat sent to the previous incarnation that is still on
// the way (or routed by node id, as a proxy does) carries a high ack_seq; the
// new incarnation takes it as the newest reply it applied, and then discards
// every reply to its own beats as "overtaken" until its seq catches up: it
// misses beat after beat, fails over, and its cache no longer follows the hub.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {
namespace {

constexpr std::uint64_t kSlowFromSeq = 10;

TEST(SimAgentRestartTest, AReplyToThePreviousIncarnationDoesNotDeafenTheNextOne) {
  spdlog::set_level(spdlog::level::warn);
  WorldConfig config = standard_config(/*seed=*/11);
  config.network = NetworkConfig{0.0, Duration{10}, Duration{10}};
  World world(config);
  proto::Registration reg;
  reg.service = service_key(0);
  reg.instance.id = "i-1";
  reg.instance.address = "10.0.0.1:80";
  const auto agent = world.add_agent(AgentSpec{"node-1", {reg}, {reg.service}});
  // Replies to the first incarnation's later beats are slow (300 ms).
  world.network().set_fault_script([&](Address, Address, const proto::Message& m) {
    Network::Fault fault;
    const auto* down = std::get_if<proto::DownBeat>(&m);
    if (down != nullptr && down->ack_seq >= kSlowFromSeq && world.epoch(agent) == 1)
      fault.delay = Duration{300};
    return fault;
  });
  world.start(agent);
  while (world.now() < world.config().start + std::chrono::minutes(1)) {
    world.run_for(Duration{20});
    if (world.hub().counters().beats >= kSlowFromSeq) break;  // its reply is on the way
  }
  world.restart(agent);  // epoch 2; the slow reply arrives after its first own reply

  world.run_for(Duration{20'000});
  EXPECT_EQ(world.agent(agent).failovers(), 0u);
  EXPECT_TRUE(world.agent(agent).hub_reachable(world.now()));
  EXPECT_TRUE(world.hub_has(reg.service, reg.instance.id));
  EXPECT_THAT(totals_drift(world), ::testing::IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
