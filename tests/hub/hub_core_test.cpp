#include "cascade/hub/hub_core.hpp"

#include <gtest/gtest.h>

#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

constexpr Duration kLease{6000};

class HubCoreTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubCore hub{HubCoreConfig{"hub-a", 1, kLease}, /*epoch=*/7, clock.now()};

  void TearDown() override { expect_totals_kept(hub, "the test"); }

  proto::DownBeat send(const proto::UpBeat& b) {
    auto r = hub.handle(clock.now(), b);
    expect_totals_kept(hub);
    auto* down = std::get_if<proto::DownBeat>(&r.reply);
    EXPECT_NE(down, nullptr) << "reply is not a DownBeat";
    return down ? *down : proto::DownBeat{};
  }
  proto::QueryReply query(const std::string& service) {
    proto::Query q;
    q.request_id = 42;
    q.service.name = service;
    return std::get<proto::QueryReply>(hub.handle(clock.now(), q).reply);
  }
  void advance(Duration d) {
    clock.advance(d);
    hub.tick(clock.now());
    expect_totals_kept(hub);
  }
};

TEST_F(HubCoreTest, RegistrationOnBeatIsResolvable) {
  auto down = send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  EXPECT_FALSE(down.send_full);
  EXPECT_EQ(down.ack_seq, 1u);
  EXPECT_EQ(down.hub_epoch, 7u);
  auto q = query("svc");
  ASSERT_TRUE(q.found);
  ASSERT_EQ(q.instances.size(), 1u);
  EXPECT_EQ(q.instances[0].address, "10.0.0.1:80");
}

TEST_F(HubCoreTest, AnswerSaysItComesFromThisHubsOwnTier) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  auto q = query("svc");
  EXPECT_EQ(q.tier, 1u);
  EXPECT_EQ(q.source, proto::AnswerSource::kLocal);
  EXPECT_EQ(q.age_ms, 0u);
}

TEST_F(HubCoreTest, UnknownDigestAsksForTheFullSet) {
  auto down = send(beat("n1", 1, digest({reg("svc", "i1", "a:1")})));
  EXPECT_TRUE(down.send_full);
}

TEST_F(HubCoreTest, DigestMismatchAsksForTheFullSetAgain) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}));
  auto down = send(beat("n1", 2, digest({reg("svc", "i1", "a:2")})));
  EXPECT_TRUE(down.send_full);
  EXPECT_EQ(hub.counters().full_sets_requested, 1u);
}

// A delta naming an instance twice (no sender's journal makes one) is
// refused whole: applied, a large one left the node's list of its instances
// with a repeated entry that a later removal turned into a dangling one.
TEST_F(HubCoreTest, ADeltaNamingAnInstanceTwiceIsRefusedAndChangesNothing) {
  std::vector<proto::Registration> set{reg("svc", "a", "a:1"), reg("svc", "b", "b:1")};
  send(beat_with_set("lower", 1, set));
  proto::UpBeat twice = beat("lower", 2, 0);
  twice.delta.emplace();
  for (int i = 0; i < 70; ++i)  // past the in-place limit: the merge path
    twice.delta->upserts.push_back(reg("svc", "n" + std::to_string(i), "n:1"));
  twice.delta->upserts.push_back(reg("svc", "n7", "n:2"));
  auto refused = hub.handle(clock.now(), twice);
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(refused.reply));
  EXPECT_EQ(std::get<proto::ErrorReply>(refused.reply).code, proto::ErrorCode::kInvalid);

  proto::UpBeat upsert_and_remove = beat("lower", 3, 0);
  upsert_and_remove.delta.emplace();
  upsert_and_remove.delta->upserts.push_back(reg("svc", "a", "a:2"));
  upsert_and_remove.delta->removed.push_back({test_support::key("svc"), "a"});
  refused = hub.handle(clock.now(), upsert_and_remove);
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(refused.reply));

  EXPECT_EQ(hub.counters().invalid_messages, 2u);
  EXPECT_EQ(hub.registry().instance_count(), 2u) << "nothing of either delta applied";
  EXPECT_EQ(query("svc").instances.at(0).address, "a:1");
  expect_totals_kept(hub);
  // The sender's next full set replaces the set as usual.
  set.push_back(reg("svc", "c", "c:1"));
  send(beat_with_set("lower", 4, set));
  EXPECT_EQ(hub.registry().instance_count(), 3u);
  send(beat_with_set("lower", 5, {}));
  EXPECT_EQ(hub.registry().instance_count(), 0u);
}

