// Minimal reproduction of a lease lost by a live agent (agent core).
//
// The hub's lease is three beat intervals, and beats are jittered by up to
// +10%. If two beats in a row are lost, the third arrives 3 intervals after
// the last one that renewed the lease: up to 6600 ms against a 6000 ms lease.
// An agent that only ever beats once per interval therefore loses its lease
// to two lost datagrams about half the time. At 5% loss and 1,200 agents that
// is hundreds of expirations of live instances in ten minutes (scenario (a)).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {
namespace {

TEST(SimLeaseTest, TwoLostBeatsInARowDoNotExpireALiveAgent) {
  spdlog::set_level(spdlog::level::warn);
  WorldConfig config = standard_config(/*seed=*/5);
  config.network.drop_probability = 0;
  World world(config);
  proto::Registration reg;
  reg.service = service_key(0);
  reg.instance.id = "i-1";
  reg.instance.address = "10.0.0.1:80";
  const auto agent = world.add_agent(AgentSpec{"node-1", {reg}, {}});
  // Of every six UpBeats the agent sends, the third and fourth are lost.
  std::uint64_t beats = 0;
  world.network().set_fault_script([&](Address, Address to, const proto::Message& m) {
    Network::Fault fault;
    if (to == kHubAddress && std::holds_alternative<proto::UpBeat>(m)) {
      const auto n = beats++ % 6;
      fault.lose = n == 2 || n == 3;
    }
    return fault;
  });
  world.start(agent);

  for (int second = 1; second <= 120; ++second) {
    world.run_for(Duration{1000});
    ASSERT_TRUE(world.hub_has(reg.service, reg.instance.id)) << "lost at +" << second << " s";
  }
  EXPECT_EQ(world.hub().counters().nodes_expired, 0u);
  EXPECT_THAT(totals_drift(world), ::testing::IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
