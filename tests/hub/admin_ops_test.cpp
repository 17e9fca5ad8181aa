// Operator operations (AdminRequest) in the hub core: what consumers are
// served afterwards, what the persist batch carries (the change and its audit
// record), and what a restarted hub restores through the SQLite store.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "cascade/common/codec.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::hub {
namespace {

using proto::AdminOp;
using proto::InstanceStatus;
using testing::beat;
using testing::beat_with_set;
using testing::digest;
using testing::expect_totals_kept;
using ::testing::HasSubstr;
using testing::reg;
using testing::use;

constexpr Duration kLease{6000};

HubCoreConfig config() {
  HubCoreConfig c{"hub-a", 1, kLease};
  c.isolation.jitter = 0;  // isolation times exact
  return c;
}

proto::AdminRequest instance_op(AdminOp op, const std::string& service, const std::string& id) {
  proto::AdminRequest r;
  r.request_id = 9;
  r.op = op;
  r.actor = "alice@ops-1";
  r.service = proto::ServiceKey{service, "default"};
  r.instance_id = id;
  return r;
}

proto::AdminRequest add_static_op(const std::string& service, const std::string& id,
                                  const std::string& address) {
  auto r = instance_op(AdminOp::kAddStatic, service, id);
  r.instance = test_support::inst(id, address);
  return r;
}

proto::AdminRequest switch_op(AdminOp op, bool enabled, std::uint32_t share = 100) {
  proto::AdminRequest r;
  r.request_id = 9;
  r.op = op;
  r.actor = "bob@ops-2";
  r.service = proto::ServiceKey{"", ""};
  r.enabled = enabled;
  r.share_percent = share;
  return r;
}

const proto::Instance* find(const std::vector<proto::Instance>& list, const std::string& id) {
  auto it = std::find_if(list.begin(), list.end(), [&](const auto& in) { return in.id == id; });
  return it == list.end() ? nullptr : &*it;
}

class AdminOpsTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubCore hub{config(), /*epoch=*/7, clock.now()};
  store_test::TempDir tmp;

  void TearDown() override { expect_totals_kept(hub, "the test"); }

  proto::AdminReply admin(const proto::AdminRequest& request) {
    auto r = hub.handle(clock.now(), request);
    expect_totals_kept(hub);
    EXPECT_TRUE(r.durable) << "an operator's reply must wait for the commit";
    auto* reply = std::get_if<proto::AdminReply>(&r.reply);
    EXPECT_NE(reply, nullptr) << "reply is not an AdminReply";
    if (reply == nullptr) return {};
    EXPECT_EQ(reply->request_id, request.request_id);
    return *reply;
  }
  proto::DownBeat send(const proto::UpBeat& b) {
    auto r = hub.handle(clock.now(), b);
    expect_totals_kept(hub);
    return std::get<proto::DownBeat>(r.reply);
  }
  proto::QueryReply query(HubCore& h, const std::string& service) {
    proto::Query q;
    q.request_id = 42;
    q.service.name = service;
    return std::get<proto::QueryReply>(h.handle(clock.now(), q).reply);
  }
  proto::QueryReply query(const std::string& service) { return query(hub, service); }
  proto::StatusReply status(HubCore& h) {
    return std::get<proto::StatusReply>(h.handle(clock.now(), proto::StatusRequest{1}).reply);
  }
  void advance(Duration d) {
    clock.advance(d);
    hub.tick(clock.now());
    expect_totals_kept(hub);
  }
  // The provider "p1" with two UP instances of "svc".
  void register_provider() {
    send(
        beat_with_set("p1", 1, {reg("svc", "i1", "10.0.0.1:80"), reg("svc", "i2", "10.0.0.2:80")}));
  }
  // Commits what the hub would persist now to DATA_DIR/hub.db, as the server does.
  void commit(HubCore& h) {
    auto batch = h.take_persist_batch();
    batch.wall_ms = clock.wall_ms();
    SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal)->apply(batch);
  }
  // A new incarnation of the hub restored from the store.
  std::unique_ptr<HubCore> restart(HubCoreConfig c = config()) {
    auto h = std::make_unique<HubCore>(std::move(c), 8, clock.now());
    h->restore(SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal)->load(), clock.now());
    expect_totals_kept(*h, "a restore");
    return h;
  }
  std::vector<AuditRecord> audit_log() {
    return SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal)->audit_log(100);
  }
};

// ---------------------------------------------------------------- out of service