TEST_F(HubCoreTest, MatchingDigestNeedsNothing) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  send(beat_with_set("n1", 1, set));
  EXPECT_FALSE(send(beat("n1", 2, digest(set))).send_full);
}

TEST_F(HubCoreTest, StateChangingReplyIsDurableSteadyStateIsNot) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  EXPECT_TRUE(hub.handle(clock.now(), beat_with_set("n1", 1, set)).durable);
  EXPECT_FALSE(hub.handle(clock.now(), beat("n1", 2, digest(set))).durable);
}

TEST_F(HubCoreTest, RepeatedSetIsStillAcknowledgedDurably) {
  // The first copy may have been applied in memory but not yet committed.
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  hub.handle(clock.now(), beat_with_set("n1", 1, set));
  EXPECT_TRUE(hub.handle(clock.now(), beat_with_set("n1", 2, set)).durable);
}

TEST_F(HubCoreTest, LeaseExpiresExactlyAtTheDeadline) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}));
  advance(kLease - Duration{1});
  EXPECT_TRUE(query("svc").found);
  advance(Duration{1});
  EXPECT_FALSE(query("svc").found);
  EXPECT_EQ(hub.counters().nodes_expired, 1u);
  EXPECT_EQ(hub.node_count(), 0u);
}

// A lower tier's chunked set is staged beside the node, by its address: a
// node that expires between two chunks must take its staged set with it
// (TearDown's recount says so), and a node of the same id that comes back
// starts with none.
TEST_F(HubCoreTest, ANodeThatExpiresBetweenTwoChunksOfItsSetLeavesNothingStaged) {
  proto::UpBeat first = beat("lower", 1, 0);
  first.delta.emplace();
  first.delta->reset = true;
  first.delta->more = true;
  first.delta->upserts.push_back(reg("svc", "a", "a:1"));
  send(first);
  EXPECT_FALSE(query("svc").found) << "a staged chunk is not applied";
  advance(kLease);
  ASSERT_EQ(hub.node_count(), 0u);

  proto::UpBeat last = beat("lower", 2, 0);  // the chunk after the one staged before
  last.delta.emplace();
  last.delta->upserts.push_back(reg("svc", "b", "b:1"));
  send(last);
  EXPECT_FALSE(query("svc").found) << "a chunk of a set staged by a node the hub dropped";
}

TEST_F(HubCoreTest, BeatsRenewTheLease) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  send(beat_with_set("n1", 1, set));
  for (std::uint64_t seq = 2; seq < 10; ++seq) {
    advance(Duration{2000});
    send(beat("n1", seq, digest(set)));
  }
  EXPECT_TRUE(query("svc").found);
  EXPECT_EQ(hub.next_deadline(), clock.now() + kLease);
}

TEST_F(HubCoreTest, ConsumerGetsFullListThenEmptyUpdatesThenDelta) {
  send(beat_with_set("p1", 1, {reg("svc", "i1", "a:1")}));
  auto first = send(beat("c1", 1, 0, {use("svc", 0)}));
  ASSERT_EQ(first.updates.size(), 1u);
  EXPECT_EQ(first.updates[0].kind, proto::UpdateKind::kFull);
  const auto v1 = first.updates[0].version;

  EXPECT_TRUE(send(beat("c1", 2, 0, {use("svc", v1)})).updates.empty());

  send(beat_with_set("p2", 1, {reg("svc", "i2", "b:1")}));
  auto delta = send(beat("c1", 3, 0, {use("svc", v1)}));
  ASSERT_EQ(delta.updates.size(), 1u);
  EXPECT_EQ(delta.updates[0].kind, proto::UpdateKind::kDelta);
  EXPECT_EQ(delta.updates[0].from_version, v1);
  ASSERT_EQ(delta.updates[0].upserts.size(), 1u);
  EXPECT_EQ(delta.updates[0].upserts[0].id, "i2");
}

