// Reclaiming service entries: one without instances or routing rules that
// nobody follows is freed after its grace, with its stored row, so a hub
// that sees many distinct service names over its life holds only live ones.

#include <gtest/gtest.h>

#include <set>

#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/registry.hpp"
#include "cascade/tests/common/builders.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using test_support::inst;
using testing::HubRig;

constexpr Duration kGrace{5000};

// ---------------------------------------------------------------- the registry's queue

class RegistryReclaimTest : public ::testing::Test {
 protected:
  Registry reg{/*hub_epoch=*/3, /*change_log_capacity=*/4};
  FakeClock clock;
  proto::ServiceKey key{"svc", "default"};

  // Ends an event the way the hub does: what it noted starts its grace now.
  void end_event() { reg.stamp_noted(clock.now(), kGrace); }
  std::size_t reclaim(std::size_t limit = 100) {
    return reg.reclaim(clock.now(), limit, [](const ServiceEntry&) { return true; });
  }
  void add(const std::string& id) {
    reg.begin_txn();
    reg.upsert(reg.service(key), inst(id, "h:1"), "node");
    end_event();
  }
  void remove(const std::string& id) {
    reg.begin_txn();
    reg.remove(reg.service(key), id, "node");
    end_event();
  }
  // What the hub drains after every event.
  void drain_lists() {
    reg.take_dirty_instances();
    reg.take_dirty_services();
    reg.take_served_changes();
    reg.take_changes();
  }
};

TEST_F(RegistryReclaimTest, AnEmptiedServiceIsFreedOnlyOnceItsGraceRanOut) {
  add("a");
  remove("a");
  drain_lists();
  clock.advance(kGrace - Duration{1});
  EXPECT_EQ(reclaim(), 0u);
  EXPECT_NE(reg.find(key), nullptr);
  clock.advance(Duration{1});
  EXPECT_EQ(reclaim(), 1u);
  EXPECT_EQ(reg.find(key), nullptr);
  EXPECT_EQ(reg.take_reclaimed(), std::vector<proto::ServiceKey>{key});
  EXPECT_FALSE(reg.next_reclaim().has_value());
}

TEST_F(RegistryReclaimTest, AServiceThatCameBackDuringItsGraceIsKept) {
  add("a");
  remove("a");
  clock.advance(kGrace / 2);
  add("b");
  drain_lists();
  clock.advance(kGrace);
  EXPECT_EQ(reclaim(), 0u);
  ASSERT_NE(reg.find(key), nullptr);
  EXPECT_EQ(reg.find(key)->instances.size(), 1u);
}

TEST_F(RegistryReclaimTest, AServiceEmptiedAgainDuringItsGraceGetsAFullGraceFromThen) {
  add("a");
  remove("a");
  clock.advance(kGrace / 2);
  add("b");
  remove("b");
  drain_lists();
  clock.advance(kGrace / 2);
  EXPECT_EQ(reclaim(), 0u) << "changed during the grace: a new one starts when it is popped";
  end_event();
  clock.advance(kGrace - Duration{1});
  EXPECT_EQ(reclaim(), 0u);
  clock.advance(Duration{1});
  EXPECT_EQ(reclaim(), 1u);
}

TEST_F(RegistryReclaimTest, AnEntryStillWaitingInAChangeListIsNotFreed) {
  reg.track_changes();
  add("a");
  remove("a");
  reg.take_dirty_instances();
  reg.take_dirty_services();
  reg.take_served_changes();  // the uplink's list still holds it
  clock.advance(kGrace);
  EXPECT_EQ(reclaim(), 0u);
  ASSERT_NE(reg.find(key), nullptr);
  EXPECT_EQ(reg.take_changes().size(), 1u);  // the pointer it held is still good
  end_event();                               // noted again: a grace from now
  clock.advance(kGrace);
  EXPECT_EQ(reclaim(), 1u);
}

