// The config centre through HubCore, as agents meet it: a beat that follows
// a group gets it in the reply, a change reaches followers as a push between
// beats, an expired node stops being pushed to, and status counts it all.

#include <gtest/gtest.h>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

constexpr Duration kLease{6000};
constexpr WallMs kWall = 1'700'000'000'000;

class HubConfigTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubCore hub{HubCoreConfig{"hub-a", 1, kLease}, /*epoch=*/7, clock.now()};

  proto::DownBeat follow(const std::string& node, std::uint64_t seq,
                         std::vector<proto::ConfigUse> configs) {
    auto b = beat(node, seq, 0);
    b.configs = std::move(configs);
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

TEST_F(HubConfigTest, StatusListsEveryConfigCentreCounterUnderItsConfigName) {
  set("orders", "k", "1");
  hub.edit_config(clock.now(), "orders", {{"bad\nkey", "1"}}, "ops", kWall);
  follow("n1", 1, {{"orders", 0}});
  const auto listed = hub.config_centre().counters().list();
  ASSERT_EQ(listed.size(), 5u);
  for (const auto& [name, value] : listed) {
    EXPECT_EQ(name.rfind("config_", 0), 0u) << name;
    EXPECT_EQ(counter(name), value) << name;
  }
  EXPECT_EQ(counter("config_edits"), 1u);
  EXPECT_EQ(counter("config_edits_refused"), 1u);
  EXPECT_EQ(counter("config_updates_full"), 1u);
}

}  // namespace
}  // namespace cascade::hub