TEST_F(HubCoreTest, ExpiredProviderReachesConsumerAsRemoval) {
  send(beat_with_set("p1", 1, {reg("svc", "i1", "a:1")}));
  send(beat_with_set("p2", 1, {reg("svc", "i2", "b:1")}));
  auto first = send(beat("c1", 1, 0, {use("svc", 0)}));
  const auto v = first.updates.at(0).version;
  const std::vector<proto::Registration> p2{reg("svc", "i2", "b:1")};
  advance(Duration{4000});
  send(beat("p2", 2, digest(p2)));
  send(beat("c1", 2, 0, {use("svc", v)}));
  advance(Duration{2000});  // p1's lease ends
  auto after = send(beat("c1", 3, 0, {use("svc", v)}));
  ASSERT_EQ(after.updates.size(), 1u);
  EXPECT_EQ(after.updates[0].removed, std::vector<std::string>{"i1"});
}

TEST_F(HubCoreTest, DeregisterRemovesEverythingAtOnceAndIsDurable) {
  send(beat_with_set("n1", 1, {reg("a", "i1", "a:1"), reg("b", "i2", "b:1")}));
  auto r = hub.handle(clock.now(), proto::Deregister{"n1", 1, 2});
  EXPECT_TRUE(r.durable);
  EXPECT_EQ(std::get<proto::DeregisterAck>(r.reply).removed, 2u);
  EXPECT_FALSE(query("a").found);
  EXPECT_FALSE(query("b").found);
  // No lease is left to expire: the only timer is the emptied services' reclaim.
  EXPECT_EQ(hub.next_deadline(), clock.now() + HubCoreConfig{}.empty_service_ttl);
}

TEST_F(HubCoreTest, BeatOvertakenByItsDeregisterDoesNotBringTheNodeBack) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  send(beat_with_set("n1", 1, set));
  hub.handle(clock.now(), proto::Deregister{"n1", 1, 3});
  auto late = hub.handle(clock.now(), beat_with_set("n1", 2, set));  // sent before seq 3
  EXPECT_TRUE(std::holds_alternative<proto::ErrorReply>(late.reply));
  EXPECT_FALSE(query("svc").found);
  // A new incarnation is welcome at once.
  send(beat_with_set("n1", 1, set, /*epoch=*/2));
  EXPECT_TRUE(query("svc").found);
}

TEST_F(HubCoreTest, DeregisteredIncarnationIsForgottenAfterALease) {
  hub.handle(clock.now(), proto::Deregister{"n1", 1, 3});
  advance(kLease);
  send(beat_with_set("n1", 4, {reg("svc", "i1", "a:1")}));
  EXPECT_TRUE(query("svc").found);
}

TEST_F(HubCoreTest, InstanceReportedByTwoNodesSurvivesWhicheverDropsItFirst) {
  const std::vector<proto::Registration> set{reg("svc", "shared", "a:1")};
  send(beat_with_set("x", 1, set));
  send(beat_with_set("y", 1, set));  // the same instance, the same content: y claims it too
  EXPECT_FALSE(send(beat("x", 2, digest(set))).send_full) << "nothing to re-assert";
  send(beat_with_set("x", 3, {}));  // the owner drops it: y's claim keeps it
  EXPECT_TRUE(query("svc").found);
  send(beat_with_set("y", 2, {}));
  EXPECT_FALSE(query("svc").found);
}

TEST_F(HubCoreTest, InstanceTakenOverIsReclaimedWithItsOwnContentWhenTheNewOwnerDropsIt) {
  const std::vector<proto::Registration> old_set{reg("svc", "shared", "old:1")};
  send(beat_with_set("x", 1, old_set));
  send(beat_with_set("y", 1, {reg("svc", "shared", "new:1")}));  // different content wins
  EXPECT_EQ(query("svc").instances.at(0).address, "new:1");
  send(beat_with_set("y", 2, {}));  // y drops it: x still claims it
  EXPECT_TRUE(query("svc").found);
  EXPECT_TRUE(send(beat("x", 2, digest(old_set))).send_full) << "x must say what it reports";
  send(beat_with_set("x", 3, old_set));
  EXPECT_EQ(query("svc").instances.at(0).address, "old:1");
}

TEST_F(HubCoreTest, OlderEpochIsRejectedAsStale) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}, /*epoch=*/5));
  auto r = hub.handle(clock.now(), beat_with_set("n1", 9, {}, /*epoch=*/4));
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(r.reply));
  EXPECT_EQ(std::get<proto::ErrorReply>(r.reply).code, proto::ErrorCode::kStaleEpoch);
  EXPECT_TRUE(query("svc").found);
}

