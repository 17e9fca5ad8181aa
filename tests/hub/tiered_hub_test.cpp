// Tiers of hub cores on a fake clock: the aggregate beat upstream, cross-tier
// queries, the L1 cache and its TTL, negative answers, stale-if-upstream-down,
// deeper tiers and multi-homing.

#include <gtest/gtest.h>

#include <set>

#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/hub/tier_harness.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using proto::AnswerSource;

// dc1 and dc2, one L1 hub each, under one L2. L2's lease is 6 s.
class TwoDatacenters : public ::testing::Test {
 protected:
  void SetUp() override { add_two_datacenters(net); }

  bool l2_has(const std::string& service, const std::string& id) {
    const auto* svc = net.hub("l2").registry().find(key(service));
    return svc != nullptr && svc->instances.contains(id);
  }
  static proto::ServiceKey key(const std::string& s) { return test_support::key(s); }

  TierHarness net;
};

proto::Registration reg_in(const std::string& zone, const std::string& id,
                           const std::string& address) {
  auto r = test_support::reg("pay", id, address);
  r.instance.zone = zone;
  return r;
}

std::set<std::string> ids_of(const HeldList& list) {
  std::set<std::string> ids;
  for (const auto& [id, instance] : list.instances)
    ids.insert(id);
  return ids;
}

// A datacenter traffic switch: dc1 provides pay too, so l1-dc1 answers for it
// from dc1 alone, until an operator sets a rule for pay at l1-dc1; from then
// on dc1's consumers get dc2's instances as well (the rule picks among them),
// pushed between beats; without rules, dc1 alone again.
TEST_F(TwoDatacenters, ARoutingRuleAtAnL1ServesItsConsumersEveryDatacentersInstances) {
  net.agent("l1-dc1", "pay-dc1", {reg_in("dc1", "p1", "10.1.0.1:80")});
  net.agent("l1-dc2", "pay-dc2", {reg_in("dc2", "p2", "10.2.0.1:80")});
  net.consumer("l1-dc1", "app", {"pay"});
  net.advance(Duration{100});
  EXPECT_EQ(ids_of(net.list("app", "pay")), std::set<std::string>{"p1"}) << "dc1 alone";

  auto rules = proto::AdminRequest{};
  rules.op = proto::AdminOp::kSetRoutes;
  rules.actor = "ops@bastion";
  rules.service = key("pay");
  rules.routes = {{"=> zone = dc2", 0, false, true}};
  net.hub("l1-dc1").handle(net.clock.now(), rules);
  const auto pushes = net.pushes_to("app").size();
  net.advance(Duration{200});
  EXPECT_EQ(ids_of(net.list("app", "pay")), (std::set<std::string>{"p1", "p2"}));
  EXPECT_GT(net.pushes_to("app").size(), pushes) << "pushed, not left for the next beat";

  rules.routes.clear();
  net.hub("l1-dc1").handle(net.clock.now(), rules);
  net.advance(Duration{200});
  EXPECT_EQ(ids_of(net.list("app", "pay")), std::set<std::string>{"p1"});
}