TEST_F(RegistryReclaimTest, RoutingRulesKeepAServiceWithoutInstances) {
  reg.begin_txn();
  reg.set_routes(reg.service(key), {proto::RouteRuleText{"zone = dc1"}});
  end_event();
  drain_lists();
  clock.advance(kGrace);
  EXPECT_EQ(reclaim(), 0u);
  reg.begin_txn();
  reg.set_routes(reg.service(key), {});
  end_event();
  drain_lists();
  clock.advance(kGrace);
  EXPECT_EQ(reclaim(), 1u);
}

TEST_F(RegistryReclaimTest, AnEntryItsHolderWillNotLetGoStays) {
  reg.service(key);
  end_event();
  clock.advance(kGrace);
  EXPECT_EQ(reg.reclaim(clock.now(), 100, [](const ServiceEntry&) { return false; }), 0u);
  EXPECT_NE(reg.find(key), nullptr);
  reg.note_maybe_unused(key);  // its last consumer left
  end_event();
  clock.advance(kGrace);
  EXPECT_EQ(reclaim(), 1u);
}

TEST_F(RegistryReclaimTest, AnEntryItsLastConsumerLeftDuringTheGraceGetsAWholeGraceMore) {
  reg.service(key);  // a consumer's waiter
  end_event();
  clock.advance(kGrace - Duration{1});
  reg.note_maybe_unused(key);  // its consumer leaves just before the grace ends
  end_event();
  clock.advance(Duration{1});
  EXPECT_EQ(reclaim(), 0u) << "its first grace ran out, but its consumer left 1 ms ago";
  end_event();
  clock.advance(kGrace - Duration{1});
  EXPECT_EQ(reclaim(), 0u);
  clock.advance(Duration{1});
  EXPECT_EQ(reclaim(), 1u) << "a grace after the first one ran out";
}

TEST_F(RegistryReclaimTest, FreeingIsCappedPerCallAndTheRestWaits) {
  for (int i = 0; i < 5; ++i)
    reg.service({"svc-" + std::to_string(i), "default"});
  end_event();
  clock.advance(kGrace);
  EXPECT_EQ(reclaim(2), 2u);
  EXPECT_EQ(reg.service_count(), 3u);
  EXPECT_EQ(reg.next_reclaim(), clock.now());
  EXPECT_EQ(reclaim(2), 2u);
  EXPECT_EQ(reclaim(2), 1u);
  EXPECT_EQ(reg.service_count(), 0u);
}

TEST_F(RegistryReclaimTest, AFreedServiceRegisteredAgainGetsAHigherVersion) {
  add("a");
  const auto before = reg.find(key)->version;
  remove("a");
  drain_lists();
  clock.advance(kGrace);
  ASSERT_EQ(reclaim(), 1u);
  add("a");
  EXPECT_GT(reg.find(key)->version, before);
}

// ---------------------------------------------------------------- the hub

HubCoreConfig reclaiming_config() {
  HubCoreConfig c;
  c.lease = Duration{6000};
  c.empty_service_ttl = kGrace;
  return c;
}

const proto::ServiceKey kOrders = test_support::key("orders");

// Moves the rig's clock the way the server runs: its batch is taken (and
// committed) every flush interval, which empties the registry's change
// lists. Returns the service rows the batches deleted.
std::vector<proto::ServiceKey> advance_flushing(HubRig& rig, Duration d) {
  constexpr Duration kFlush{20};
  std::vector<proto::ServiceKey> deleted;
  for (Duration done{0}; done < d; done += kFlush) {
    rig.advance(std::min(kFlush, d - done));
    for (auto& key : rig.hub.take_persist_batch().service_deletes)
      deleted.push_back(std::move(key));
  }
  return deleted;
}

TEST(ServiceReclaim, AServiceWhoseLastInstanceLeftIsForgottenWithItsRowAfterTheGrace) {
  HubRig rig(reclaiming_config());
  rig.provider("p1", {test_support::reg("orders", "o-1", "10.0.0.1:80")});
  rig.deregister("p1");
  EXPECT_TRUE(advance_flushing(rig, kGrace - Duration{100}).empty());
  EXPECT_NE(rig.hub.registry().find(kOrders), nullptr);
  EXPECT_EQ(advance_flushing(rig, Duration{200}), std::vector<proto::ServiceKey>{kOrders});
  EXPECT_EQ(rig.hub.registry().find(kOrders), nullptr);
  EXPECT_EQ(rig.counter("services_reclaimed"), 1u);
  EXPECT_EQ(rig.status().services, 0u);
}

