// Config groups across tiers of hub cores on a fake clock: a group set at L2
// reaches followers below every L1, an L1's own keys win in its datacenter
// only, changes above are pushed down between beats, an L1 cut off from L2
// serves the last upper copy, groups nobody follows stop being followed
// upstream, and a follower's first answer waits for the upper copy rather
// than saying "gone" (docs/design-config.md).

#include <gtest/gtest.h>

#include <set>

#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/hub/tier_harness.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using proto::UpdateKind;

// The uplink's change delay and the hubs' push coalescing (defaults).
constexpr Duration kChangeDelay{20};
constexpr Duration kPushDelay{5};
constexpr Duration kBeatInterval{2000};

// The value of `key` a follower holds ("" when it holds none).
std::string value_of(const TierHarness& net, const std::string& node, const std::string& group,
                     const std::string& key) {
  const auto* entry = net.config_value(node, group, key);
  return entry ? entry->value : "";
}

// dc1 and dc2, one L1 hub each, under one L2.
class TieredConfig : public ::testing::Test {
 protected:
  void SetUp() override { add_two_datacenters(net); }

  std::string value(const std::string& node, const std::string& key,
                    const std::string& group = "orders") {
    return value_of(net, node, group, key);
  }
  // The upper tier's copy of the group, as L1 serves it (no keys: none).
  std::size_t served_keys(const std::string& hub, const std::string& group) {
    const auto* served = net.hub(hub).config_centre().groups().served(group);
    return served ? served->entries.size() : 0;
  }
  // Whether the list `from` last sent to L2 declared the group (a steady beat
  // sends the digest of the list it sent before instead).
  bool declares_upstream(const std::string& from, const std::string& group) {
    const auto& beats = net.beats_to("l2");
    for (auto it = beats.rbegin(); it != beats.rend(); ++it) {
      if (it->node_id != from || (it->configs.empty() && it->configs_digest != 0)) continue;
      return std::any_of(it->configs.begin(), it->configs.end(),
                         [&](const proto::ConfigUse& u) { return u.group == group; });
    }
    return false;
  }
  // Whether any beat reply or push a follower got said the group is gone.
  bool ever_gone(const std::string& node, const std::string& group) {
    const auto gone = [&](const std::vector<proto::ConfigUpdate>& updates) {
      return std::any_of(updates.begin(), updates.end(), [&](const proto::ConfigUpdate& u) {
        return u.group == group && u.kind == UpdateKind::kGone;
      });
    };
    const auto& replies = net.config_replies(node);
    const auto& pushes = net.pushes_to(node);
    return std::any_of(replies.begin(), replies.end(), gone) ||
           std::any_of(pushes.begin(), pushes.end(),
                       [&](const proto::DownBeat& p) { return gone(p.config_updates); });
  }

  TierHarness net;
};

TEST_F(TieredConfig, AGroupSetAtL2ReachesFollowersBelowBothL1sWithL2AsItsOrigin) {
  net.set_config("l2", "orders", "timeout_ms", "300");
  net.follower("l1-dc1", "app-1", {"orders"});
  net.follower("l1-dc2", "app-2", {"orders"});
  net.advance(Duration{100});
  for (const auto* node : {"app-1", "app-2"}) {
    const auto* entry = net.config_value(node, "orders", "timeout_ms");
    ASSERT_NE(entry, nullptr) << node;
    EXPECT_EQ(entry->value, "300");
    EXPECT_EQ(entry->origin.tier, 2u);
    EXPECT_EQ(entry->origin.hub, "l2");
  }
  EXPECT_EQ(net.hub("l2").config_centre().followers("orders"), 2u) << "the two L1 hubs";
}

TEST_F(TieredConfig, AnOverrideAtOneL1WinsThereOnlyAndRemovingItServesL2sValueAgain) {
  net.set_config("l2", "orders", "timeout_ms", "300");
  net.follower("l1-dc1", "app-1", {"orders"});
  net.follower("l1-dc2", "app-2", {"orders"});
  net.advance(Duration{100});

  net.set_config("l1-dc1", "orders", "timeout_ms", "150");
  net.advance(Duration{100});
  const auto* there = net.config_value("app-1", "orders", "timeout_ms");
  ASSERT_NE(there, nullptr);
  EXPECT_EQ(there->value, "150");
  EXPECT_EQ(there->origin.tier, 1u);
  EXPECT_EQ(there->origin.hub, "l1-dc1");
  EXPECT_EQ(value("app-2", "timeout_ms"), "300") << "dc2 keeps L2's value";

  net.set_config("l1-dc1", "orders", "timeout_ms", std::nullopt);
  net.advance(Duration{100});
  const auto* again = net.config_value("app-1", "orders", "timeout_ms");
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->value, "300");
  EXPECT_EQ(again->origin.hub, "l2");
}

