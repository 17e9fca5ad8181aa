// The uplink on its own: questions, timeouts and failover between upstreams,
// with the upstream played by the test.

#include "cascade/hub/uplink.hpp"

#include <gtest/gtest.h>

#include "cascade/tests/common/builders.hpp"

namespace cascade::hub {
namespace {

using test_support::key;

class UplinkTest : public ::testing::Test {
 protected:
  UplinkConfig config(UplinkMode mode) {
    UplinkConfig c;
    c.endpoints = {"tcp://a:1", "tcp://b:1"};
    c.mode = mode;
    return c;
  }
  std::vector<proto::Query> queries(std::vector<UplinkOutgoing> out) {
    std::vector<proto::Query> q;
    for (auto& o : out)
      if (auto* m = std::get_if<proto::Query>(&o.message)) q.push_back(*m);
    return q;
  }
  FakeClock clock;
};

TEST_F(UplinkTest, LookupsThatMissWhileAskedShareOneQuestion) {
  Uplink up(config(UplinkMode::kFailover), "l1", 1, 1, 7, clock.now());
  EXPECT_FALSE(up.lookup(clock.now(), key("pay"), 1).has_value());
  EXPECT_FALSE(up.lookup(clock.now(), key("pay"), 2).has_value());
  const auto asked = queries(up.take_outgoing());
  ASSERT_EQ(asked.size(), 1u);

  proto::QueryReply reply;
  reply.request_id = asked[0].request_id;
  reply.hub_id = "l2";
  reply.service = key("pay");
  reply.found = true;
  reply.version = 5;
  reply.instances = {test_support::inst("p1", "10.0.0.1:80")};
  up.on_message(clock.now(), 0, reply);
  const auto answered = up.take_answered();
  ASSERT_EQ(answered.size(), 2u);
  for (const auto& a : answered) {
    EXPECT_EQ(a.answer.outcome, Outcome::kFound);
    EXPECT_TRUE(a.answer.asked_now);
    ASSERT_TRUE(a.answer.view.has_value());
    EXPECT_EQ(a.answer.view->instances.at(0).tier, 2u);
  }
}

// Services the upper tier lacks that consumers here wait for are declared
// upstream, but never more than max_waits of them: each rides in every beat.
TEST_F(UplinkTest, WaitsForMissingServicesArePinnedUpToTheCap) {
  auto c = config(UplinkMode::kFailover);
  c.max_waits = 2;
  Uplink up(c, "l1", 1, 1, 7, clock.now());
  for (const char* name : {"a", "b", "c"}) {
    up.use(clock.now(), key(name));
    const auto asked = queries(up.take_outgoing());
    ASSERT_EQ(asked.size(), 1u);
    proto::QueryReply none;
    none.request_id = asked[0].request_id;
    none.hub_id = "l2";
    none.service = key(name);
    up.on_message(clock.now(), 0, none);
    EXPECT_TRUE(up.use(clock.now(), key(name)).missing);  // a consumer's next beat
  }
  EXPECT_EQ(up.waits(), 2u);
  clock.advance(c.unused_ttl + Duration{1000});
  up.on_timer(clock.now());
  EXPECT_EQ(up.waits(), 0u) << "nobody declared them for the unused TTL";
}

TEST_F(UplinkTest, UnansweredQuestionEndsUnavailableAfterTheQueryTimeout) {
  Uplink up(config(UplinkMode::kFailover), "l1", 1, 1, 7, clock.now());
  up.lookup(clock.now(), key("pay"), 1);
  up.take_outgoing();
  clock.advance(Duration{999});
  up.on_timer(clock.now());
  EXPECT_TRUE(up.take_answered().empty());
  clock.advance(Duration{1});
  up.on_timer(clock.now());
  const auto answered = up.take_answered();
  ASSERT_EQ(answered.size(), 1u);
  EXPECT_EQ(answered[0].answer.outcome, Outcome::kUnavailable);
}

TEST_F(UplinkTest, FailoverModeBeatsToOneUpstreamAndMovesOnAfterMisses) {
  Uplink up(config(UplinkMode::kFailover), "l1", 1, 1, 7, clock.now());
  std::set<std::size_t> targets;
  for (int i = 0; i < 40; ++i) {
    clock.advance(Duration{500});
    up.on_timer(clock.now());
    for (const auto& o : up.take_outgoing())
      if (std::holds_alternative<proto::UpBeat>(o.message)) targets.insert(o.upstream);
    if (i == 3) {
      EXPECT_EQ(targets, std::set<std::size_t>{0}) << "one upstream at a time";
    }
  }
  EXPECT_EQ(targets, (std::set<std::size_t>{0, 1})) << "nobody answered: it moved on";
  const auto status = up.status(clock.now());
  ASSERT_EQ(status.size(), 2u);
  EXPECT_FALSE(status[0].reachable);
  EXPECT_EQ(status[0].last_reply_ms, -1);
}

TEST_F(UplinkTest, AllModeBeatsToEveryUpstream) {
  Uplink up(config(UplinkMode::kAll), "l1", 1, 1, 7, clock.now());
  up.upsert(clock.now(), test_support::reg("web", "w1", "10.0.0.1:80"));
  clock.advance(Duration{100});
  up.on_timer(clock.now());
  std::set<std::size_t> targets;
  for (const auto& o : up.take_outgoing()) {
    const auto* beat = std::get_if<proto::UpBeat>(&o.message);
    ASSERT_NE(beat, nullptr);
    EXPECT_EQ(beat->sender_tier, 1u);
    targets.insert(o.upstream);
  }
  EXPECT_EQ(targets, (std::set<std::size_t>{0, 1}));
}

TEST_F(UplinkTest, AllModeBeatsOnlyTheUpstreamWhoseLinkIsBackAfterACut) {
  Uplink up(config(UplinkMode::kAll), "l1", 1, 1, 7, clock.now());
  up.upsert(clock.now(), test_support::reg("web", "w1", "10.0.0.1:80"));
  // A cut: nothing answers for 30 s, so both links are deep in their backoff.
  const auto healed = clock.now() + Duration{30'000};
  while (up.next_deadline() <= healed) {
    clock.set(std::max(clock.now(), up.next_deadline()));
    up.on_timer(clock.now());
  }
  clock.set(healed);
  up.take_outgoing();

  up.on_link_up(clock.now(), 1);
  const auto out = up.take_outgoing();
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].upstream, 1u);
  EXPECT_TRUE(std::holds_alternative<proto::UpBeat>(out[0].message));
}

}  // namespace
}  // namespace cascade::hub
