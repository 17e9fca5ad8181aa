// The config centre inside a hub, on a fake clock: what a follower's beat
// reply carries, who follows what, and the pushes a change makes between
// beats (coalesced, capped, only to followers, deltas from what they hold).

#include "cascade/hub/config_centre.hpp"

#include <gtest/gtest.h>

#include "cascade/tests/common/allocation_counter.hpp"

namespace cascade::hub {
namespace {

using proto::UpdateKind;

constexpr WallMs kWall = 1'700'000'000'000;
const MonoTime kStart = mono_from_ms(1'000'000);

class ConfigCentreTest : public ::testing::Test {
 protected:
  explicit ConfigCentreTest(PushConfig push = {})
      : wait_(push.delay + push.repeat_gap), budget(push), centre({"hub-dc1", 1}, 3, push) {}

  // A beat from `node` declaring `uses`; the updates its reply carries.
  std::vector<proto::ConfigUpdate> beat(const std::string& node,
                                        std::vector<proto::ConfigUse> uses) {
    std::vector<proto::ConfigUpdate> out;
    centre.on_beat(node, uses, out);
    return out;
  }
  void set(const std::string& group, const std::string& key, const std::string& value) {
    const auto outcome = centre.edit(now, group, {{key, value}}, "ops", kWall);
    ASSERT_TRUE(std::holds_alternative<std::vector<ConfigHistoryRecord>>(outcome));
  }
  std::uint64_t version(const std::string& group) const {
    const auto* served = centre.groups().served(group);
    return served ? served->version : 0;
  }
  // Moves past the coalescing delay (and the repeat gap of a group flushed
  // just before); the pushes then due.
  std::map<std::string, std::vector<proto::ConfigUpdate>> pushes_after_delay() {
    now += wait_;
    return centre.take_pushes(now, budget);
  }

  Duration wait_;
  MonoTime now = kStart;
  PushBudget budget;  // the hub's, shared with the service lists' pushes
  ConfigCentre centre;
};

TEST_F(ConfigCentreTest, AFollowersFirstBeatGetsTheGroupWholeAndLaterBeatsNothingWhileCurrent) {
  set("orders", "timeout_ms", "300");
  const auto first = beat("n1", {{"orders", 0}});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].kind, UpdateKind::kFull);
  EXPECT_EQ(first[0].upserts[0].value, "300");
  EXPECT_TRUE(beat("n1", {{"orders", version("orders")}}).empty());
  EXPECT_EQ(centre.followers("orders"), 1u);
  EXPECT_EQ(centre.subscriptions(), 1u);
  EXPECT_EQ(centre.counters().updates_full, 1u);
}

TEST_F(ConfigCentreTest, AGroupNobodySetIsAnsweredGoneOnceAndStillFollowed) {
  const auto first = beat("n1", {{"flags", 7}});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].kind, UpdateKind::kGone);
  EXPECT_TRUE(beat("n1", {{"flags", first[0].version}}).empty());
  EXPECT_EQ(centre.followers("flags"), 1u);
  // Once set, the follower hears of it between beats.
  set("flags", "degrade.orders", "on");
  const auto pushes = pushes_after_delay();
  ASSERT_EQ(pushes.count("n1"), 1u);
  EXPECT_EQ(pushes.at("n1")[0].kind, UpdateKind::kFull);
}

TEST_F(ConfigCentreTest, AChangeIsPushedToEveryFollowerAfterTheDelayAsADeltaFromWhatItHolds) {
  set("orders", "a", "1");
  set("orders", "b", "1");
  beat("n1", {{"orders", 0}});
  beat("n2", {{"orders", 0}, {"other", 0}});
  beat("n3", {{"other", 0}});
  const auto held = version("orders");

  set("orders", "a", "2");
  set("orders", "c", "3");  // coalesced with the change before
  EXPECT_TRUE(centre.take_pushes(now, budget).empty()) << "not before the coalescing delay";
  const auto pushes = pushes_after_delay();
  ASSERT_EQ(pushes.size(), 2u);  // n1 and n2, not n3
  for (const auto* node : {"n1", "n2"}) {
    const auto& updates = pushes.at(node);
    ASSERT_EQ(updates.size(), 1u) << node;
    EXPECT_EQ(updates[0].kind, UpdateKind::kDelta);
    EXPECT_EQ(updates[0].from_version, held);
    EXPECT_EQ(updates[0].upserts.size(), 2u);  // a and c
  }
  // The followers now hold the new version: their next beats carry nothing.
  EXPECT_TRUE(beat("n1", {{"orders", version("orders")}}).empty());
  EXPECT_TRUE(pushes_after_delay().empty());
}

