// What the hub's HTTP admin API reads from HubCore (hub/hub_core_views.cpp)
// on a fake clock: the child hubs from their own index, the isolated
// instances from the isolation tracker, the unconfirmed ones from the nodes
// eviction protection holds, each list cut at its limit and counted whole,
// and the leases the instances' nodes have left.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

constexpr Duration kLease{6000};

HubCoreConfig hub_config(std::uint32_t tier = 1) {
  HubCoreConfig config;
  config.hub_id = "hub-a";
  config.tier = tier;
  config.lease = kLease;
  return config;  // isolation: 2 reporters in 10 s; eviction: 20% of a service per 60 s
}

std::string address(int i) {
  return "10.0.0." + std::to_string(i) + ":80";
}

// `count` providers p1..pN of `pay`, one instance each at address(i).
void providers(HubRig& rig, int count) {
  for (int i = 1; i <= count; ++i)
    rig.provider("p" + std::to_string(i), {reg("pay", "p" + std::to_string(i), address(i))});
}

TEST(CoreViews, ChildHubsAreListedWithTheirTierLeaseAndInstancesAndLeaveWithTheirNode) {
  HubRig rig(hub_config(/*tier=*/2));
  providers(rig, 1);  // an agent: not a child hub
  auto child =
      beat_with_set("dc1-hub", 1, {reg("pay", "a", address(7)), reg("pay", "b", address(8))});
  child.sender_tier = 1;
  rig.handle(child);
  rig.clock.advance(Duration{1000});

  const auto children = rig.hub.child_hubs(rig.clock.now());
  ASSERT_EQ(children.size(), 1u);
  EXPECT_EQ(children[0].node_id, "dc1-hub");
  EXPECT_EQ(children[0].tier, 1u);
  EXPECT_EQ(children[0].instances, 2u);
  EXPECT_EQ(children[0].lease_left, kLease - Duration{1000});
  EXPECT_FALSE(children[0].held);
  EXPECT_EQ(rig.hub.child_hub_count(), 1u);

  rig.handle(proto::Deregister{"dc1-hub", 1, 2});
  EXPECT_TRUE(rig.hub.child_hubs(rig.clock.now()).empty());
  expect_totals_kept(rig.hub, "the child hub left");
}

TEST(CoreViews, LeaseLeftCountsDownFromTheLastBeatAndIsNoneForAStaticOwner) {
  HubRig rig(hub_config());
  providers(rig, 1);
  rig.clock.advance(Duration{1500});
  EXPECT_EQ(rig.hub.lease_left("p1", rig.clock.now()), kLease - Duration{1500});
  EXPECT_EQ(rig.hub.lease_left(std::string(kStaticOwner), rig.clock.now()), std::nullopt);
  EXPECT_EQ(rig.hub.lease_left("nobody", rig.clock.now()), std::nullopt);
}

TEST(CoreViews, IsolatedInstancesComeFromTheTrackerSoonestReadmittedFirstAndCutAtTheLimit) {
  HubRig rig(hub_config());
  providers(rig, 4);
  for (int i : {3, 1}) {  // p3 first: it is readmitted first
    rig.report("c1", "pay", address(i));
    rig.report("c2", "pay", address(i));
    rig.clock.advance(Duration{100});
  }
  const auto all = rig.hub.isolated_instances(rig.clock.now(), 10);
  EXPECT_EQ(all.total, 2u);
  ASSERT_EQ(all.instances.size(), 2u);
  EXPECT_EQ(all.instances[0].id, "p3");
  EXPECT_EQ(all.instances[0].address, address(3));
  EXPECT_EQ(all.instances[0].node, "p3");
  EXPECT_EQ(all.instances[0].service, test_support::key("pay"));
  EXPECT_NE(all.instances[0].reason.find("isolated"), std::string::npos) << all.instances[0].reason;
  EXPECT_GT(all.instances[0].span, Duration{0});  // until its readmission
  EXPECT_EQ(all.instances[1].id, "p1");

  const auto first = rig.hub.isolated_instances(rig.clock.now(), 1);
  EXPECT_EQ(first.total, 2u);
  ASSERT_EQ(first.instances.size(), 1u);
  EXPECT_EQ(first.instances[0].id, "p3");
}

TEST(CoreViews, UnconfirmedInstancesAreThoseOfTheNodesProtectionHolds) {
  HubRig rig(hub_config());
  providers(rig, 10);
  for (const auto* id : {"p1", "p2", "p3"})
    rig.silence(id);
  rig.advance(kLease + Duration{10});  // two expire (20% of 10), one is held
  const auto list = rig.hub.unconfirmed_instances(rig.clock.now(), 10);
  ASSERT_EQ(list.instances.size(), 1u);
  EXPECT_EQ(list.total, 1u);
  const auto& held = list.instances[0];
  EXPECT_TRUE(rig.hub.is_held(held.node));
  EXPECT_EQ(held.hold, "budget");
  EXPECT_EQ(held.reason, kUnconfirmedReason);
  EXPECT_EQ(rig.hub.lease_left(held.node, rig.clock.now()), Duration{0});
  EXPECT_TRUE(rig.hub.unconfirmed_instances(rig.clock.now(), 0).instances.empty());

  rig.resume(held.node);
  EXPECT_TRUE(rig.hub.unconfirmed_instances(rig.clock.now(), 10).instances.empty());
}

TEST(CoreViews, AServiceCountsItsOutOfServiceInstancesAsTheRegistryTotals) {
  HubRig rig(hub_config());
  providers(rig, 2);
  proto::AdminRequest mark;
  mark.op = proto::AdminOp::kMarkOutOfService;
  mark.actor = "alice@ops";
  mark.service = test_support::key("pay");
  mark.instance_id = "p2";
  rig.handle(mark);
  const auto* svc = rig.hub.registry().find(test_support::key("pay"));
  ASSERT_NE(svc, nullptr);
  EXPECT_EQ(svc->out_of_service, 1u);
  EXPECT_EQ(rig.hub.registry().totals().out_of_service, 1u);
  expect_totals_kept(rig.hub, "the mark");
}

}  // namespace
}  // namespace cascade::hub
