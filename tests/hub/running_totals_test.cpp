// The running totals a hub's status reports (HubCore::status, read in O(1)
// on the serving thread) follow every change of state. Each scenario checks
// the figures status answers with; HubRig also recounts every total by
// walking the state after each step (expect_totals_kept), so a change that
// forgets to update one fails here even where the figure is not asserted.

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using proto::AdminOp;

constexpr Duration kLease{6000};
constexpr Duration kMaxHold{30'000};

HubCoreConfig hub_config(std::uint32_t tier = 1) {
  HubCoreConfig config;
  config.hub_id = "hub-a";
  config.tier = tier;
  config.lease = kLease;
  config.isolation.jitter = 0;          // isolations end at exact times
  config.eviction.max_hold = kMaxHold;  // shorter than the window: a hold ends by max_hold
  return config;
}

proto::Registration reg_with(const std::string& service, const std::string& id,
                             proto::InstanceStatus status) {
  auto r = reg(service, id, "host-" + id + ":80");
  r.instance.status = status;
  return r;
}

proto::AdminRequest instance_op(AdminOp op, const std::string& service, const std::string& id) {
  proto::AdminRequest r;
  r.request_id = 9;
  r.op = op;
  r.actor = "alice@ops-1";
  r.service = test_support::key(service);
  r.instance_id = id;
  return r;
}

proto::AdminRequest add_static_op(const std::string& service, const std::string& id) {
  auto r = instance_op(AdminOp::kAddStatic, service, id);
  r.instance = test_support::inst(id, "static-" + id + ":80");
  return r;
}

class RunningTotals : public ::testing::Test {
 protected:
  explicit RunningTotals(std::uint32_t tier = 1) : rig(hub_config(tier)) {}

  // The figures as the status reply carries them.
  std::uint64_t up() { return rig.counter("instances_up"); }
  std::uint64_t out_of_service() { return rig.counter("instances_out_of_service"); }
  std::uint64_t statics() { return rig.counter("instances_static"); }
  std::uint64_t isolated() { return rig.status().isolated; }
  std::uint64_t unconfirmed() { return rig.status().unconfirmed; }

  void admin(const proto::AdminRequest& request) {
    const auto result = rig.handle(request);
    const auto* reply = std::get_if<proto::AdminReply>(&result.reply);
    ASSERT_NE(reply, nullptr);
    ASSERT_TRUE(reply->ok) << reply->message;
  }
  // `count` providers "<prefix>0".. with one UP instance of `service` each.
  void providers(const std::string& prefix, int count, const std::string& service) {
    for (int i = 0; i < count; ++i) {
      const auto id = prefix + std::to_string(i);
      rig.provider(id, {reg_with(service, id, proto::InstanceStatus::kUp)});
    }
  }

  HubRig rig;
};

// ---------------------------------------------------------------- registration and departure

TEST_F(RunningTotals, RegistrationCountsUpInstancesAndAStatusChangeMovesThem) {
  rig.provider("p1", {reg_with("web", "a", proto::InstanceStatus::kUp),
                      reg_with("web", "b", proto::InstanceStatus::kDown),
                      reg_with("api", "c", proto::InstanceStatus::kUp)});
  EXPECT_EQ(up(), 2u);
  EXPECT_EQ(rig.status().instances, 3u);

  rig.provider("p1", {reg_with("web", "a", proto::InstanceStatus::kUp),
                      reg_with("web", "b", proto::InstanceStatus::kUp),
                      reg_with("api", "c", proto::InstanceStatus::kStarting)});
  rig.beat("p1");  // the hub asked for the changed set
  EXPECT_EQ(up(), 2u);
  EXPECT_EQ(rig.hub.registry().totals().up, 2u);
  EXPECT_EQ(rig.entry("api", "c")->status(), proto::InstanceStatus::kStarting);
}

TEST_F(RunningTotals, DeregistrationTakesItsInstancesOutOfTheTotals) {
  providers("p", 3, "web");
  rig.provider("q", {reg_with("web", "q", proto::InstanceStatus::kDown)});
  EXPECT_EQ(up(), 3u);
  rig.deregister("p1");
  rig.deregister("q");
  EXPECT_EQ(up(), 2u);
  EXPECT_EQ(rig.status().instances, 2u);
}

TEST_F(RunningTotals, LeaseExpiryTakesItsInstancesOutOfTheTotals) {
  providers("p", 2, "web");  // too small a registry for eviction protection to hold anything
  rig.silence("p0");
  rig.advance(kLease + Duration{100});
  EXPECT_FALSE(rig.hub.knows_node("p0"));
  EXPECT_EQ(up(), 1u);
  EXPECT_EQ(rig.status().instances, 1u);
}

// ---------------------------------------------------------------- eviction protection

TEST_F(RunningTotals, HeldInstanceCountsUnconfirmedUntilReleasedThenLeaves) {
  providers("p", 10, "web");
  for (const auto* id : {"p0", "p1", "p2"})
    rig.silence(id);
  rig.advance(kLease + Duration{100});  // 20% of 10 expire; the third is held
  EXPECT_EQ(unconfirmed(), 1u);
  EXPECT_EQ(rig.counter("held_nodes"), 1u);
  EXPECT_EQ(up(), 8u) << "a held instance is still served UP, unconfirmed";

  rig.advance(kMaxHold, Duration{100});
  EXPECT_EQ(unconfirmed(), 0u);
  EXPECT_EQ(rig.counter("held_nodes"), 0u);
  EXPECT_EQ(rig.counter("held_released_max_hold"), 1u);
  EXPECT_EQ(up(), 7u);
}

TEST_F(RunningTotals, HeldAgentThatBeatsAgainLeavesTheUnconfirmedTotal) {
  providers("p", 10, "web");
  for (const auto* id : {"p0", "p1", "p2"})
    rig.silence(id);
  rig.advance(kLease + Duration{100});
  ASSERT_EQ(unconfirmed(), 1u);
  for (const auto* id : {"p0", "p1", "p2"})
    if (rig.hub.knows_node(id)) rig.resume(id);
  EXPECT_EQ(unconfirmed(), 0u);
  EXPECT_EQ(rig.counter("held_nodes"), 0u);
  EXPECT_EQ(up(), 8u);
}

TEST_F(RunningTotals, PartitionedSourceIsCountedWhileItsNodesAreHeld) {
  for (int i = 0; i < 10; ++i) {
    const auto id = "r" + std::to_string(i);
    rig.provider(id, {reg_with("web", id, proto::InstanceStatus::kUp)}, "rack-1");
  }
  providers("p", 20, "web");
  for (int i = 0; i < 10; ++i)
    rig.silence("r" + std::to_string(i));  // the rack is cut off
  rig.advance(kLease + Duration{100});
  EXPECT_EQ(rig.counter("partitioned_sources"), 1u);
  EXPECT_GT(rig.counter("held_for_partition"), 0u);
  for (int i = 0; i < 10; ++i)
    if (rig.hub.knows_node("r" + std::to_string(i))) rig.resume("r" + std::to_string(i));
  EXPECT_EQ(rig.counter("partitioned_sources"), 0u);
  EXPECT_EQ(unconfirmed(), 0u);
}

// ---------------------------------------------------------------- isolation

TEST_F(RunningTotals, IsolationAndReadmissionMoveTheIsolatedTotal) {
  providers("p", 4, "web");
  rig.report("c1", "web", "host-p1:80");
  rig.report("c2", "web", "host-p1:80");
  EXPECT_EQ(isolated(), 1u);
  EXPECT_EQ(up(), 4u) << "isolated, but still reported UP";

  rig.advance(Duration{10'000} + Duration{100});  // the first isolation lasts 10 s
  EXPECT_EQ(isolated(), 0u);

  rig.report("c1", "web", "host-p2:80");
  rig.report("c2", "web", "host-p2:80");
  ASSERT_EQ(isolated(), 1u);
  admin(instance_op(AdminOp::kReadmit, "web", "p2"));
  EXPECT_EQ(isolated(), 0u);
}

TEST_F(RunningTotals, IsolatedInstanceThatLeavesLeavesTheIsolatedTotal) {
  providers("p", 4, "web");
  rig.report("c1", "web", "host-p1:80");
  rig.report("c2", "web", "host-p1:80");
  ASSERT_EQ(isolated(), 1u);
  rig.deregister("p1");
  EXPECT_EQ(isolated(), 0u);
  EXPECT_EQ(up(), 3u);
}

// ---------------------------------------------------------------- operator marks

TEST_F(RunningTotals, OutOfServiceMarkOnAPresentInstanceTakesItOutOfUp) {
  providers("p", 3, "web");
  admin(instance_op(AdminOp::kMarkOutOfService, "web", "p1"));
  EXPECT_EQ(out_of_service(), 1u);
  EXPECT_EQ(up(), 2u);
  admin(instance_op(AdminOp::kMarkInService, "web", "p1"));
  EXPECT_EQ(out_of_service(), 0u);
  EXPECT_EQ(up(), 3u);
}

TEST_F(RunningTotals, OutOfServiceMarkOnAnAbsentInstanceCountsWhileItIsPresent) {
  providers("p", 2, "web");
  admin(instance_op(AdminOp::kMarkOutOfService, "web", "late"));
  EXPECT_EQ(out_of_service(), 0u) << "marked, but not present";
  EXPECT_EQ(rig.counter("out_of_service_marks"), 1u);

  rig.provider("late", {reg_with("web", "late", proto::InstanceStatus::kUp)});
  EXPECT_EQ(out_of_service(), 1u);
  EXPECT_EQ(up(), 2u);

  rig.deregister("late");
  EXPECT_EQ(out_of_service(), 0u);
  EXPECT_EQ(rig.counter("out_of_service_marks"), 1u) << "the mark outlives the instance";
}

// ---------------------------------------------------------------- static instances

TEST_F(RunningTotals, StaticInstanceCountsUntilRemoved) {
  admin(add_static_op("web", "s1"));
  EXPECT_EQ(statics(), 1u);
  EXPECT_EQ(up(), 1u);
  admin(add_static_op("web", "s2"));
  admin(instance_op(AdminOp::kRemoveStatic, "web", "s1"));
  EXPECT_EQ(statics(), 1u);
  EXPECT_EQ(up(), 1u);
  EXPECT_EQ(rig.status().instances, 1u);
}

TEST_F(RunningTotals, StaticInstanceTakenOverByItsClaimantStopsCountingAsStatic) {
  admin(add_static_op("web", "s1"));
  rig.provider("p1", {reg_with("web", "s1", proto::InstanceStatus::kUp)});  // claims it
  EXPECT_EQ(statics(), 1u) << "the operator's definition stands while it is static";
  EXPECT_EQ(rig.entry("web", "s1")->owner, kStaticOwner);

  admin(instance_op(AdminOp::kRemoveStatic, "web", "s1"));
  EXPECT_EQ(rig.entry("web", "s1")->owner, "p1");
  EXPECT_EQ(statics(), 0u);
  EXPECT_EQ(up(), 1u);
  EXPECT_EQ(rig.status().instances, 1u);
}

// ---------------------------------------------------------------- restore

TEST_F(RunningTotals, RestoreFromASnapshotCountsWhatItRestores) {
  HubSnapshot snapshot;
  snapshot.nodes.push_back({"p1", 1, 0, ""});
  const auto web = test_support::key("web");
  snapshot.instances.push_back(
      {web, reg_with("web", "a", proto::InstanceStatus::kUp).instance, "p1"});
  snapshot.instances.push_back(
      {web, reg_with("web", "b", proto::InstanceStatus::kDown).instance, "p1"});
  snapshot.instances.push_back(
      {web, reg_with("web", "c", proto::InstanceStatus::kUp).instance, "p1"});
  snapshot.instances.push_back(
      {web, reg_with("web", "s", proto::InstanceStatus::kUp).instance, std::string(kStaticOwner)});
  snapshot.instances.push_back(  // its agent was deleted: an orphan row, not restored
      {web, reg_with("web", "o", proto::InstanceStatus::kUp).instance, "gone"});
  snapshot.services.push_back({web, 5});
  snapshot.overrides.push_back({web, "c", proto::InstanceStatus::kOutOfService});
  rig.hub.restore(snapshot, rig.clock.now());
  expect_totals_kept(rig.hub, "the restore");

  EXPECT_EQ(rig.status().instances, 4u);
  EXPECT_EQ(up(), 2u) << "a and the static s; b is DOWN, c is out of service";
  EXPECT_EQ(out_of_service(), 1u);
  EXPECT_EQ(statics(), 1u);
  EXPECT_EQ(rig.hub.registry().totals(),
            (InstanceTotals{.up = 2, .out_of_service = 1, .static_instances = 1}));
}

// ---------------------------------------------------------------- nodes: tiers and uses

class RunningTotalsOfATier2Hub : public RunningTotals {
 protected:
  RunningTotalsOfATier2Hub() : RunningTotals(/*tier=*/2) {}

  void beat_as(const std::string& node, std::uint32_t tier, std::uint64_t seq) {
    auto b = beat_with_set(node, seq, {reg_with("web", node + "-i", proto::InstanceStatus::kUp)});
    b.sender_tier = tier;
    const auto result = rig.handle(b);
    ASSERT_TRUE(std::holds_alternative<proto::DownBeat>(result.reply));
  }
};

TEST_F(RunningTotalsOfATier2Hub, NodeThatTurnsOutToBeALowerTierHubCountsAsAChildHub) {
  beat_as("dc1", 0, 1);  // first seen as an agent (as a restored node is, too)
  EXPECT_EQ(rig.status().child_hubs, 0u);
  beat_as("dc1", 1, 2);
  EXPECT_EQ(rig.status().child_hubs, 1u);
  beat_as("dc1", 1, 3);
  beat_as("dc2", 1, 1);
  EXPECT_EQ(rig.status().child_hubs, 2u);
  beat_as("dc2", 0, 2);  // the id is an agent's again
  EXPECT_EQ(rig.status().child_hubs, 1u);

  rig.clock.advance(kLease + Duration{100});  // neither beats again: both expire
  rig.tick();
  EXPECT_EQ(rig.status().nodes, 0u);
  EXPECT_EQ(rig.status().child_hubs, 0u);
}

TEST_F(RunningTotals, ReplacedUsesAndAnExpiredConsumerLeaveTheSubscriptionCount) {
  for (const auto* service : {"a", "b", "c"})
    rig.provider(std::string("p-") + service,
                 {reg_with(service, std::string("i-") + service, proto::InstanceStatus::kUp)});
  rig.consumer("c1", {"a", "b"});
  rig.consumer("c2", {"a"});
  EXPECT_EQ(rig.counter("subscriptions"), 3u);

  rig.consumer("c1", {"c"});  // c1's application now uses only c
  EXPECT_EQ(rig.counter("subscriptions"), 2u);
  rig.consumer("c1", {"a", "b", "c"});
  EXPECT_EQ(rig.counter("subscriptions"), 4u);

  rig.silence("c1");
  rig.advance(kLease + Duration{100});
  EXPECT_FALSE(rig.hub.knows_node("c1"));
  EXPECT_EQ(rig.counter("subscriptions"), 1u);
  rig.deregister("c2");
  EXPECT_EQ(rig.counter("subscriptions"), 0u);
}

}  // namespace
}  // namespace cascade::hub