TEST_F(AdminOpsTest, MarkOutOfServiceIsWhatQueriesAndConsumersBeatsAreServed) {
  register_provider();
  const auto held = send(beat("c1", 1, 0, {use("svc", 0)})).updates.at(0).version;

  const auto reply = admin(instance_op(AdminOp::kMarkOutOfService, "svc", "i1"));

  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.message, "i1 in svc is OUT_OF_SERVICE until marked back in");
  const auto q = query("svc");
  ASSERT_NE(find(q.instances, "i1"), nullptr);
  EXPECT_EQ(find(q.instances, "i1")->status, InstanceStatus::kOutOfService);
  EXPECT_EQ(find(q.instances, "i2")->status, InstanceStatus::kUp);
  const auto down = send(beat("c1", 2, 0, {use("svc", held)}));
  ASSERT_EQ(down.updates.size(), 1u);
  ASSERT_NE(find(down.updates[0].upserts, "i1"), nullptr);
  EXPECT_EQ(find(down.updates[0].upserts, "i1")->status, InstanceStatus::kOutOfService);
  EXPECT_EQ(hub.registry().find({"svc", "default"})->up_count(), 1u);
}

TEST_F(AdminOpsTest, MarkOutOfServiceIsPushedToConsumersBetweenBeats) {
  register_provider();
  send(beat("c1", 1, 0, {use("svc", 0)}));

  admin(instance_op(AdminOp::kMarkOutOfService, "svc", "i1"));
  advance(Duration{10});  // past the push coalescing delay

  const auto pushed = hub.take_node_messages();
  ASSERT_EQ(pushed.size(), 1u);
  const auto& push = std::get<proto::DownBeat>(pushed[0].message);
  EXPECT_TRUE(push.push);
  ASSERT_EQ(push.updates.size(), 1u);
  ASSERT_NE(find(push.updates[0].upserts, "i1"), nullptr);
  EXPECT_EQ(find(push.updates[0].upserts, "i1")->status, InstanceStatus::kOutOfService);
}

TEST_F(AdminOpsTest, MarkInServiceServesTheReportedStatusAgain) {
  register_provider();
  admin(instance_op(AdminOp::kMarkOutOfService, "svc", "i1"));

  const auto reply = admin(instance_op(AdminOp::kMarkInService, "svc", "i1"));

  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.message, "i1 in svc is served as registered again (UP)");
  EXPECT_EQ(find(query("svc").instances, "i1")->status, InstanceStatus::kUp);
  EXPECT_EQ(hub.registry().find({"svc", "default"})->up_count(), 2u);
}

TEST_F(AdminOpsTest, MarkedInstanceIsOutOfServiceAgainWhenItLeavesAndRegistersAgain) {
  register_provider();
  admin(instance_op(AdminOp::kMarkOutOfService, "svc", "i1"));

  hub.handle(clock.now(), proto::Deregister{"p1", 1, 2});
  EXPECT_FALSE(query("svc").found);
  clock.advance(kLease);  // past the deregistered incarnation's quarantine
  send(beat_with_set("p1", 1, {reg("svc", "i1", "10.0.0.1:80")}, /*epoch=*/2));

  ASSERT_NE(find(query("svc").instances, "i1"), nullptr);
  EXPECT_EQ(find(query("svc").instances, "i1")->status, InstanceStatus::kOutOfService);
  EXPECT_EQ(hub.registry().find({"svc", "default"})->up_count(), 0u);
}

TEST_F(AdminOpsTest, MarkingAnInstanceNotRegisteredYetAppliesWhenItRegisters) {
  const auto reply = admin(instance_op(AdminOp::kMarkOutOfService, "svc", "later"));

  EXPECT_TRUE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("when it registers"));
  send(beat_with_set("p1", 1, {reg("svc", "later", "10.0.0.3:80")}));
  EXPECT_EQ(find(query("svc").instances, "later")->status, InstanceStatus::kOutOfService);
}

