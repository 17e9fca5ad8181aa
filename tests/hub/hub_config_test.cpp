// The config centre through HubCore, as agents meet it: a beat that follows
// a group gets it in the reply, a change reaches followers as a push between
// beats, an expired node stops being pushed to, and status counts it all.

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using test_support::reg;

constexpr Duration kLease{6000};
constexpr WallMs kWall = 1'700'000'000'000;

proto::AdminRequest operator_request(proto::AdminOp op) {
  proto::AdminRequest r;
  r.request_id = 9;
  r.op = op;
  r.actor = "alice@ops-1";
  r.service = proto::ServiceKey{"", ""};
  return r;
}

class HubConfigTest : public ::testing::Test {
 protected:
  explicit HubConfigTest(HubCoreConfig config = {"hub-a", 1, kLease})
      : hub(std::move(config), /*epoch=*/7, clock.now()) {}

  FakeClock clock;
  HubCore hub;

  proto::AdminReply admin(const proto::AdminRequest& request) {
    auto r = hub.handle(clock.now(), request);
    auto* reply = std::get_if<proto::AdminReply>(&r.reply);
    EXPECT_NE(reply, nullptr) << "not an AdminReply";
    return reply ? *reply : proto::AdminReply{};
  }

  proto::DownBeat follow(const std::string& node, std::uint64_t seq,
                         std::vector<proto::ConfigUse> configs) {
    auto b = beat(node, seq, 0);
    b.configs = std::move(configs);
    return reply_to(b);
  }
  // A steady beat: the digest of the list in place of the list.
  proto::DownBeat follow_by_digest(const std::string& node, std::uint64_t seq,
                                   const std::vector<proto::ConfigUse>& configs) {
    auto b = beat(node, seq, 0);
    b.configs_digest = proto::config_uses_digest(configs);
    return reply_to(b);
  }
  proto::DownBeat reply_to(const proto::UpBeat& b) {
    auto r = hub.handle(clock.now(), b);
    auto* down = std::get_if<proto::DownBeat>(&r.reply);
    EXPECT_NE(down, nullptr);
    return down ? *down : proto::DownBeat{};
  }
  void set(const std::string& group, const std::string& key, const std::string& value) {
    const auto outcome = hub.edit_config(clock.now(), group, {{key, value}}, "ops", kWall);
    ASSERT_TRUE(std::holds_alternative<std::vector<ConfigHistoryRecord>>(outcome));
  }
  // The pushes that leave within a short while.
  std::vector<NodeMessage> pushes_soon() {
    clock.advance(Duration{50});
    hub.tick(clock.now());
    return hub.take_node_messages();
  }
  std::uint64_t counter(const std::string& name) {
    for (const auto& [key, value] : hub.status(clock.now()).counters)
      if (key == name) return value;
    ADD_FAILURE() << "no status counter " << name;
    return 0;
  }
};

TEST_F(HubConfigTest, ABeatFollowingAGroupGetsItInTheReplyWithItsOrigin) {
  set("orders", "timeout_ms", "300");
  const auto down = follow("n1", 1, {{"orders", 0}});
  ASSERT_EQ(down.config_updates.size(), 1u);
  const auto& update = down.config_updates[0];
  EXPECT_EQ(update.kind, proto::UpdateKind::kFull);
  ASSERT_EQ(update.upserts.size(), 1u);
  EXPECT_EQ(update.upserts[0].origin.hub, "hub-a");
  EXPECT_EQ(update.upserts[0].origin.tier, 1u);
  EXPECT_TRUE(follow("n1", 2, {{"orders", update.version}}).config_updates.empty());
  EXPECT_EQ(counter("config_subscriptions"), 1u);
  EXPECT_EQ(counter("config_groups"), 1u);
}

// The top tier (no uplink) has nothing to wait for: every first answer is at once.
TEST_F(HubConfigTest, AFirstBeatForAGroupNobodySetIsAnsweredGoneAtOnce) {
  const auto down = follow("n1", 1, {{"flags", 0}});
  ASSERT_EQ(down.config_updates.size(), 1u);
  EXPECT_EQ(down.config_updates[0].kind, proto::UpdateKind::kGone);
  EXPECT_EQ(down.config_updates[0].version, kNeverServedVersion);
  EXPECT_TRUE(follow("n1", 2, {{"flags", kNeverServedVersion}}).config_updates.empty());
}