TEST_F(HubCoreTest, DelayedOlderBeatNeverOverwritesANewerSet) {
  send(beat_with_set("n1", 2, {reg("svc", "i1", "new:1")}));
  send(beat_with_set("n1", 1, {reg("svc", "i1", "old:1")}));
  EXPECT_EQ(query("svc").instances.at(0).address, "new:1");
  EXPECT_EQ(hub.counters().beats_stale_seq, 1u);
}

TEST_F(HubCoreTest, RestartedAgentWithSameSetKeepsItsInstances) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  send(beat_with_set("n1", 10, set, /*epoch=*/1));
  auto down = send(beat("n1", 1, digest(set), {}, /*epoch=*/2));
  EXPECT_FALSE(down.send_full);
  EXPECT_TRUE(query("svc").found);
}

TEST_F(HubCoreTest, PersistBatchCoalescesAndReflectsCurrentValues) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}));
  send(beat_with_set("n1", 2, {reg("svc", "i1", "a:2")}));
  auto batch = hub.take_persist_batch();
  ASSERT_EQ(batch.instance_upserts.size(), 1u);
  EXPECT_EQ(batch.instance_upserts[0].address, "a:2");
  ASSERT_EQ(batch.node_upserts.size(), 1u);
  ASSERT_EQ(batch.service_versions.size(), 1u);
  EXPECT_TRUE(hub.take_persist_batch().empty());
}

TEST_F(HubCoreTest, ABatchHandedBackLendsItsBuffersButNoneOfItsRows) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "a:1"), reg("svc", "i2", "a:2")}));
  auto first = hub.take_persist_batch();
  ASSERT_EQ(first.instance_upserts.size(), 2u);
  const auto room = first.instance_upserts.capacity_bytes();
  hub.reuse(std::move(first));
  send(beat_with_set("n2", 1, {reg("svc", "i3", "a:3")}));
  auto second = hub.take_persist_batch();
  ASSERT_EQ(second.instance_upserts.size(), 1u);
  EXPECT_EQ(second.instance_upserts[0].id, "i3");
  EXPECT_EQ(second.instance_upserts[0].address, "a:3");
  EXPECT_GE(second.instance_upserts.capacity_bytes(), room) << "the first batch's room, reused";
}

TEST_F(HubCoreTest, SteadyBeatsWriteNothing) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  send(beat_with_set("n1", 1, set));
  hub.take_persist_batch();
  for (std::uint64_t s = 2; s < 50; ++s)
    send(beat("n1", s, digest(set)));
  EXPECT_TRUE(hub.take_persist_batch().empty());
}

TEST_F(HubCoreTest, UnusedSubscriptionIsForgotten) {
  send(beat_with_set("p1", 1, {reg("svc", "i1", "a:1")}));
  send(beat("c1", 1, 0, {use("svc", 0)}));
  EXPECT_EQ(hub.subscription_count(), 1u);
  send(beat("c1", 2, 0, {}));
  EXPECT_EQ(hub.subscription_count(), 0u);
}

TEST_F(HubCoreTest, UsedServiceThatVanishedIsReportedGone) {
  auto down = send(beat("c1", 1, 0, {use("ghost", 99)}));
  ASSERT_EQ(down.updates.size(), 1u);
  EXPECT_EQ(down.updates[0].kind, proto::UpdateKind::kGone);
}

// ---------------------------------------------------------------- restart

class HubRestartTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubSnapshot snapshot_after(const std::function<void(HubCore&)>& work) {
    HubCore before{HubCoreConfig{"hub-a", 1, kLease}, 1, clock.now()};
    work(before);
    auto batch = before.take_persist_batch();
    HubSnapshot snap;
    snap.nodes = batch.node_upserts;
    snap.instances = batch.instance_upserts;
    snap.services = batch.service_versions;
    return snap;
  }
};