TEST_F(AdminOpsTest, MarkOutOfServiceIsInTheBatchWithItsAuditRecord) {
  register_provider();
  hub.take_persist_batch();

  admin(instance_op(AdminOp::kMarkOutOfService, "svc", "i1"));
  const auto batch = hub.take_persist_batch();

  EXPECT_EQ(
      batch.override_upserts,
      (std::vector<OverrideRecord>{{{"svc", "default"}, "i1", InstanceStatus::kOutOfService}}));
  ASSERT_EQ(batch.audit.size(), 1u);
  const auto& record = batch.audit[0];
  EXPECT_EQ(record.actor, "alice@ops-1");
  EXPECT_EQ(record.op, "mark_out_of_service");
  EXPECT_EQ(record.service, (proto::ServiceKey{"svc", "default"}));
  EXPECT_EQ(record.instance_id, "i1");
  EXPECT_EQ(record.detail, "i1 in svc is OUT_OF_SERVICE until marked back in");
  EXPECT_TRUE(record.ok);
  EXPECT_EQ(record.at_ms, 0) << "the core reads no clock: the server stamps the commit";
  EXPECT_TRUE(hub.take_persist_batch().empty());

  admin(instance_op(AdminOp::kMarkInService, "svc", "i1"));
  EXPECT_EQ(hub.take_persist_batch().override_deletes,
            (std::vector<InstanceKeyRecord>{{{"svc", "default"}, "i1"}}));
}

TEST_F(AdminOpsTest, OutOfServiceSurvivesARestartAndTheAgentsReturn) {
  register_provider();
  admin(instance_op(AdminOp::kMarkOutOfService, "svc", "i1"));
  commit(hub);

  auto after = restart();
  EXPECT_EQ(find(query(*after, "svc").instances, "i1")->status, InstanceStatus::kOutOfService);
  EXPECT_EQ(after->registry().find({"svc", "default"})->up_count(), 1u);
  // The agent never beats the restarted hub: its instances expire ...
  clock.advance(kLease);
  after->tick(clock.now());
  EXPECT_FALSE(query(*after, "svc").found);
  // ... and come back marked when it registers again.
  after->handle(clock.now(),
                beat_with_set("p1", 1, {reg("svc", "i1", "10.0.0.1:80")}, /*epoch=*/2));
  EXPECT_EQ(find(query(*after, "svc").instances, "i1")->status, InstanceStatus::kOutOfService);

  const auto log = audit_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].at_ms, clock.wall_ms() - kLease.count()) << "stamped at the commit";
}

// ---------------------------------------------------------------- static instances

TEST_F(AdminOpsTest, StaticInstanceIsServedToConsumersAndNeverExpires) {
  const auto reply = admin(add_static_op("db", "db-1", "10.0.0.9:5432"));

  EXPECT_TRUE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("db-1 in db added: 10.0.0.9:5432"));
  const auto down = send(beat("c1", 1, 0, {use("db", 0)}));
  ASSERT_EQ(down.updates.size(), 1u);
  ASSERT_NE(find(down.updates[0].upserts, "db-1"), nullptr);
  EXPECT_EQ(find(down.updates[0].upserts, "db-1")->address, "10.0.0.9:5432");
  for (int i = 0; i < 10; ++i)
    advance(kLease);
  EXPECT_TRUE(query("db").found);
  EXPECT_EQ(hub.node_count(), 0u) << "the consumer expired; the static instance has no node";
}

TEST_F(AdminOpsTest, StaticInstanceIsPersistedWithTheReservedOwnerAndSurvivesARestart) {
  admin(add_static_op("db", "db-1", "10.0.0.9:5432"));
  const auto batch = hub.take_persist_batch();
  ASSERT_EQ(batch.instance_upserts.size(), 1u);
  EXPECT_EQ(batch.instance_upserts[0].owner, kStaticOwner);
  ASSERT_EQ(batch.audit.size(), 1u);
  EXPECT_EQ(batch.audit[0].op, "add_static");
  SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal)->apply(batch);

  auto after = restart();
  ASSERT_TRUE(query(*after, "db").found);
  EXPECT_EQ(query(*after, "db").instances.at(0).address, "10.0.0.9:5432");
  clock.advance(kLease * 3);
  after->tick(clock.now());
  EXPECT_TRUE(query(*after, "db").found) << "a restored static instance has no lease either";
}

TEST_F(AdminOpsTest, RemoveStaticRemovesItFromWhatConsumersAreServed) {
  admin(add_static_op("db", "db-1", "10.0.0.9:5432"));
  const auto added = hub.take_persist_batch().instance_upserts;
  ASSERT_EQ(added.size(), 1u);
  const auto held = send(beat("c1", 1, 0, {use("db", 0)})).updates.at(0).version;

  const auto reply = admin(instance_op(AdminOp::kRemoveStatic, "db", "db-1"));

  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.message, "db-1 in db removed");
  EXPECT_FALSE(query("db").found);
  const auto down = send(beat("c1", 2, 0, {use("db", held)}));
  ASSERT_EQ(down.updates.size(), 1u);
  EXPECT_EQ(down.updates[0].removed, (std::vector<std::string>{"db-1"}));
  EXPECT_EQ(hub.take_persist_batch().instance_deletes, (std::vector<std::uint32_t>{added[0].row}))
      << "the row the add wrote";
}

