// Minimal reproduction of instances revived after a graceful stop (hub core).
//
// The hub forgets a node entirely when its Deregister arrives. A beat the same
// incarnation sent just before (still in flight, overtaken by the Deregister)
// then looks like a brand-new node: the hub admits it and, if the beat carried
// the registration set, registers its instances again. They stay a whole lease
// although their process is gone. The hub already expects overtaken beats
// (stale seqs are not applied), but the Deregister wipes the seq it would need.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {
namespace {

proto::Registration registration(const std::string& id) {
  proto::Registration reg;
  reg.service = service_key(0);
  reg.instance.id = id;
  reg.instance.address = id + ":80";
  return reg;
}

TEST(SimDeregisterReorderTest, ABeatOvertakenByTheDeregisterDoesNotReviveTheInstances) {
  spdlog::set_level(spdlog::level::warn);
  WorldConfig config = standard_config(/*seed=*/7);
  config.network = NetworkConfig{0.0, Duration{10}, Duration{10}};
  World world(config);
  const auto a = registration("a");
  const auto b = registration("b");
  const auto agent = world.add_agent(AgentSpec{"node-1", {a}, {}});
  // A beat carrying the registration set takes 200 ms; everything else 10 ms.
  world.network().set_fault_script([](Address, Address, const proto::Message& m) {
    Network::Fault fault;
    const auto* beat = std::get_if<proto::UpBeat>(&m);
    if (beat != nullptr && beat->registrations) fault.delay = Duration{200};
    return fault;
  });
  world.start(agent);
  world.run_for(Duration{1000});
  ASSERT_TRUE(world.hub_has(a.service, a.instance.id));

  world.add_registration(agent, b);  // the new set {a, b} leaves at once (slow)
  world.run_for(Duration{1});
  world.stop(agent);             // the Deregister leaves 1 ms later and arrives first
  world.run_for(Duration{100});  // the ack waited for the hub's flush, then came back
  ASSERT_EQ(world.state(agent), AgentState::kDown) << "the Deregister was acknowledged";
  ASSERT_FALSE(world.hub_has(a.service, a.instance.id));

  world.run_for(Duration{200});  // the overtaken beat has arrived
  EXPECT_FALSE(world.hub_has(a.service, a.instance.id));
  EXPECT_FALSE(world.hub_has(b.service, b.instance.id));
  EXPECT_EQ(world.hub().node_count(), 0u);
  EXPECT_THAT(totals_drift(world), ::testing::IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