TEST_F(HubRestartTest, RestoredHubAnswersAtOnceAndGrantsOneLeaseOfGrace) {
  auto snap = snapshot_after([&](HubCore& h) {
    h.handle(clock.now(), beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}));
  });
  clock.advance(Duration{60'000});  // the hub was down a long time
  HubCore after{HubCoreConfig{"hub-a", 1, kLease}, 2, clock.now()};
  after.restore(snap, clock.now());
  proto::Query q;
  q.service.name = "svc";
  EXPECT_TRUE(std::get<proto::QueryReply>(after.handle(clock.now(), q).reply).found);

  clock.advance(kLease - Duration{1});
  after.tick(clock.now());
  EXPECT_TRUE(std::get<proto::QueryReply>(after.handle(clock.now(), q).reply).found);
  clock.advance(Duration{1});
  after.tick(clock.now());  // the agent never came back: no zombie
  EXPECT_FALSE(std::get<proto::QueryReply>(after.handle(clock.now(), q).reply).found);
}

TEST_F(HubRestartTest, LiveAgentKeepsItsInstancesWithoutResending) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "a:1")};
  auto snap =
      snapshot_after([&](HubCore& h) { h.handle(clock.now(), beat_with_set("n1", 1, set)); });
  HubCore after{HubCoreConfig{"hub-a", 1, kLease}, 2, clock.now()};
  after.restore(snap, clock.now());
  auto r = after.handle(clock.now(), beat("n1", 2, digest(set)));
  EXPECT_FALSE(std::get<proto::DownBeat>(r.reply).send_full);
  EXPECT_EQ(std::get<proto::DownBeat>(r.reply).hub_epoch, 2u);
}

// Rows (the store's keys) survive a restart: a restored instance keeps its
// own, a new one takes the next after every stored row, and a stored row
// whose agent is gone (an orphan) is deleted by the first batch.
TEST_F(HubRestartTest, RowsContinueAfterEveryStoredOneAndOrphanRowsAreDeleted) {
  auto snap = snapshot_after([&](HubCore& h) {
    h.handle(clock.now(), beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}));
    h.handle(clock.now(), beat_with_set("n2", 1, {reg("svc", "i2", "a:2")}));
  });
  ASSERT_EQ(snap.instances.size(), 2u);
  const auto orphan = snap.instances[0].id == "i2" ? snap.instances[0] : snap.instances[1];
  const auto kept = snap.instances[0].id == "i1" ? snap.instances[0] : snap.instances[1];
  std::erase_if(snap.nodes, [](const NodeRecord& n) { return n.node_id == "n2"; });
  HubCore after{HubCoreConfig{"hub-a", 1, kLease}, 2, clock.now()};
  after.restore(snap, clock.now());
  after.handle(clock.now(), beat_with_set("n3", 1, {reg("svc", "i3", "a:3")}));
  const auto batch = after.take_persist_batch();
  EXPECT_EQ(batch.instance_deletes, (std::vector<std::uint32_t>{orphan.row}));
  ASSERT_EQ(batch.instance_upserts.size(), 1u);
  EXPECT_EQ(batch.instance_upserts[0].id, "i3");
  EXPECT_EQ(batch.instance_upserts[0].row, std::max(orphan.row, kept.row) + 1);
  EXPECT_EQ(after.registry().find({"svc", "default"})->instances.find("i1")->row(), kept.row);
}

TEST_F(HubRestartTest, ConsumerHoldingAnUnpersistedVersionGetsTheFullList) {
  std::uint64_t persisted_version = 0;
  auto snap = snapshot_after([&](HubCore& h) {
    h.handle(clock.now(), beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}));
    persisted_version = h.registry().find({"svc", "default"})->version;
  });
  HubCore after{HubCoreConfig{"hub-a", 1, kLease}, 2, clock.now()};
  after.restore(snap, clock.now());
  // A version the old incarnation issued after its last flush.
  auto r = after.handle(clock.now(), beat("c1", 1, 0, {use("svc", persisted_version + 1)}));
  const auto& down = std::get<proto::DownBeat>(r.reply);
  ASSERT_EQ(down.updates.size(), 1u);
  EXPECT_EQ(down.updates[0].kind, proto::UpdateKind::kFull);
  // The persisted version itself is still current: nothing to send.
  auto r2 = after.handle(clock.now(), beat("c2", 1, 0, {use("svc", persisted_version)}));
  EXPECT_TRUE(std::get<proto::DownBeat>(r2.reply).updates.empty());
}

}  // namespace
}  // namespace cascade::hub