TEST_F(AdminOpsTest, RemoveStaticOfAnAgentsInstanceIsRefused) {
  register_provider();

  const auto reply = admin(instance_op(AdminOp::kRemoveStatic, "svc", "i1"));

  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.message,
            "i1 in svc is registered by node p1, not by add_static: it leaves when its agent "
            "deregisters or expires");
  EXPECT_TRUE(query("svc").found);
  EXPECT_EQ(query("svc").instances.size(), 2u);
}

TEST_F(AdminOpsTest, AddStaticOfAnIdAnAgentRegisteredIsRefused) {
  register_provider();

  const auto reply = admin(add_static_op("svc", "i1", "10.9.9.9:1"));

  EXPECT_FALSE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("registered by node p1"));
  EXPECT_EQ(find(query("svc").instances, "i1")->address, "10.0.0.1:80");
}

TEST_F(AdminOpsTest, AgentReportingAStaticIdOnlyClaimsItUntilTheStaticInstanceIsRemoved) {
  admin(add_static_op("db", "db-1", "10.0.0.9:5432"));
  const std::vector<proto::Registration> set{reg("db", "db-1", "10.0.0.7:5432")};
  send(beat_with_set("p1", 1, set));
  EXPECT_EQ(query("db").instances.at(0).address, "10.0.0.9:5432") << "the operator's stands";

  const auto reply = admin(instance_op(AdminOp::kRemoveStatic, "db", "db-1"));

  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.message, "db-1 in db is no longer static; node p1 reports it and keeps it");
  // The agent is asked for its set, and its report is served from then on.
  EXPECT_TRUE(send(beat("p1", 2, digest(set))).send_full);
  send(beat_with_set("p1", 3, set));
  EXPECT_EQ(query("db").instances.at(0).address, "10.0.0.7:5432");
}

TEST_F(AdminOpsTest, FailureReportsAboutAStaticInstanceAreCountedByThisHub) {
  admin(add_static_op("db", "db-1", "10.0.0.9:5432"));
  admin(add_static_op("db", "db-2", "10.0.0.8:5432"));

  proto::FailureReport report{
      1, {proto::FailureSignal{{"db", "default"}, "10.0.0.9:5432", {}, "c1", 5}}, 0};
  const auto ack = std::get<proto::ReportAck>(hub.handle(clock.now(), report).reply);

  EXPECT_EQ(ack.accepted, 1u);
  EXPECT_EQ(ack.isolated, 1u);
  EXPECT_EQ(find(query("db").instances, "db-1")->health, proto::Health::kIsolated);
}

// ---------------------------------------------------------------- readmit

TEST_F(AdminOpsTest, ReadmitLiftsAnIsolationNow) {
  register_provider();
  proto::FailureReport report{
      1, {proto::FailureSignal{{"svc", "default"}, "10.0.0.1:80", {}, "c1", 5}}, 0};
  hub.handle(clock.now(), report);
  ASSERT_EQ(find(query("svc").instances, "i1")->health, proto::Health::kIsolated);

  const auto reply = admin(instance_op(AdminOp::kReadmit, "svc", "i1"));

  EXPECT_TRUE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("i1 in svc readmitted"));
  EXPECT_EQ(find(query("svc").instances, "i1")->health, proto::Health::kOk);
  EXPECT_FALSE(hub.isolation().is_isolated({{"svc", "default"}, "i1"}));
  EXPECT_EQ(hub.counters().readmissions, 1u);
}

TEST_F(AdminOpsTest, ReadmitOfAnInstanceThatIsNotIsolatedChangesNothing) {
  register_provider();
  hub.take_persist_batch();
  const auto version = hub.registry().find({"svc", "default"})->version;

  const auto reply = admin(instance_op(AdminOp::kReadmit, "svc", "i1"));

  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.message, "i1 in svc is not isolated; nothing to lift");
  EXPECT_EQ(hub.registry().find({"svc", "default"})->version, version);
  EXPECT_EQ(hub.take_persist_batch().audit.size(), 1u) << "audited all the same";
}

// ---------------------------------------------------------------- switches