// An L1 cut off from L2 cannot compose: a rule set there meanwhile still
// reaches its consumers, with dc1's own list.
TEST_F(TwoDatacenters, ARoutingRuleSetAtAnL1CutOffFromL2StillReachesItsConsumers) {
  net.agent("l1-dc1", "pay-dc1", {reg_in("dc1", "p1", "10.1.0.1:80")});
  net.consumer("l1-dc1", "app", {"pay"});
  net.advance(Duration{100});
  net.cut("l1-dc1", "l2");
  net.advance(Duration{10'000});

  auto rules = proto::AdminRequest{};
  rules.op = proto::AdminOp::kSetRoutes;
  rules.actor = "ops@bastion";
  rules.service = key("pay");
  rules.routes = {{"=> zone = dc1", 0, false, true}};
  net.hub("l1-dc1").handle(net.clock.now(), rules);
  const auto pushes = net.pushes_to("app").size();
  net.advance(Duration{200});
  ASSERT_GT(net.pushes_to("app").size(), pushes);
  const auto& update = net.pushes_to("app").back().updates.at(0);
  ASSERT_TRUE(update.routes.has_value());
  EXPECT_EQ(update.routes->at(0).text, "=> zone = dc1");
  EXPECT_EQ(ids_of(net.list("app", "pay")), std::set<std::string>{"p1"});
}

TEST_F(TwoDatacenters, RegistrationInDc2ReachesL2AsTheTiersAggregate) {
  net.agent("l1-dc2", "pay-1",
            {reg("pay", "pay-1", "10.2.0.1:80"), reg("audit", "a-1", "10.2.0.1:81")});
  net.advance(Duration{50});
  EXPECT_TRUE(l2_has("pay", "pay-1"));
  EXPECT_TRUE(l2_has("audit", "a-1"));
  EXPECT_EQ(net.hub("l2").node_count(), 2u) << "the two L1 hubs are L2's only children";
}

TEST_F(TwoDatacenters, CrossTierQueryIsForwardedThenServedFromTheL1Cache) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{50});

  const auto first = net.query_reply("l1-dc1", "pay");
  ASSERT_TRUE(first.found);
  EXPECT_EQ(first.source, AnswerSource::kUpstream);
  EXPECT_EQ(first.tier, 2u);
  ASSERT_EQ(first.instances.size(), 1u);
  EXPECT_EQ(first.instances[0].tier, 2u) << "tagged with the tier that holds it";
  const auto asked = net.received("l2", proto::MsgType::kQuery);

  const auto second = net.query_reply("l1-dc1", "pay");
  EXPECT_EQ(second.source, AnswerSource::kCache);
  EXPECT_EQ(second.instances, first.instances);
  EXPECT_EQ(net.received("l2", proto::MsgType::kQuery), asked) << "a warm lookup stays in dc1";
}

TEST_F(TwoDatacenters, SameTierQueryIsAnsweredLocallyWithoutAskingL2) {
  net.agent("l1-dc1", "web-1", {reg("web", "web-1", "10.1.0.1:80")});
  const auto reply = net.query_reply("l1-dc1", "web");
  EXPECT_TRUE(reply.found);
  EXPECT_EQ(reply.source, AnswerSource::kLocal);
  EXPECT_EQ(reply.tier, 1u);
  EXPECT_EQ(net.received("l2", proto::MsgType::kQuery), 0u);
}

TEST_F(TwoDatacenters, NotFoundIsCachedSoAStormOfLookupsStaysInTheTier) {
  for (int i = 0; i < 100; ++i) {
    const auto reply = net.query_reply("l1-dc1", "no-such-service");
    EXPECT_FALSE(reply.found);
  }
  EXPECT_EQ(net.received("l2", proto::MsgType::kQuery), 1u);
  net.advance(Duration{1100});  // past the negative TTL: the next lookup asks again
  net.query_reply("l1-dc1", "no-such-service");
  EXPECT_EQ(net.received("l2", proto::MsgType::kQuery), 2u);
}

TEST_F(TwoDatacenters, L1CacheLivesHalfOfL2sLeaseWithoutConfirmation) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{50});
  net.query_reply("l1-dc1", "pay");  // cached now
  net.cut("l1-dc1", "l2");
  net.advance(Duration{2900});
  EXPECT_EQ(net.query_reply("l1-dc1", "pay").source, AnswerSource::kCache)
      << "still fresh: 2.9 s < 3 s = L2 lease / 2";
  net.advance(Duration{200});
  const auto asked = net.received("l2", proto::MsgType::kQuery);
  auto reply = net.query_reply("l1-dc1", "pay");  // expired: L1 asks again (the link is cut)
  EXPECT_TRUE(reply.stale) << "no answer from L2: the expired entry is served, marked stale";
  EXPECT_GE(reply.age_ms, 3000u);
  EXPECT_EQ(net.received("l2", proto::MsgType::kQuery), asked)
      << "the question was lost on the cut link";
}