TEST(ServiceReclaim, AServiceStillInAnUnwrittenBatchIsKeptUntilTheBatchIsTaken) {
  HubRig rig(reclaiming_config());
  rig.provider("p1", {test_support::reg("orders", "o-1", "10.0.0.1:80")});
  rig.deregister("p1");
  rig.advance(kGrace * 2);  // no batch taken: its removal is not written yet
  EXPECT_NE(rig.hub.registry().find(kOrders), nullptr);
  const auto batch = rig.hub.take_persist_batch();
  EXPECT_EQ(batch.instance_deletes.size(), 1u);
  EXPECT_EQ(advance_flushing(rig, kGrace + Duration{100}), std::vector<proto::ServiceKey>{kOrders});
}

TEST(ServiceReclaim, AServiceAConsumerFollowsStaysUntilItsLastConsumerLeaves) {
  HubRig rig(reclaiming_config());
  rig.provider("p1", {test_support::reg("orders", "o-1", "10.0.0.1:80")});
  rig.consumer("c1", {"orders"});
  rig.deregister("p1");
  advance_flushing(rig, kGrace * 3);
  ASSERT_NE(rig.hub.registry().find(kOrders), nullptr) << "c1 still follows it";
  EXPECT_TRUE(rig.list("c1", "orders").instances.empty());
  rig.deregister("c1");
  advance_flushing(rig, kGrace + Duration{100});
  EXPECT_EQ(rig.hub.registry().find(kOrders), nullptr);
}

TEST(ServiceReclaim, AConsumerHoldingAFreedServicesVersionGetsTheWholeListWhenItComesBack) {
  HubRig rig(reclaiming_config());
  rig.provider("p1", {test_support::reg("orders", "o-1", "10.0.0.1:80")});
  rig.consumer("c1", {"orders"});
  const auto held = rig.list("c1", "orders").version;
  ASSERT_NE(held, 0u);
  rig.consumer("c1", {});  // stops using it, keeps its list
  rig.deregister("p1");
  advance_flushing(rig, kGrace + Duration{100});
  ASSERT_EQ(rig.hub.registry().find(kOrders), nullptr);
  rig.provider("p2", {test_support::reg("orders", "o-2", "10.0.0.2:80")});
  const auto reply = std::get<proto::DownBeat>(
      rig.hub
          .handle(rig.clock.now(),
                  testing::beat("c1", 99, testing::digest({}), {testing::use("orders", held)}))
          .reply);
  ASSERT_EQ(reply.updates.size(), 1u);
  EXPECT_EQ(reply.updates[0].kind, proto::UpdateKind::kFull);
  EXPECT_GT(reply.updates[0].version, held);
  ASSERT_EQ(reply.updates[0].upserts.size(), 1u);
  EXPECT_EQ(reply.updates[0].upserts[0].id, "o-2");
}

TEST(ServiceReclaim, EntriesKeptForAConsumersWaitsAreFreedOnceItStopsWaiting) {
  HubRig rig(reclaiming_config());
  std::vector<std::string> names;
  for (int i = 0; i < 50; ++i)
    names.push_back("nothing-" + std::to_string(i));
  rig.consumer("c1", names);
  EXPECT_EQ(rig.hub.registry().service_count(), 50u) << "one waiter entry per awaited service";
  EXPECT_EQ(rig.hub.registry().unregistered_count(), 50u);
  rig.consumer("c1", {});  // its application stopped looking them up
  advance_flushing(rig, kGrace + Duration{100});
  EXPECT_EQ(rig.hub.registry().service_count(), 50u) << "left during their first grace";
  advance_flushing(rig, kGrace);
  EXPECT_EQ(rig.hub.registry().service_count(), 0u);
  EXPECT_EQ(rig.hub.registry().unregistered_count(), 0u);
}