TEST_F(AdminOpsTest, EvictionProtectionSwitchIsAppliedPersistedAndRestored) {
  const auto reply = admin(switch_op(AdminOp::kEvictionProtection, false));

  EXPECT_TRUE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("eviction protection off"));
  EXPECT_FALSE(status(hub).eviction_protection);
  commit(hub);

  auto after = restart();  // configured on (the default): the stored setting wins
  EXPECT_FALSE(status(*after).eviction_protection);
}

TEST_F(AdminOpsTest, NotifySwitchSetsTheShareAndIsRestored) {
  const auto reply = admin(switch_op(AdminOp::kNotifySwitch, true, 10));

  EXPECT_TRUE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("pushed to 10%"));
  EXPECT_EQ(status(hub).notify_share_percent, 10u);
  const auto batch = hub.take_persist_batch();
  EXPECT_THAT(batch.settings, ::testing::Contains(SettingRecord{"notify_share_percent", 10}));
  EXPECT_THAT(batch.settings, ::testing::Contains(SettingRecord{"notify_switch", 1}));
  SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal)->apply(batch);

  auto after = restart();
  EXPECT_EQ(status(*after).notify_share_percent, 10u);
  admin(switch_op(AdminOp::kNotifySwitch, false));
  EXPECT_EQ(status(hub).notify_share_percent, 100u);
}

// ---------------------------------------------------------------- refusals

TEST_F(AdminOpsTest, InvalidRequestsAreRefusedWithAReasonAndAudited) {
  auto no_service = instance_op(AdminOp::kMarkOutOfService, "", "i1");
  auto no_id = instance_op(AdminOp::kReadmit, "svc", "");
  auto no_instance = instance_op(AdminOp::kAddStatic, "db", "db-1");
  auto other_id = add_static_op("db", "db-1", "10.0.0.9:1");
  other_id.instance->id = "db-2";
  auto no_address = add_static_op("db", "db-1", "");
  auto zero_share = switch_op(AdminOp::kNotifySwitch, true, 0);
  auto big_share = switch_op(AdminOp::kNotifySwitch, true, 101);
  auto no_actor = switch_op(AdminOp::kEvictionProtection, false);
  no_actor.actor = "";
  const std::vector<std::pair<proto::AdminRequest, std::string>> cases{
      {no_service, "service name is empty"},
      {no_id, "instance id is empty"},
      {no_instance, "add_static needs the instance"},
      {other_id, "the instance's id (db-2) is not the instance id of the request (db-1)"},
      {no_address, "address is empty"},
      {zero_share, "share_percent must be from 1 to 100 (got 0)"},
      {big_share, "share_percent must be from 1 to 100 (got 101)"},
      {no_actor, "actor is empty"},
  };
  for (const auto& [request, why] : cases) {
    const auto reply = admin(request);
    EXPECT_FALSE(reply.ok) << why;
    EXPECT_THAT(reply.message, HasSubstr(why));
  }

  const auto batch = hub.take_persist_batch();
  ASSERT_EQ(batch.audit.size(), cases.size());
  for (const auto& record : batch.audit)
    EXPECT_FALSE(record.ok) << record.detail;
  EXPECT_EQ(batch.audit[2].op, "add_static");
  EXPECT_EQ(batch.audit[2].instance_id, "db-1");
  EXPECT_TRUE(batch.instance_upserts.empty());
  EXPECT_TRUE(batch.settings.empty());
  EXPECT_EQ(hub.counters().admin_refused, cases.size());
  EXPECT_EQ(status(hub).notify_share_percent, 100u);
  EXPECT_TRUE(status(hub).eviction_protection);
}

TEST_F(AdminOpsTest, RefusalsAreInTheAuditLogOnDisk) {
  admin(instance_op(AdminOp::kRemoveStatic, "db", "ghost"));
  commit(hub);

  const auto log = audit_log();
  ASSERT_EQ(log.size(), 1u);
  EXPECT_EQ(log[0].op, "remove_static");
  EXPECT_EQ(log[0].actor, "alice@ops-1");
  EXPECT_EQ(log[0].detail, "no instance ghost in db");
  EXPECT_FALSE(log[0].ok);
  EXPECT_EQ(log[0].at_ms, clock.wall_ms());
}