TEST_F(ConfigCentreTest, ANodeThatStopsDeclaringAGroupOrIsGoneIsNoLongerPushedTo) {
  set("orders", "a", "1");
  beat("n1", {{"orders", 0}});
  beat("n2", {{"orders", 0}});
  beat("n1", {});  // n1 no longer follows orders
  centre.forget("n2");
  EXPECT_EQ(centre.followers("orders"), 0u);
  EXPECT_EQ(centre.subscriptions(), 0u);
  set("orders", "a", "2");
  EXPECT_TRUE(pushes_after_delay().empty());
}

TEST_F(ConfigCentreTest, ABeatFollowingTheGroupsItFollowedBeforeAllocatesNothing) {
  set("orders", "a", "1");
  set("flags", "b", "2");
  const std::vector<proto::ConfigUse> uses{{"flags", version("flags")},
                                           {"orders", version("orders")}};
  beat("n1", uses);
  std::vector<proto::ConfigUpdate> out;
  out.reserve(4);

  const auto allocations =
      test_support::allocations_during([&] { centre.on_beat("n1", uses, out); });

  EXPECT_EQ(allocations, 0u);
  EXPECT_TRUE(out.empty());
  EXPECT_EQ(centre.subscriptions(), 2u);
  // The held versions still move with what a beat's reply carries.
  set("orders", "a", "2");
  EXPECT_EQ(beat("n1", uses).size(), 1u);
  EXPECT_TRUE(pushes_after_delay().empty()) << "n1 holds the change from its reply";
}

class ConfigCentreCappedTest : public ConfigCentreTest {
 protected:
  ConfigCentreCappedTest() : ConfigCentreTest(PushConfig{Duration{5}, 2, false, 100}) {}
};

TEST_F(ConfigCentreCappedTest, FollowersOverThePushCapLearnAtTheirNextBeat) {
  set("orders", "a", "1");
  for (const auto* node : {"n1", "n2", "n3", "n4"})
    beat(node, {{"orders", version("orders")}});
  const auto held = version("orders");
  set("orders", "a", "2");
  const auto pushes = pushes_after_delay();
  EXPECT_EQ(pushes.size(), 2u);  // the first two in node-id order
  EXPECT_TRUE(pushes.count("n1") && pushes.count("n2"));
  EXPECT_EQ(centre.push_counters().over_rate, 2u);
  const auto late = beat("n4", {{"orders", held}});
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0].kind, UpdateKind::kDelta);
}