TEST_F(TwoDatacenters, UpstreamDownServesSameTierNormallyAndCrossTierStaleWithAge) {
  net.agent("l1-dc1", "web-1", {reg("web", "web-1", "10.1.0.1:80")});
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{50});
  net.query_reply("l1-dc1", "pay");
  net.cut("l1-dc1", "l2");
  net.advance(Duration{10'000});

  const auto local = net.query_reply("l1-dc1", "web");
  EXPECT_TRUE(local.found);
  EXPECT_FALSE(local.stale);
  const auto remote = net.query_reply("l1-dc1", "pay");
  ASSERT_TRUE(remote.found);
  EXPECT_TRUE(remote.stale);
  EXPECT_GE(remote.age_ms, 10'000u);
  EXPECT_EQ(remote.source, AnswerSource::kCache);

  // A service never cached cannot be answered: a clear error, not "not found".
  const auto unknown = net.query("l1-dc1", "never-seen");
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(unknown));
  EXPECT_EQ(std::get<proto::ErrorReply>(unknown).code, proto::ErrorCode::kUnavailable);
}

// Staleness reaches the consumer in every beat reply, with the list's age,
// and the first reply after the heal says the list is current again.
TEST_F(TwoDatacenters, ConsumerBelowACutOffL1IsToldItsCrossTierListIsStaleWithItsAge) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.consumer("l1-dc1", "web-1", {"pay"});
  net.advance(Duration{4'000});
  ASSERT_EQ(net.list("web-1", "pay").instances.size(), 1u);
  EXPECT_TRUE(net.stale_lists("web-1").empty()) << "fresh while L2 answers";

  net.cut("l1-dc1", "l2");
  net.advance(Duration{20'000});
  const auto& stale = net.stale_lists("web-1");
  ASSERT_EQ(stale.size(), 1u);
  EXPECT_EQ(stale[0].service, key("pay"));
  // As old as L2's last confirmation: the cut and up to one beat before it.
  EXPECT_GE(stale[0].age_ms, 17'000u);
  EXPECT_LE(stale[0].age_ms, 22'100u);
  EXPECT_EQ(net.list("web-1", "pay").instances.size(), 1u) << "still served";
  EXPECT_GT(net.hub("l1-dc1").counters().updates_stale, 0u);

  net.heal("l1-dc1", "l2");
  net.advance(Duration{5'000});
  EXPECT_TRUE(net.stale_lists("web-1").empty());
}

TEST_F(TwoDatacenters, SameTierListsAreNeverReportedStaleWhileTheUpstreamIsCut) {
  net.agent("l1-dc1", "web-1", {reg("web", "web-1", "10.1.0.1:80")});
  net.consumer("l1-dc1", "app-1", {"web"});
  net.cut("l1-dc1", "l2");
  net.advance(Duration{20'000});
  EXPECT_EQ(net.list("app-1", "web").instances.size(), 1u);
  EXPECT_TRUE(net.stale_lists("app-1").empty());
}

TEST_F(TwoDatacenters, L1CatchesUpWhenTheUpstreamReturns) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{50});
  net.query_reply("l1-dc1", "pay");
  net.cut("l1-dc1", "l2");
  net.agent("l1-dc2", "pay-2", {reg("pay", "pay-2", "10.2.0.2:80")});
  net.advance(Duration{10'000});
  net.heal("l1-dc1", "l2");
  net.advance(Duration{5'000});
  const auto reply = net.query_reply("l1-dc1", "pay");
  EXPECT_FALSE(reply.stale);
  EXPECT_EQ(reply.instances.size(), 2u);
}

TEST_F(TwoDatacenters, CrossTierEntryStaysWhileConsumersDeclareItAndExpiresWhenTheyStop) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{50});
  const auto held = net.query_reply("l1-dc1", "pay");
  auto declares_pay = [&] {
    const auto& beats = net.beats_to("l2");
    for (auto it = beats.rbegin(); it != beats.rend(); ++it)
      if (it->node_id == "l1-dc1") return !it->uses.empty() && it->uses[0].service.name == "pay";
    return false;
  };
  // A consumer keeps declaring pay in its beats for 40 s: the entry stays and
  // dc1-a keeps it fresh through its own beats to L2, with no query.
  for (int i = 1; i <= 20; ++i) {
    net.advance(Duration{2000});
    net.hub("l1-dc1").handle(net.clock.now(), beat("consumer", i, 0, {use("pay", held.version)}));
  }
  EXPECT_TRUE(declares_pay());
  const auto queries = net.received("l2", proto::MsgType::kQuery);
  EXPECT_EQ(net.query_reply("l1-dc1", "pay").source, AnswerSource::kCache);
  EXPECT_EQ(net.received("l2", proto::MsgType::kQuery), queries);

  // Nobody uses it any more: after the unused TTL (30 s) it is dropped.
  net.advance(Duration{32'000});
  EXPECT_FALSE(declares_pay());
  const auto status = std::get<proto::StatusReply>(
      net.hub("l1-dc1").handle(net.clock.now(), proto::StatusRequest{2}).reply);
  EXPECT_EQ(status.cross_tier_entries, 0u);
}

TEST_F(TwoDatacenters, SteadyStateUplinkBeatsCarryOnlyTheDigest) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{10'000});
  const auto& beats = net.beats_to("l2");
  ASSERT_GE(beats.size(), 8u);
  const auto& last = beats.back();
  EXPECT_FALSE(last.registrations.has_value());
  EXPECT_FALSE(last.delta.has_value());
  EXPECT_EQ(last.sender_tier, 1u);
  // One beat per interval per L1 hub, whatever the number of agents below
  // (plus the first ones that carried the set).
  const auto from_dc2 = std::count_if(beats.begin(), beats.end(),
                                      [](const proto::UpBeat& b) { return b.node_id == "l1-dc2"; });
  EXPECT_LE(from_dc2, 10'000 / 1800 + 3);
}

TEST_F(TwoDatacenters, DeregistrationTravelsUpAtOnceAsADelta) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.agent("l1-dc2", "pay-2", {reg("pay", "pay-2", "10.2.0.2:80")});
  net.advance(Duration{3000});
  const auto before = net.beats_to("l2").size();
  net.stop("pay-1");
  net.advance(Duration{50});  // the coalescing delay, far less than a beat interval
  EXPECT_FALSE(l2_has("pay", "pay-1"));
  EXPECT_TRUE(l2_has("pay", "pay-2"));
  const auto& beats = net.beats_to("l2");
  ASSERT_GT(beats.size(), before);
  const auto& carrying = beats.back();
  ASSERT_TRUE(carrying.delta.has_value());
  EXPECT_FALSE(carrying.registrations.has_value()) << "only the change travels";
  ASSERT_EQ(carrying.delta->removed.size(), 1u);
  EXPECT_EQ(carrying.delta->removed[0].id, "pay-1");
}

TEST_F(TwoDatacenters, ConsumersOfACrossTierServiceSeeARemovalWithinTwoBeats) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.agent("l1-dc2", "pay-2", {reg("pay", "pay-2", "10.2.0.2:80")});
  net.advance(Duration{50});
  const auto held = net.query_reply("l1-dc1", "pay");
  ASSERT_EQ(held.instances.size(), 2u);

  net.stop("pay-1");
  // The dc1 consumer beats every 2 s declaring what it holds; within two
  // intervals one of its beats brings the list without pay-1.
  std::uint64_t version = held.version;
  std::vector<proto::Instance> list = held.instances;
  for (int i = 1; i <= 2; ++i) {
    net.advance(Duration{2000});
    auto r =
        net.hub("l1-dc1").handle(net.clock.now(), beat("consumer", i, 0, {use("pay", version)}));
    for (const auto& u : std::get<proto::DownBeat>(r.reply).updates) {
      ASSERT_EQ(u.kind, proto::UpdateKind::kFull);
      version = u.version;
      list = u.upserts;
    }
  }
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(list[0].id, "pay-2");
}

TEST_F(TwoDatacenters, KilledProviderInDc2LeavesL2WithItsLeaseAndL1StaysWithinItsOwn) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{50});
  net.kill("pay-1");
  net.advance(Duration{6000 + 100});
  EXPECT_FALSE(l2_has("pay", "pay-1"));
  EXPECT_FALSE(net.query_reply("l1-dc1", "pay").found);
}

TEST_F(TwoDatacenters, L2DropsACutOffTierAfterItsLeaseButTheTierKeepsItsInstances) {
  net.agent("l1-dc2", "pay-1", {reg("pay", "pay-1", "10.2.0.1:80")});
  net.advance(Duration{50});
  net.cut("l1-dc2", "l2");
  net.advance(Duration{5000});
  EXPECT_TRUE(l2_has("pay", "pay-1")) << "kept for the lease";
  net.advance(Duration{1500});
  EXPECT_FALSE(l2_has("pay", "pay-1")) << "dropped after it";
  EXPECT_TRUE(net.query_reply("l1-dc2", "pay").found) << "never lost from its own tier";
  net.heal("l1-dc2", "l2");
  net.advance(Duration{3000});
  EXPECT_TRUE(l2_has("pay", "pay-1")) << "the whole set goes up again when the link heals";
}

TEST_F(TwoDatacenters, TooFewUpInstancesHereAreCompletedWithTheUpperTiers) {
  net.hub("l1-dc1");  // min_local_up is 1 by default: dc1 alone answers for "web"
  TierHarness strict;
  strict.add({.id = "l2", .tier = 2});
  strict.add({.id = "l1-dc1", .upstreams = {"l2"}, .min_local_up = 2});
  strict.add({.id = "l1-dc2", .upstreams = {"l2"}});
  strict.agent("l1-dc1", "web-1", {reg("web", "web-1", "10.1.0.1:80")});
  strict.agent("l1-dc2", "web-9", {reg("web", "web-9", "10.2.0.9:80")});
  strict.advance(Duration{100});
  const auto reply = strict.query_reply("l1-dc1", "web");
  ASSERT_EQ(reply.instances.size(), 2u);
  EXPECT_EQ(reply.instances[0].id, "web-1");
  EXPECT_EQ(reply.instances[0].tier, 0u) << "same tier first, untagged";
  EXPECT_EQ(reply.instances[1].id, "web-9");
  EXPECT_EQ(reply.instances[1].tier, 2u);
}

TEST(TierRestart, RestartedL2GetsEveryTierBackInChunksWithoutChurnBelow) {
  TierHarness net;
  net.add({.id = "l2", .tier = 2});
  net.add({.id = "l1", .upstreams = {"l2"}, .max_registrations_per_beat = 3});
  std::vector<proto::Registration> many;
  for (int i = 0; i < 10; ++i)
    many.push_back(reg("svc", "i" + std::to_string(i), "10.0.0." + std::to_string(i) + ":80"));
  net.agent("l1", "big", many);
  net.advance(Duration{100});
  ASSERT_EQ(net.hub("l2").registry().instance_count(), 10u);

  net.add({.id = "l2", .tier = 2, .epoch = 2});  // a new L2 process with an empty registry
  net.advance(Duration{2500});
  EXPECT_EQ(net.hub("l2").registry().instance_count(), 10u);
  std::size_t chunks = 0;
  for (const auto& b : net.beats_to("l2"))
    if (b.delta && b.delta->upserts.size() <= 3 && !b.delta->upserts.empty()) ++chunks;
  EXPECT_GE(chunks, 4u) << "10 registrations in chunks of at most 3";
  EXPECT_EQ(net.hub("l1").registry().instance_count(), 10u);
}

// L3 over two regions (an L2 and an L1 each); "pay" is provided in us.
void three_tiers_with_pay_in_us(TierHarness& net) {
  net.add({.id = "l3", .tier = 3, .lease = Duration{12'000}});
  net.add({.id = "l2-eu", .tier = 2, .upstreams = {"l3"}});
  net.add({.id = "l2-us", .tier = 2, .upstreams = {"l3"}});
  net.add({.id = "l1-eu", .upstreams = {"l2-eu"}});
  net.add({.id = "l1-us", .upstreams = {"l2-us"}});
  net.agent("l1-us", "pay-1", {reg("pay", "pay-1", "10.9.0.1:80")});
}

TEST(ThreeTiers, QueryClimbsUntilATierKnowsTheServiceAndEachTierCachesIt) {
  TierHarness net;
  three_tiers_with_pay_in_us(net);
  net.advance(Duration{100});

  const auto reply = net.query_reply("l1-eu", "pay");
  ASSERT_TRUE(reply.found);
  EXPECT_EQ(reply.tier, 3u) << "answered by the tier that holds the whole network";
  EXPECT_EQ(reply.instances.at(0).tier, 3u);
  EXPECT_EQ(net.received("l3", proto::MsgType::kQuery), 1u);
  EXPECT_EQ(net.query_reply("l1-eu", "pay").source, AnswerSource::kCache);

  // Another L1 under the same L2 is answered by L2's cache, not by L3.
  net.add({.id = "l1-eu-b", .upstreams = {"l2-eu"}});
  net.advance(Duration{100});
  const auto sibling = net.query_reply("l1-eu-b", "pay");
  EXPECT_TRUE(sibling.found);
  EXPECT_EQ(net.received("l3", proto::MsgType::kQuery), 1u);

  // TTLs shrink downwards: L2 holds L3's answers 6 s (12 s lease / 2), L1 holds L2's 3 s.
  net.cut("l1-eu", "l2-eu");
  net.cut("l2-eu", "l3");
  net.advance(Duration{3100});
  EXPECT_TRUE(net.query_reply("l1-eu", "pay").stale) << "L1's 3 s are over";
  EXPECT_FALSE(net.query_reply("l1-eu-b", "pay").stale) << "L2's 6 s are not";
}

// The hop that went stale is above the consumer's own hub: L1 still hears
// from L2, but L2 serves L3's list stale, and says so; L1 passes it on.
TEST(ThreeTiers, StalenessMadeTwoTiersUpReachesTheConsumerWithItsAge) {
  TierHarness net;
  three_tiers_with_pay_in_us(net);
  net.consumer("l1-eu", "shop-1", {"pay"});
  net.advance(Duration{6'000});
  ASSERT_EQ(net.list("shop-1", "pay").instances.size(), 1u);
  ASSERT_TRUE(net.stale_lists("shop-1").empty());

  net.cut("l2-eu", "l3");
  net.advance(Duration{30'000});
  const auto& stale = net.stale_lists("shop-1");
  ASSERT_EQ(stale.size(), 1u) << "L2-eu still answers L1-eu, but not with a current list";
  EXPECT_GE(stale[0].age_ms, 25'000u);
  EXPECT_TRUE(net.query_reply("l1-eu", "pay").stale);

  net.heal("l2-eu", "l3");
  net.advance(Duration{10'000});
  EXPECT_TRUE(net.stale_lists("shop-1").empty());
}

TEST(MultiHoming, L1BeatingToTwoL2sLeavesBothWithTheWholeTier) {
  TierHarness net;
  net.add({.id = "l2-a", .tier = 2});
  net.add({.id = "l2-b", .tier = 2});
  net.add({.id = "l1", .upstreams = {"l2-a", "l2-b"}, .mode = UplinkMode::kAll});
  net.agent("l1", "web-1", {reg("web", "web-1", "10.1.0.1:80")});
  net.advance(Duration{100});
  EXPECT_EQ(net.hub("l2-a").registry().instance_count(), 1u);
  EXPECT_EQ(net.hub("l2-b").registry().instance_count(), 1u);
  net.cut("l1", "l2-a");
  net.stop("web-1");
  net.advance(Duration{100});
  EXPECT_EQ(net.hub("l2-b").registry().instance_count(), 0u)
      << "one L2 down does not stop the other";
}

TEST(MultiHoming, TwoL1sReportingTheSameAgentsNeverFightOverThem) {
  TierHarness net;
  net.add({.id = "l2", .tier = 2});
  net.add({.id = "l1-a", .upstreams = {"l2"}});
  net.add({.id = "l1-b", .upstreams = {"l2"}});
  // A multi-homed agent beats to both L1 hubs of its datacenter.
  const std::vector<proto::Registration> set{reg("web", "web-1", "10.1.0.1:80")};
  net.agent("l1-a", "web-1@a", set);
  net.agent("l1-b", "web-1@b", set);
  net.advance(Duration{20'000});
  EXPECT_EQ(net.hub("l2").registry().instance_count(), 1u);
  EXPECT_LE(net.hub("l2").counters().full_sets_requested, 2u) << "no ping-pong of full sets";

  net.cut("l1-a", "l2");  // l1-a's lease at L2 runs out; l1-b still reports the instance
  net.advance(Duration{7000});
  EXPECT_EQ(net.hub("l2").registry().instance_count(), 1u);
}

}  // namespace
}  // namespace cascade::hub