TEST(ServiceReclaim, WaitsBeyondTheCapAreLeftToTheConsumersBeats) {
  HubCoreConfig config = reclaiming_config();
  config.max_unregistered_services = 3;
  HubRig rig(config);
  rig.consumer("c1", {"a", "b", "c", "d", "e"});
  EXPECT_EQ(rig.hub.registry().service_count(), 3u);
  EXPECT_EQ(rig.counter("waits_capped"), 2u);
  rig.provider("p1", {test_support::reg("e", "e-1", "10.0.0.5:80")});  // not followed: no push
  rig.advance(Duration{100});
  EXPECT_TRUE(rig.pushes_to("c1").empty());
  rig.beat("c1");
  EXPECT_TRUE(rig.list("c1", "e").instances.contains("e-1")) << "learnt at its beat";
}

TEST(ServiceReclaim, AFailedDeleteIsWrittenAgainByTheNextBatch) {
  HubRig rig(reclaiming_config());
  rig.provider("p1", {test_support::reg("orders", "o-1", "10.0.0.1:80")});
  rig.deregister("p1");
  rig.hub.take_persist_batch();
  rig.advance(kGrace + Duration{100});
  const auto failed = rig.hub.take_persist_batch();
  ASSERT_EQ(failed.service_deletes, std::vector<proto::ServiceKey>{kOrders});
  rig.hub.requeue(failed);
  EXPECT_EQ(rig.hub.take_persist_batch().service_deletes, std::vector<proto::ServiceKey>{kOrders});
  EXPECT_EQ(rig.hub.registry().find(kOrders), nullptr);
}

TEST(ServiceReclaim, AServiceRestoredWithoutInstancesIsFreedAfterTheGrace) {
  HubSnapshot snapshot;
  snapshot.services.push_back({kOrders, 42});
  FakeClock clock;
  HubCore hub(reclaiming_config(), 8, clock.now());
  hub.restore(snapshot, clock.now());
  ASSERT_NE(hub.registry().find(kOrders), nullptr);
  clock.advance(kGrace);
  hub.tick(clock.now());
  EXPECT_EQ(hub.registry().find(kOrders), nullptr);
  EXPECT_EQ(hub.take_persist_batch().service_deletes, std::vector<proto::ServiceKey>{kOrders});
}

// The scaled-down churn run (bench/service_churn_bench.cpp runs 10M names):
// a provider that registers a new service name on every beat leaves at most
// a grace's worth of entries and stored rows behind.
TEST(ServiceReclaim, ChurnThroughThousandsOfServiceNamesKeepsTheRegistryAndTheStoreBounded) {
  HubCoreConfig config = reclaiming_config();
  config.empty_service_ttl = Duration{1000};
  FakeClock clock;
  HubCore hub(config, 9, clock.now());
  std::set<proto::ServiceKey> rows;  // the store's services table
  constexpr Duration kStep{100};
  std::size_t most = 0;
  for (std::uint64_t i = 1; i <= 3000; ++i) {
    auto set = {test_support::reg("churn-" + std::to_string(i), "x", "10.0.0.1:80")};
    hub.handle(clock.now(), testing::beat_with_set("p1", i, set));
    clock.advance(kStep);
    hub.tick(clock.now());
    const auto batch = hub.take_persist_batch();
    for (const auto& row : batch.service_versions)
      rows.insert(row.service);
    for (const auto& gone : batch.service_deletes)
      EXPECT_EQ(rows.erase(gone), 1u);
    most = std::max(most, hub.registry().service_count());
  }
  // Entries live for the grace after they empty (10 beats), plus the one in use.
  EXPECT_LE(most, 12u);
  EXPECT_LE(rows.size(), 12u);
  EXPECT_GE(hub.counters().services_reclaimed, 2980u);
  testing::expect_totals_kept(hub);
}

}  // namespace
}  // namespace cascade::hub