TEST_F(HubConfigTest, AChangeIsPushedToFollowersBetweenBeatsOnAPushOfItsOwn) {
  set("orders", "timeout_ms", "300");
  const auto held = follow("n1", 1, {{"orders", 0}}).config_updates.at(0).version;
  follow("n2", 1, {});
  set("orders", "timeout_ms", "250");
  const auto out = pushes_soon();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].node_id, "n1");
  const auto& push = std::get<proto::DownBeat>(out[0].message);
  EXPECT_TRUE(push.push);
  EXPECT_TRUE(push.updates.empty());
  ASSERT_EQ(push.config_updates.size(), 1u);
  EXPECT_EQ(push.config_updates[0].kind, proto::UpdateKind::kDelta);
  EXPECT_EQ(push.config_updates[0].from_version, held);
  EXPECT_EQ(push.config_updates[0].upserts.at(0).value, "250");
  EXPECT_EQ(counter("config_pushes"), 1u);
  EXPECT_EQ(counter("config_updates_delta"), 1u);
}

TEST_F(HubConfigTest, ANodeWhoseLeaseRanOutIsNoLongerPushedTo) {
  set("orders", "k", "1");
  follow("n1", 1, {{"orders", 0}});
  clock.advance(kLease + Duration{1});
  hub.tick(clock.now());
  hub.take_node_messages();
  EXPECT_EQ(counter("config_subscriptions"), 0u);
  set("orders", "k", "2");
  EXPECT_TRUE(pushes_soon().empty());
}

TEST_F(HubConfigTest, ABeatThatStopsFollowingEndsTheSubscription) {
  set("orders", "k", "1");
  follow("n1", 1, {{"orders", 0}});
  follow("n1", 2, {});
  EXPECT_EQ(counter("config_subscriptions"), 0u);
  set("orders", "k", "2");
  EXPECT_TRUE(pushes_soon().empty());
}

TEST_F(HubConfigTest, ADigestThatMatchesStandsForTheListAndGetsTheSameUpdates) {
  set("orders", "timeout_ms", "300");
  const auto held = follow("n1", 1, {{"orders", 0}}).config_updates.at(0).version;
  EXPECT_TRUE(follow_by_digest("n1", 2, {{"orders", held}}).config_updates.empty());
  set("orders", "timeout_ms", "250");
  const auto down = follow_by_digest("n1", 3, {{"orders", held}});
  EXPECT_FALSE(down.send_configs);
  ASSERT_EQ(down.config_updates.size(), 1u);
  EXPECT_EQ(down.config_updates[0].from_version, held);
  EXPECT_EQ(down.config_updates[0].upserts.at(0).value, "250");
  EXPECT_EQ(counter("config_lists_requested"), 0u);
  EXPECT_EQ(counter("config_subscriptions"), 1u);
}

// The reply to n1's first beat was lost: n1 still holds nothing, the hub
// believes it holds the version it sent.
TEST_F(HubConfigTest, ADigestOfOtherVersionsThanTheHubSentAsksForTheListAndKeepsFollowing) {
  set("orders", "timeout_ms", "300");
  follow("n1", 1, {{"orders", 0}});
  const auto down = follow_by_digest("n1", 2, {{"orders", 0}});
  EXPECT_TRUE(down.send_configs);
  EXPECT_TRUE(down.config_updates.empty());
  EXPECT_EQ(counter("config_lists_requested"), 1u);
  set("orders", "timeout_ms", "250");
  EXPECT_EQ(pushes_soon().size(), 1u) << "n1 still follows orders";
  const auto listed = follow("n1", 3, {{"orders", 0}});
  ASSERT_EQ(listed.config_updates.size(), 1u);
  EXPECT_EQ(listed.config_updates[0].kind, proto::UpdateKind::kFull);
}

TEST_F(HubConfigTest, ADigestFromANodeThisHubNeverHeardTheListOfAsksForIt) {
  EXPECT_TRUE(follow_by_digest("n1", 1, {{"orders", 7}}).send_configs);
}

// Beats can overtake each other (a retry, a proxy): the older list is not
// the node's any more.
TEST_F(HubConfigTest, ABeatThatArrivesAfterANewerOneDoesNotReapplyItsOlderList) {
  set("orders", "k", "1");
  follow("n1", 2, {{"orders", 0}});
  const auto late = follow("n1", 1, {});
  EXPECT_TRUE(late.config_updates.empty());
  EXPECT_EQ(counter("config_subscriptions"), 1u);
}

