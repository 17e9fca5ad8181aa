// Link liveness: the timing derived from the beat interval
// (common/link_timing.hpp) and what the agent's core does when its adapter
// says the connection to a hub is back (AgentCore::on_link_up).
#include <gtest/gtest.h>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/link_timing.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

using std::chrono::milliseconds;
using test_support::reg;

constexpr Duration kInterval{1000};

// ------------------------------------------------------------------ LinkTiming

const std::vector<milliseconds> kBeatIntervals{
    milliseconds{10},   milliseconds{100},    milliseconds{500},      milliseconds{1000},
    milliseconds{2000}, milliseconds{60'000}, milliseconds{3'600'000}};

TEST(LinkTimingTest, AfterAHealOfAnyCutAConnectAttemptStartsWithinOneBeat) {
  for (const auto beat : kBeatIntervals) {
    const auto t = LinkTiming::for_beat_interval(beat);
    EXPECT_LT(t.worst_reconnect_after_heal(), beat) << beat.count() << " ms";
  }
}

TEST(LinkTimingTest, ADeadConnectionIsFoundWithinOneBeat) {
  for (const auto beat : kBeatIntervals) {
    const auto t = LinkTiming::for_beat_interval(beat);
    EXPECT_LE(t.heartbeat_interval + t.heartbeat_timeout, beat) << beat.count() << " ms";
  }
}

TEST(LinkTimingTest, AConnectAttemptIsOneSynNotTheKernelsBackedOffRetries) {
  // Linux resends an unanswered SYN after 1 s, then 2 s, 4 s, ... An attempt
  // cut short before the second resend never waits out that backoff.
  for (const auto beat : kBeatIntervals) {
    if (beat > milliseconds{5000}) continue;
    EXPECT_LT(LinkTiming::for_beat_interval(beat).connect_timeout, milliseconds{1000});
  }
}

TEST(LinkTimingTest, ReconnectsAreJitteredAndTheBackoffIsCapped) {
  const auto t = LinkTiming::for_beat_interval(milliseconds{2000});
  EXPECT_GT(t.reconnect_interval, milliseconds{0});  // libzmq's jitter range
  EXPECT_GE(t.reconnect_interval_max, t.reconnect_interval);
  EXPECT_EQ(t.reconnect_interval_max, milliseconds{1000});
}

TEST(LinkTimingTest, ThePeerDropsASilentConnectionOnlyAfterSeveralMissedPings) {
  for (const auto beat : kBeatIntervals) {
    const auto t = LinkTiming::for_beat_interval(beat);
    EXPECT_GE(t.heartbeat_ttl, t.heartbeat_interval * 2) << beat.count() << " ms";
    EXPECT_LE(t.heartbeat_ttl, milliseconds{65'535 * 100});  // libzmq's limit (deciseconds)
    EXPECT_EQ(t.heartbeat_ttl.count() % 100, 0);             // what libzmq can keep exactly
  }
}

// ------------------------------------------------------------ on_link_up

class LinkUpTest : public ::testing::Test {
 protected:
  static AgentCoreConfig config(std::size_t hubs) {
    AgentCoreConfig c;
    c.node_id = "agent-1";
    c.epoch = 11;
    c.hub_count = hubs;
    c.beat_interval = kInterval;
    c.failover_backoff_base = Duration{500};
    c.failover_backoff_max = Duration{30'000};
    c.retries_per_beat = 0;
    return c;
  }
  FakeClock clock;
  AgentCore core{config(1), /*rng_seed=*/3};

  // Starts and gets the first beat answered with a lease of three intervals.
  void start_answered() {
    auto first = core.start(clock.now());
    const auto& beat = std::get<proto::UpBeat>(first.send.back().message);
    proto::DownBeat d;
    d.hub_id = "hub-a";
    d.hub_epoch = 1;
    d.node_id = beat.node_id;
    d.ack_seq = beat.seq;
    d.lease_ms = 3 * kInterval.count();
    core.on_message(clock.now(), 0, d);
  }
  // Runs the timers for `length` with no reply: a cut. Beats go out into the
  // dead connection (`sendable`) or cannot be handed to the transport at all.
  void cut(Duration length, bool sendable) {
    const auto until = clock.now() + length;
    while (core.next_deadline() <= until) {
      clock.set(std::max(clock.now(), core.next_deadline()));
      auto sent = core.on_timer(clock.now()).send;
      if (!sendable && !sent.empty()) core.beat_not_sent(clock.now());
    }
    clock.set(until);
  }
  static std::size_t beats_in(const AgentActions& a) {
    std::size_t n = 0;
    for (const auto& out : a.send)
      n += std::holds_alternative<proto::UpBeat>(out.message) ? 1 : 0;
    return n;
  }
};

TEST_F(LinkUpTest, LinkBackDuringAFailoverBackoffBeatsAtOnce) {
  start_answered();
  cut(Duration{30'000}, /*sendable=*/false);
  ASSERT_GT(core.failovers(), 0u);
  ASSERT_GT(core.next_deadline(), clock.now());  // waiting out a backoff

  const auto failovers = core.failovers();
  const auto actions = core.on_link_up(clock.now(), 0);
  EXPECT_EQ(beats_in(actions), 1u);
  EXPECT_EQ(core.failovers(), failovers);  // the beat is not a miss of the old connection
  EXPECT_GE(core.next_deadline(), clock.now() + kInterval * 9 / 10);  // a normal interval again
}

TEST_F(LinkUpTest, LinkBackAfterBeatsWentIntoADeadConnectionBeatsAtOnce) {
  start_answered();
  cut(Duration{5000}, /*sendable=*/true);
  EXPECT_EQ(beats_in(core.on_link_up(clock.now(), 0)), 1u);
}

TEST_F(LinkUpTest, LinkBackWithinTheIntervalOfAnAnsweredBeatChangesNothing) {
  start_answered();
  clock.advance(Duration{300});
  const auto deadline = core.next_deadline();
  EXPECT_TRUE(core.on_link_up(clock.now(), 0).send.empty());
  EXPECT_EQ(core.next_deadline(), deadline);
}

TEST_F(LinkUpTest, LinkBackOfAHubWeDoNotBeatToChangesNothing) {
  AgentCore two(config(2), 3);
  two.start(clock.now());  // beating to hub 0, unanswered
  EXPECT_TRUE(two.on_link_up(clock.now(), 1).send.empty());
}

TEST_F(LinkUpTest, AStoppingAgentResendsItsDeregisterWhenTheLinkIsBack) {
  start_answered();
  core.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  core.shutdown(clock.now());
  cut(Duration{10'000}, /*sendable=*/false);
  const auto actions = core.on_link_up(clock.now(), 0);
  ASSERT_EQ(actions.send.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<proto::Deregister>(actions.send.front().message));
}

}  // namespace
}  // namespace cascade::agent