TEST_F(AdminOpsTest, ChangesOfABatchThatFailedToCommitAreInTheNextOne) {
  register_provider();
  hub.take_persist_batch();
  admin(instance_op(AdminOp::kMarkOutOfService, "svc", "i1"));
  admin(switch_op(AdminOp::kEvictionProtection, false));
  const auto failed = hub.take_persist_batch();
  admin(instance_op(AdminOp::kReadmit, "svc", "i2"));

  hub.requeue(failed);
  const auto next = hub.take_persist_batch();

  EXPECT_EQ(next.override_upserts, failed.override_upserts);
  EXPECT_EQ(next.settings, failed.settings);
  ASSERT_EQ(next.audit.size(), 3u);
  EXPECT_EQ(next.audit[0].op, "mark_out_of_service");
  EXPECT_EQ(next.audit[1].op, "eviction_protection");
  EXPECT_EQ(next.audit[2].op, "readmit");
}

// ---------------------------------------------------------------- routing rules

proto::AdminRequest set_routes_op(const std::string& service,
                                  std::vector<proto::RouteRuleText> routes) {
  proto::AdminRequest r;
  r.request_id = 9;
  r.op = AdminOp::kSetRoutes;
  r.actor = "carol@ops-3";
  r.service = proto::ServiceKey{service, "default"};
  r.routes = std::move(routes);
  return r;
}

std::vector<proto::RouteRuleText> dc1_rules() {
  return {{"=> zone = dc1", 10, false, true}, {"host = 10.9.* =>", 5, true, false}};
}

TEST_F(AdminOpsTest, SetRoutesIsServedWithTheNextFullUpdate) {
  register_provider();

  const auto reply = admin(set_routes_op("svc", dc1_rules()));

  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.message, "svc: 2 routing rules set; consumers get them with their next update");
  const auto down = send(beat("c1", 1, 0, {use("svc", 0)}));
  ASSERT_EQ(down.updates.size(), 1u);
  EXPECT_EQ(down.updates[0].kind, proto::UpdateKind::kFull);
  EXPECT_EQ(down.updates[0].upserts.size(), 2u);
  EXPECT_EQ(down.updates[0].routes, dc1_rules());
  EXPECT_EQ(query("svc").routes, dc1_rules());
}

// A refusal quotes the rule; a rule of the longest length the protocol allows
// must still give a reply the operator's tool can decode.
TEST_F(AdminOpsTest, RefusalQuotingTheLongestInvalidRuleStillDecodes) {
  // A bad glob: the parser quotes the pattern, and the hub the rule around it.
  const std::string rule = "=> host = **" + std::string(proto::kMaxRouteRuleBytes - 12, 'a');
  ASSERT_EQ(rule.size(), proto::kMaxRouteRuleBytes);

  const auto reply = admin(set_routes_op("svc", {{rule, 0, false, true}}));

  EXPECT_FALSE(reply.ok);
  EXPECT_LE(reply.message.size(), proto::kMaxMessageBytes);
  const auto decoded = proto::decode_frame(proto::encode(reply));
  ASSERT_EQ(decoded.items.size(), 1u);
  const auto* message = std::get_if<proto::Message>(&decoded.items[0]);
  ASSERT_NE(message, nullptr) << std::get<proto::DecodeFailure>(decoded.items[0]).what;
  EXPECT_EQ(std::get<proto::AdminReply>(*message).message, reply.message);
}

TEST_F(AdminOpsTest, FullUpdatesAndQueryRepliesSayNoRulesWhenThereAreNone) {
  register_provider();

  const auto down = send(beat("c1", 1, 0, {use("svc", 0)}));

  ASSERT_EQ(down.updates.size(), 1u);
  ASSERT_TRUE(down.updates[0].routes.has_value());
  EXPECT_TRUE(down.updates[0].routes->empty());
  ASSERT_TRUE(query("svc").routes.has_value());
  EXPECT_TRUE(query("svc").routes->empty());
}

TEST_F(AdminOpsTest, ConsumerHoldingAnOlderVersionGetsTheRulesInItsDelta) {
  register_provider();
  const auto held = send(beat("c1", 1, 0, {use("svc", 0)})).updates.at(0).version;

  admin(set_routes_op("svc", dc1_rules()));
  const auto down = send(beat("c1", 2, 0, {use("svc", held)}));

  ASSERT_EQ(down.updates.size(), 1u);
  const auto& update = down.updates[0];
  EXPECT_EQ(update.kind, proto::UpdateKind::kDelta);
  EXPECT_EQ(update.from_version, held);
  EXPECT_NE(update.version, held) << "setting rules issues a version";
  EXPECT_TRUE(update.upserts.empty());
  EXPECT_TRUE(update.removed.empty());
  EXPECT_EQ(update.routes, dc1_rules());
}