TEST_F(ConfigCentreTest, ARefusedEditChangesNothingPushesNothingAndLeavesNoRecord) {
  set("orders", "a", "1");
  beat("n1", {{"orders", 0}});
  EXPECT_EQ(centre.take_records().size(), 1u);
  EXPECT_TRUE(centre.take_records().empty()) << "records are handed out once";
  pushes_after_delay();

  const auto refused = centre.edit(now, "orders", {{"a", std::string(70'000, 'x')}}, "ops", kWall);
  EXPECT_TRUE(std::holds_alternative<std::string>(refused));
  EXPECT_EQ(centre.counters().edits_refused, 1u);
  EXPECT_TRUE(centre.take_records().empty());
  EXPECT_TRUE(pushes_after_delay().empty());
}

TEST_F(ConfigCentreTest, AnUpperChangeToAKeyOverriddenHereReachesNobody) {
  set("orders", "timeout_ms", "200");
  beat("n1", {{"orders", 0}});
  const auto held = version("orders");
  const proto::ConfigOrigin l2{2, "hub-l2", 9};
  centre.set_upper(now, "orders", ConfigEntries{{"timeout_ms", {"timeout_ms", "900", l2}}});
  EXPECT_EQ(version("orders"), held);
  EXPECT_TRUE(pushes_after_delay().empty());
  // A key nobody overrides here reaches the followers.
  centre.set_upper(
      now, "orders",
      ConfigEntries{{"timeout_ms", {"timeout_ms", "900", l2}}, {"retries", {"retries", "3", l2}}});
  const auto pushes = pushes_after_delay();
  ASSERT_EQ(pushes.count("n1"), 1u);
  EXPECT_EQ(pushes.at("n1")[0].upserts.at(0).key, "retries");
}

TEST_F(ConfigCentreTest, AFirstBeatForAGroupNoTierHasIsAnsweredGoneOnce) {
  const auto first = beat("n1", {{"flags", 0}});
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].kind, UpdateKind::kGone);
  EXPECT_EQ(first[0].version, kNeverServedVersion);
  EXPECT_TRUE(beat("n1", {{"flags", kNeverServedVersion}}).empty()) << "answered already";
  EXPECT_EQ(beat("n1", {{"flags", 0}}).size(), 1u)
      << "a follower that lost the answer (a late reply) declares 0 and is answered again";
  EXPECT_EQ(beat("n2", {{"flags", 0}}).size(), 1u) << "another follower's first answer";
  EXPECT_EQ(centre.counters().updates_gone, 3u);
}

TEST_F(ConfigCentreTest, AGroupAwaitingItsUpperCopyIsLeftOutAndPushedOnceTheCopyCame) {
  const ConfigCentre::AwaitsUpper awaits = [](std::string_view group) {
    return group == "orders" || group == "flags";
  };
  std::vector<proto::ConfigUpdate> out;
  centre.on_beat("n1", {{"orders", 0}, {"flags", 0}}, out, awaits);
  EXPECT_TRUE(out.empty()) << "no gone while the upper tier may have them";
  EXPECT_EQ(centre.followers("orders"), 1u);

  const proto::ConfigOrigin l2{2, "hub-l2", 9};
  centre.set_upper(now, "orders", ConfigEntries{{"timeout_ms", {"timeout_ms", "900", l2}}});
  centre.set_upper(now, "flags", std::nullopt);  // the upper tier has no such group
  const auto pushes = pushes_after_delay();
  ASSERT_EQ(pushes.count("n1"), 1u);
  const auto& updates = pushes.at("n1");
  ASSERT_EQ(updates.size(), 2u);  // in group order
  EXPECT_EQ(updates[0].group, "flags");
  EXPECT_EQ(updates[0].kind, UpdateKind::kGone);
  EXPECT_EQ(updates[1].group, "orders");
  EXPECT_EQ(updates[1].kind, UpdateKind::kFull);
  EXPECT_EQ(updates[1].upserts.at(0).origin, l2);
  EXPECT_TRUE(beat("n1", {{"orders", version("orders")}, {"flags", updates[0].version}}).empty());
  EXPECT_TRUE(pushes_after_delay().empty());
}

TEST_F(ConfigCentreTest, RollbackIsPushedAndRecordedLikeAnEdit) {
  set("orders", "a", "1");
  const auto good = version("orders");
  set("orders", "a", "2");
  beat("n1", {{"orders", version("orders")}});
  centre.take_records();
  const auto outcome = centre.rollback(now, "orders", good, "alice", kWall);
  ASSERT_TRUE(std::holds_alternative<std::vector<ConfigHistoryRecord>>(outcome));
  EXPECT_EQ(centre.take_records().size(), 1u);
  const auto pushes = pushes_after_delay();
  ASSERT_EQ(pushes.count("n1"), 1u);
  EXPECT_EQ(pushes.at("n1")[0].upserts.at(0).value, "1");
}

}  // namespace
}  // namespace cascade::hub