TEST_F(TieredConfig, AChangeAtL2IsPushedToFollowersBelowL1WellWithinABeatInterval) {
  net.set_config("l2", "orders", "timeout_ms", "300");
  net.follower("l1-dc1", "app-1", {"orders"});
  net.advance(Duration{500});
  const auto pushes_before = net.pushes_to("app-1").size();

  const auto changed_at = net.clock.now();
  net.set_config("l2", "orders", "timeout_ms", "250");
  net.advance(Duration{100});
  EXPECT_EQ(value("app-1", "timeout_ms"), "250");
  ASSERT_GT(net.pushes_to("app-1").size(), pushes_before) << "by push, not by a beat reply";
  const auto took = net.pushed_at("app-1").at(pushes_before) - changed_at;
  // Two pushes (L2 to L1, L1 to its follower), each after the coalescing
  // delay, each seen at the next 10 ms step of the harness's clock.
  EXPECT_LE(took, kChangeDelay + 2 * (kPushDelay + Duration{10}));
  EXPECT_LT(took, kBeatInterval / 10);
}

TEST_F(TieredConfig, L1ServesTheLastUpperCopyWhileL2IsDownAndCatchesUpAfterTheHeal) {
  net.set_config("l2", "orders", "timeout_ms", "300");
  net.follower("l1-dc1", "app-1", {"orders"});
  net.advance(Duration{100});

  net.cut("l1-dc1", "l2");
  net.set_config("l2", "orders", "timeout_ms", "250");  // made during the outage
  net.advance(Duration{20'000});
  EXPECT_EQ(value("app-1", "timeout_ms"), "300") << "the last upper copy, not dropped";
  EXPECT_EQ(served_keys("l1-dc1", "orders"), 1u);
  const auto* held = net.config("app-1", "orders");
  EXPECT_TRUE(held->source_stale) << "the reply names the group stale";
  EXPECT_GE(net.clock.now() - held->confirmed_at, Duration{15'000})
      << "as old as L1's copy from L2";
  EXPECT_GT(net.hub("l1-dc1").config_centre().counters().served_stale, 0u);
  // A new follower is answered at once from the copy held: L2 is known down.
  net.follower("l1-dc1", "app-3", {"orders"});
  EXPECT_EQ(value("app-3", "timeout_ms"), "300");

  net.heal("l1-dc1", "l2");
  net.advance(Duration{5'000});
  EXPECT_EQ(value("app-1", "timeout_ms"), "250");
  EXPECT_EQ(value("app-3", "timeout_ms"), "250");
  EXPECT_FALSE(net.config("app-1", "orders")->source_stale) << "current again";
}

TEST(ThreeTierConfigStale, AnL2CutOffFromL3PassesTheStaleMarkAndItsAgeDownToL1sFollowers) {
  TierHarness net;
  net.add({.id = "l3", .tier = 3, .lease = Duration{12'000}});
  net.add({.id = "l2", .tier = 2, .upstreams = {"l3"}});
  net.add({.id = "l1", .upstreams = {"l2"}});
  net.set_config("l3", "orders", "timeout_ms", "300");
  net.follower("l1", "app", {"orders"});
  net.advance(Duration{5'000});
  ASSERT_EQ(value_of(net, "app", "orders", "timeout_ms"), "300");
  ASSERT_FALSE(net.config("app", "orders")->source_stale);
  net.cut("l2", "l3");
  net.advance(Duration{30'000});
  const auto* held = net.config("app", "orders");
  EXPECT_TRUE(held->source_stale) << "L1 reaches L2, but L2's copy is stale";
  EXPECT_GE(net.clock.now() - held->confirmed_at, Duration{25'000});
  EXPECT_EQ(value_of(net, "app", "orders", "timeout_ms"), "300");
}

TEST_F(TieredConfig, AGroupNoFollowerDeclaresIsDroppedUpstreamAfterTheUnusedTtl) {
  net.set_config("l2", "orders", "timeout_ms", "300");
  net.follower("l1-dc1", "app-1", {"orders", "flags"});
  net.advance(Duration{3000});
  ASSERT_TRUE(declares_upstream("l1-dc1", "orders"));

  net.follow("app-1", {"flags"});  // stops following orders
  net.advance(Duration{20'000});
  EXPECT_TRUE(declares_upstream("l1-dc1", "orders")) << "kept for the unused TTL (30 s)";
  EXPECT_EQ(served_keys("l1-dc1", "orders"), 1u);
  net.advance(Duration{13'000});
  EXPECT_FALSE(declares_upstream("l1-dc1", "orders"));
  EXPECT_TRUE(declares_upstream("l1-dc1", "flags")) << "still followed below";
  EXPECT_EQ(served_keys("l1-dc1", "orders"), 0u) << "the upper copy is dropped";
  EXPECT_EQ(net.hub("l2").config_centre().followers("orders"), 0u);

  // A follower coming back has it followed upstream again.
  net.follow("app-1", {"orders", "flags"});
  net.advance(Duration{2100});
  EXPECT_TRUE(declares_upstream("l1-dc1", "orders"));
  EXPECT_EQ(value("app-1", "timeout_ms"), "300");
}

TEST_F(TieredConfig, AFirstBeatForAGroupHeldOnlyAtL2GetsNoGoneButTheGroupByPushSoonAfter) {
  net.set_config("l2", "orders", "timeout_ms", "300");
  const auto first_beat_at = net.clock.now();
  net.follower("l1-dc1", "app-1", {"orders"});
  ASSERT_EQ(net.config_replies("app-1").size(), 1u);
  EXPECT_TRUE(net.config_replies("app-1")[0].empty()) << "L1 waits for L2's copy";
  EXPECT_FALSE(net.config("app-1", "orders")->received);

  net.advance(Duration{100});
  EXPECT_EQ(value("app-1", "timeout_ms"), "300");
  ASSERT_FALSE(net.pushes_to("app-1").empty());
  EXPECT_LE(net.pushed_at("app-1").at(0) - first_beat_at,
            kChangeDelay + 2 * Duration{10} + kPushDelay)
      << "L1 beat L2 within its change delay, not at its next interval";
  EXPECT_FALSE(ever_gone("app-1", "orders"));
}

TEST_F(TieredConfig, OwnKeysOfAGroupAlsoSetAtL2AreFirstAnsweredTogetherWithL2s) {
  net.set_config("l2", "orders", "timeout_ms", "300");
  net.set_config("l1-dc1", "orders", "retries", "2");
  net.follower("l1-dc1", "app-1", {"orders"});
  EXPECT_TRUE(net.config_replies("app-1").at(0).empty()) << "not the group without L2's keys";
  net.advance(Duration{100});
  const auto* held = net.config("app-1", "orders");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->entries.size(), 2u);
  EXPECT_EQ(value("app-1", "retries"), "2");
  EXPECT_EQ(value("app-1", "timeout_ms"), "300");
  // The set at l1-dc1 was still to be pushed when app-1 came: that push
  // waited for L2's copy too, so no push carried the group without L2's keys.
  for (const auto& push : net.pushes_to("app-1"))
    for (const auto& update : push.config_updates)
      EXPECT_EQ(update.upserts.size(), 2u);
}

TEST_F(TieredConfig, AGroupNoTierHasIsAnsweredGoneOnceL2SaidSo) {
  net.follower("l1-dc1", "app-1", {"flags"});
  EXPECT_TRUE(net.config_replies("app-1").at(0).empty());
  net.advance(Duration{100});
  const auto* held = net.config("app-1", "flags");
  ASSERT_NE(held, nullptr);
  EXPECT_TRUE(held->received);
  EXPECT_TRUE(held->gone);
  EXPECT_EQ(held->version, kNeverServedVersion);

  net.set_config("l2", "flags", "degrade.pay", "on");
  net.advance(Duration{100});
  EXPECT_EQ(value("app-1", "degrade.pay", "flags"), "on");
}

TEST(TieredConfigCutOff, AnL1ThatNeverReachedL2AnswersFirstBeatsWithWhatItHolds) {
  TierHarness net;
  net.add({.id = "l2", .tier = 2});
  net.add({.id = "l1", .upstreams = {"l2"}});
  net.cut("l1", "l2");
  net.advance(Duration{1'100});  // past the uplink's query timeout: L2 is known down
  net.set_config("l1", "orders", "retries", "2");
  net.follower("l1", "app-1", {"orders", "flags"});
  const auto& first = net.config_replies("app-1").at(0);
  ASSERT_EQ(first.size(), 2u);  // declared in name order
  EXPECT_EQ(first[0].group, "flags");
  EXPECT_EQ(first[0].kind, UpdateKind::kGone);
  EXPECT_EQ(first[0].version, kNeverServedVersion);
  EXPECT_EQ(first[1].group, "orders");
  EXPECT_EQ(first[1].kind, UpdateKind::kFull);
}

TEST(TieredConfigCutOff, AFirstAnswerWaitsForTheUpperCopyAtMostTheQueryTimeout) {
  TierHarness net;
  net.add({.id = "l2", .tier = 2});
  net.add({.id = "l1", .upstreams = {"l2"}});
  net.advance(Duration{3'000});  // L2 answers L1's beats
  net.cut("l1", "l2");           // ... and from now on hears nothing
  net.set_config("l1", "orders", "retries", "2");
  net.follower("l1", "app-1", {"orders"});
  EXPECT_TRUE(net.config_replies("app-1").at(0).empty()) << "L2 seems reachable: wait";
  net.advance(Duration{2'100});  // the follower's next beat, past the query timeout
  EXPECT_EQ(value_of(net, "app-1", "orders", "retries"), "2");
}

// L3 sets defaults, L2 overrides one in its region, L1's followers see both
// layers with their origins.
TEST(ThreeTierConfig, EachTiersKeysReachL1WithTheirOriginAndTheLowerTierWins) {
  TierHarness net;
  net.add({.id = "l3", .tier = 3, .lease = Duration{12'000}});
  net.add({.id = "l2-eu", .tier = 2, .upstreams = {"l3"}});
  net.add({.id = "l1-eu", .upstreams = {"l2-eu"}});
  net.advance(Duration{100});
  net.set_config("l3", "orders", "timeout_ms", "300");
  net.set_config("l3", "orders", "retries", "3");
  net.set_config("l2-eu", "orders", "retries", "1");
  net.follower("l1-eu", "app-1", {"orders"});
  net.advance(Duration{200});
  const auto* timeout = net.config_value("app-1", "orders", "timeout_ms");
  const auto* retries = net.config_value("app-1", "orders", "retries");
  ASSERT_NE(timeout, nullptr);
  ASSERT_NE(retries, nullptr);
  EXPECT_EQ(timeout->value, "300");
  EXPECT_EQ(timeout->origin.tier, 3u);
  EXPECT_EQ(retries->value, "1");
  EXPECT_EQ(retries->origin.hub, "l2-eu");
  EXPECT_FALSE(std::any_of(net.config_replies("app-1").begin(), net.config_replies("app-1").end(),
                           [](const auto& updates) {
                             return std::any_of(updates.begin(), updates.end(),
                                                [](const proto::ConfigUpdate& u) {
                                                  return u.kind == UpdateKind::kGone;
                                                });
                           }));
}

// An L1 beating to both hubs of an L2 pair (each holds its own keys): what it
// serves of a group is every key either has, the first-listed hub's value
// where both set one, the same on every beat whichever reply came last.
class TieredConfigPair : public ::testing::Test {
 protected:
  void SetUp() override {
    net.add({.id = "l2-a", .tier = 2});
    net.add({.id = "l2-b", .tier = 2});
    net.add({.id = "l1", .upstreams = {"l2-a", "l2-b"}, .mode = UplinkMode::kAll});
    net.advance(Duration{100});
    net.follower("l1", "app", {"orders"});
    net.advance(Duration{100});
  }
  // The value `app` holds after each of `beats` beat intervals (one value
  // when it never changed).
  std::set<std::string> values_over(int beats, const std::string& key) {
    std::set<std::string> seen;
    for (int i = 0; i < beats; ++i) {
      net.advance(kBeatInterval);
      seen.insert(value_of(net, "app", "orders", key));
    }
    return seen;
  }
  TierHarness net;
};

TEST_F(TieredConfigPair, AKeySetAtEitherHubOfThePairReachesFollowersBelow) {
  net.set_config("l2-b", "orders", "timeout_ms", "300");
  net.set_config("l2-a", "orders", "retries", "3");
  net.advance(Duration{100});
  EXPECT_EQ(value_of(net, "app", "orders", "timeout_ms"), "300");
  EXPECT_EQ(value_of(net, "app", "orders", "retries"), "3");
  EXPECT_EQ(values_over(5, "timeout_ms"), std::set<std::string>{"300"});
}

TEST_F(TieredConfigPair, AKeyBothHubsSetIsServedWithTheFirstListedHubsValueOnEveryBeat) {
  net.set_config("l2-a", "orders", "timeout_ms", "300");
  net.set_config("l2-b", "orders", "timeout_ms", "900");
  net.advance(Duration{100});
  EXPECT_EQ(values_over(5, "timeout_ms"), std::set<std::string>{"300"});
  const auto* entry = net.config_value("app", "orders", "timeout_ms");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->origin.hub, "l2-a");
}

}  // namespace
}  // namespace cascade::hub