TEST_F(AdminOpsTest, ConsumerAlreadyHoldingTheRulesGetsNothingAndLaterDeltasLeaveThemOut) {
  register_provider();
  admin(set_routes_op("svc", dc1_rules()));
  const auto current = send(beat("c1", 1, 0, {use("svc", 0)})).updates.at(0).version;

  EXPECT_TRUE(send(beat("c1", 2, 0, {use("svc", current)})).updates.empty());

  send(beat_with_set("p2", 1, {reg("svc", "i3", "10.0.0.3:80")}));
  const auto down = send(beat("c1", 3, 0, {use("svc", current)}));
  ASSERT_EQ(down.updates.size(), 1u);
  EXPECT_EQ(down.updates[0].kind, proto::UpdateKind::kDelta);
  EXPECT_FALSE(down.updates[0].routes.has_value()) << "unchanged since the version held";
}

TEST_F(AdminOpsTest, RoutesOfAServiceWithoutInstancesAreServedAndKeptWhenItRegisters) {
  const auto reply = admin(set_routes_op("later", dc1_rules()));

  EXPECT_TRUE(reply.ok);
  const auto first = send(beat("c1", 1, 0, {use("later", 0)}));
  ASSERT_EQ(first.updates.size(), 1u);
  EXPECT_TRUE(first.updates[0].upserts.empty());
  EXPECT_EQ(first.updates[0].routes, dc1_rules());
  send(beat_with_set("p1", 1, {reg("later", "l1", "10.0.0.5:80")}));
  const auto second = send(beat("c1", 2, 0, {use("later", first.updates[0].version)}));
  ASSERT_EQ(second.updates.size(), 1u);
  ASSERT_EQ(second.updates[0].upserts.size(), 1u);
  EXPECT_EQ(query("later").routes, dc1_rules());
}

TEST_F(AdminOpsTest, SetRoutesIsPushedToTheServicesConsumers) {
  register_provider();
  send(beat("c1", 1, 0, {use("svc", 0)}));

  admin(set_routes_op("svc", dc1_rules()));
  advance(Duration{10});  // past the push coalescing delay

  const auto pushed = hub.take_node_messages();
  ASSERT_EQ(pushed.size(), 1u);
  EXPECT_EQ(pushed[0].node_id, "c1");
  const auto& push = std::get<proto::DownBeat>(pushed[0].message);
  EXPECT_TRUE(push.push);
  ASSERT_EQ(push.updates.size(), 1u);
  EXPECT_EQ(push.updates[0].routes, dc1_rules());
}

TEST_F(AdminOpsTest, SettingTheSameRulesAgainChangesNothing) {
  register_provider();
  admin(set_routes_op("svc", dc1_rules()));
  hub.take_persist_batch();
  const auto version = hub.registry().find({"svc", "default"})->version;

  const auto reply = admin(set_routes_op("svc", dc1_rules()));

  EXPECT_TRUE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("nothing changed"));
  EXPECT_EQ(hub.registry().find({"svc", "default"})->version, version);
  const auto batch = hub.take_persist_batch();
  EXPECT_TRUE(batch.route_sets.empty());
  EXPECT_EQ(batch.audit.size(), 1u);
}

TEST_F(AdminOpsTest, ABadRuleIsRefusedNamingItAndItsColumnAndAudited) {
  register_provider();
  admin(set_routes_op("svc", dc1_rules()));
  hub.take_persist_batch();
  const auto version = hub.registry().find({"svc", "default"})->version;

  const auto reply =
      admin(set_routes_op("svc", {{"=> zone = dc2", 0, false, true}, {"hots = a => zone = b", 7}}));

  EXPECT_FALSE(reply.ok);
  EXPECT_THAT(reply.message, HasSubstr("route #2 (priority 7, 'hots = a => zone = b')"));
  EXPECT_THAT(reply.message, HasSubstr("column 1: unknown key 'hots'"));
  EXPECT_EQ(hub.registry().find({"svc", "default"})->routes, dc1_rules()) << "all or nothing";
  EXPECT_EQ(hub.registry().find({"svc", "default"})->version, version);
  const auto batch = hub.take_persist_batch();
  EXPECT_TRUE(batch.route_sets.empty());
  ASSERT_EQ(batch.audit.size(), 1u);
  EXPECT_EQ(batch.audit[0].op, "set_routes");
  EXPECT_EQ(batch.audit[0].actor, "carol@ops-3");
  EXPECT_EQ(batch.audit[0].service, (proto::ServiceKey{"svc", "default"}));
  EXPECT_EQ(batch.audit[0].detail, reply.message);
  EXPECT_FALSE(batch.audit[0].ok);
}