TEST_F(HubConfigTest, StatusListsEveryConfigCentreCounterUnderItsConfigName) {
  set("orders", "k", "1");
  hub.edit_config(clock.now(), "orders", {{"bad\nkey", "1"}}, "ops", kWall);
  follow("n1", 1, {{"orders", 0}});
  const auto listed = hub.config_centre().counters().list();
  ASSERT_EQ(listed.size(), 7u);
  for (const auto& [name, value] : listed) {
    EXPECT_EQ(name.rfind("config_", 0), 0u) << name;
    EXPECT_EQ(counter(name), value) << name;
  }
  EXPECT_EQ(counter("config_edits"), 1u);
  EXPECT_EQ(counter("config_edits_refused"), 1u);
  EXPECT_EQ(counter("config_updates_full"), 1u);
}

// The notify switch is the hub's: config changes are held back like isolations.
TEST_F(HubConfigTest,
       WithTheNotifySwitchAtTenPercentAConfigChangeIsPushedToTenOfAHundredFollowers) {
  set("orders", "timeout_ms", "300");
  std::map<std::string, std::uint64_t> held;
  for (int i = 0; i < 100; ++i) {
    const auto node = fmt::format("n{:03}", i);
    held[node] = follow(node, 1, {{"orders", 0}}).config_updates.at(0).version;
  }
  auto on = operator_request(proto::AdminOp::kNotifySwitch);
  on.enabled = true;
  on.share_percent = 10;
  ASSERT_TRUE(admin(on).ok);

  set("orders", "timeout_ms", "250");
  const auto out = pushes_soon();
  EXPECT_EQ(out.size(), 10u);
  EXPECT_EQ(counter("config_pushes"), 10u);
  EXPECT_EQ(counter("config_pushes_held_by_switch"), 90u);

  // The others learn at their next beat.
  std::set<std::string> pushed;
  for (const auto& message : out)
    pushed.insert(message.node_id);
  for (const auto& [node, version] : held) {
    if (pushed.contains(node)) continue;
    const auto down = follow(node, 2, {{"orders", version}});
    ASSERT_EQ(down.config_updates.size(), 1u) << node;
    EXPECT_EQ(down.config_updates[0].upserts.at(0).value, "250") << node;
  }
}

HubCoreConfig capped(std::uint32_t max_per_second) {
  HubCoreConfig config{"hub-a", 1, kLease};
  config.push.max_per_second = max_per_second;
  return config;
}

class HubConfigCappedTest : public HubConfigTest {
 protected:
  HubConfigCappedTest() : HubConfigTest(capped(10)) {}

  // Twenty nodes that use service svc (one provider) and follow group orders.
  void SetUp() override {
    hub.handle(clock.now(), testing::beat_with_set("p1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
    set("orders", "k", "0");
    for (int i = 0; i < 20; ++i) {
      auto b = beat(fmt::format("c{:02}", i), 1, 0, {use("svc", 0)});
      b.configs = {{"orders", 0}};
      hub.handle(clock.now(), b);
    }
  }
  // A change of each kind: svc's routing rules and a key of orders.
  void change_both(int n) {
    auto routes = operator_request(proto::AdminOp::kSetRoutes);
    routes.service = proto::ServiceKey{"svc", "default"};
    routes.routes = {{fmt::format("=> zone = dc{}", n), 0, false, true}};
    ASSERT_TRUE(admin(routes).ok);
    set("orders", "k", std::to_string(n));
  }
  // The pushes that leave within `d`.
  std::size_t pushes_within(Duration d) {
    clock.advance(d);
    hub.tick(clock.now());
    return hub.take_node_messages().size();
  }
};

// One budget for both kinds: a token bucket of max_per_second, full on a quiet
// hub, so a burst takes it all at once and then it refills at that rate.
TEST_F(HubConfigCappedTest, ServiceAndConfigPushesTogetherStayWithinMaxPerSecond) {
  change_both(1);
  EXPECT_EQ(pushes_within(Duration{50}), 10u) << "40 consumers and followers to push, 10 a second";
  EXPECT_EQ(counter("pushes") + counter("config_pushes"), 10u);

  int n = 2;
  for (int second = 1; second <= 3; ++second) {
    std::size_t pushed = 0;
    for (int step = 0; step < 10; ++step) {
      change_both(n++);
      pushed += pushes_within(Duration{100});
    }
    EXPECT_LE(pushed, 10u) << "second " << second;
    EXPECT_GE(pushed, 9u) << "second " << second << ": the budget is used";
  }
  EXPECT_GT(counter("pushes_over_rate") + counter("config_pushes_over_rate"), 0u);
}

}  // namespace
}  // namespace cascade::hub