TEST_F(AdminOpsTest, RulesAgentsWouldRefuseAreRefused) {
  const std::vector<std::pair<proto::AdminRequest, std::string>> cases{
      {set_routes_op("svc", {{"zone = dc1 =>", 0, false, true}}), "force = true"},
      {set_routes_op("svc", {{"zone = dc1", 0, false, true}}), "missing '=>'"},
      {set_routes_op("svc", {{"=> zone = dc?", 0, false, true}}), "only '*' is"},
      {set_routes_op("svc*", {{"=> zone = dc1", 0, false, true}}), "cannot be served for svc*"},
      {set_routes_op("", {}), "service name is empty"},
      {set_routes_op("svc", std::vector<proto::RouteRuleText>(proto::kMaxRouteRules + 1,
                                                              {"=> zone = dc1", 0, false, true})),
       "at most 64 per service"},
  };
  for (const auto& [request, why] : cases) {
    const auto reply = admin(request);
    EXPECT_FALSE(reply.ok) << why;
    EXPECT_THAT(reply.message, HasSubstr(why));
  }
  EXPECT_EQ(hub.registry().find({"svc", "default"}), nullptr) << "no entry for refused rules";
  EXPECT_TRUE(admin(set_routes_op("svc", {{"zone = dc1 =>", 0, true, true}})).ok)
      << "a deny rule with force";
}

TEST_F(AdminOpsTest, RoutesArePersistedAndServedByTheRestartedHub) {
  register_provider();
  admin(set_routes_op("svc", dc1_rules()));
  admin(set_routes_op("bare", {{"=> tier = 0", 1, false, true}}));
  const auto batch = hub.take_persist_batch();
  EXPECT_THAT(batch.route_sets,
              ::testing::Contains(RouteSetRecord{{"svc", "default"}, dc1_rules()}));
  SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal)->apply(batch);

  auto after = restart();
  EXPECT_EQ(query(*after, "svc").routes, dc1_rules());
  const auto down = after->handle(clock.now(), beat("c1", 1, 0, {use("svc", 0), use("bare", 0)}));
  const auto& updates = std::get<proto::DownBeat>(down.reply).updates;
  ASSERT_EQ(updates.size(), 2u);
  for (const auto& update : updates) {
    const auto expected = update.service.name == "svc"
                              ? dc1_rules()
                              : std::vector<proto::RouteRuleText>{{"=> tier = 0", 1, false, true}};
    EXPECT_EQ(update.routes, expected) << update.service.name;
  }
  // A consumer that held the restored version before the restart gets nothing new.
  const auto restored = after->registry().find({"svc", "default"})->version;
  const auto again = after->handle(clock.now(), beat("c2", 1, 0, {use("svc", restored)}));
  EXPECT_TRUE(std::get<proto::DownBeat>(again.reply).updates.empty());
}

TEST_F(AdminOpsTest, ClearedRoutesStayClearedAcrossARestart) {
  register_provider();
  admin(set_routes_op("svc", dc1_rules()));
  commit(hub);

  const auto reply = admin(set_routes_op("svc", {}));
  EXPECT_TRUE(reply.ok);
  EXPECT_EQ(reply.message, "svc: routing rules removed; consumers get the change");
  const auto batch = hub.take_persist_batch();
  EXPECT_EQ(batch.route_sets, (std::vector<RouteSetRecord>{{{"svc", "default"}, {}}}));
  SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal)->apply(batch);

  auto after = restart();
  ASSERT_TRUE(query(*after, "svc").routes.has_value());
  EXPECT_TRUE(query(*after, "svc").routes->empty());
}

TEST_F(AdminOpsTest, RoutesOfABatchThatFailedToCommitAreInTheNextOne) {
  admin(set_routes_op("svc", dc1_rules()));
  const auto failed = hub.take_persist_batch();
  ASSERT_EQ(failed.route_sets.size(), 1u);

  hub.requeue(failed);

  EXPECT_EQ(hub.take_persist_batch().route_sets, failed.route_sets);
}

}  // namespace
}  // namespace cascade::hub
