#include "cascade/agent/agent_core.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "cascade/common/digest.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

constexpr Duration kInterval{2000};

using test_support::inst;
using test_support::key;
using test_support::reg;

class AgentCoreTest : public ::testing::Test {
 protected:
  AgentCoreConfig config() {
    AgentCoreConfig c;
    c.node_id = "agent-1";
    c.epoch = 11;
    c.hub_count = 3;
    c.beat_interval = kInterval;
    c.misses_before_failover = 3;
    c.failover_backoff_base = Duration{500};
    c.failover_backoff_max = Duration{4000};
    c.subscription_ttl = Duration{60'000};
    c.retries_per_beat = 0;  // these tests count the beats of each interval
    return c;
  }
  FakeClock clock;
  AgentCore core{config(), /*rng_seed=*/1};

  // Runs timers until `until`, answering nothing. Returns every beat sent with its hub.
  std::vector<Outgoing> run_silent(MonoTime until) {
    std::vector<Outgoing> sent;
    while (core.next_deadline() <= until) {
      clock.set(std::max(clock.now(), core.next_deadline()));
      auto a = core.on_timer(clock.now());
      for (auto& o : a.send)
        sent.push_back(std::move(o));
    }
    clock.set(until);
    return sent;
  }
  // The last message sent, which must be a beat (an empty one, and a
  // failure, when it is not: the test goes on to fail, not to crash).
  proto::UpBeat last_beat(const AgentActions& a) {
    const auto* beat =
        a.send.empty() ? nullptr : std::get_if<proto::UpBeat>(&a.send.back().message);
    if (beat == nullptr) {
      ADD_FAILURE() << "no beat was sent";
      return {};
    }
    return *beat;
  }
  proto::DownBeat down_for(const proto::UpBeat& beat, bool send_full = false) {
    proto::DownBeat d;
    d.hub_id = "hub-a";
    d.hub_epoch = 1;
    d.node_id = beat.node_id;
    d.ack_seq = beat.seq;
    d.send_full = send_full;
    return d;
  }
  // Starts, then resolves "svc" through hub-a: version 5, instance i1 at a:1.
  void start_with_svc_resolved() {
    core.start(clock.now());
    std::uint64_t id = 0;
    core.query(clock.now(), key("svc"), id);
    core.on_message(clock.now(), 0,
                    proto::QueryReply{id, "hub-a", 1, key("svc"), true, 5, {inst("i1", "a:1")}});
  }
  // Beats once (advancing to the next beat, through any other timer of the
  // core's on the way, such as the standby hubs' keepalives) and returns the beat.
  proto::UpBeat next_beat() {
    for (int timers = 0; timers < 10; ++timers) {
      clock.set(core.next_deadline());
      auto a = core.on_timer(clock.now());
      const bool beat = std::any_of(a.send.begin(), a.send.end(), [](const Outgoing& o) {
        return std::holds_alternative<proto::UpBeat>(o.message);
      });
      if (beat) return last_beat(a);
    }
    ADD_FAILURE() << "no beat within ten timers";
    return {};
  }
  // Beats once and takes hub-a's answer, carrying `update`.
  AgentActions update_at_next_beat(proto::ServiceUpdate update) {
    auto down = down_for(next_beat());
    down.updates.push_back(std::move(update));
    return core.on_message(clock.now(), 0, down);
  }
};

// One core per instance, a million in a simulation: its fixed size is the
// fleet's memory. Two std::mt19937_64 engines (2.5 KB each) and an idle
// part assembler (~900 B) made it 7.3 KB; what grows with use (registrations,
// cached lists) is allocated as it comes.
TEST(AgentCoreSize, AnIdleCoreFitsInTwoKilobytes) {
  EXPECT_LE(sizeof(AgentCore), 2048u);
}

TEST_F(AgentCoreTest, FirstBeatGoesOutAtStartAndCarriesTheSet) {
  core.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  auto beat = last_beat(core.start(clock.now()));
  ASSERT_TRUE(beat.registrations.has_value());
  EXPECT_EQ(beat.registrations->size(), 1u);
  EXPECT_NE(beat.digest, 0u);
  EXPECT_EQ(beat.epoch, 11u);
}

TEST_F(AgentCoreTest, AcknowledgedSetIsNotResentUntilItChanges) {
  core.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  auto first = last_beat(core.start(clock.now()));
  core.on_message(clock.now(), 0, down_for(first));
  auto second = next_beat();
  EXPECT_FALSE(second.registrations.has_value());
  EXPECT_EQ(second.digest, first.digest);
  core.on_message(clock.now(), 0, down_for(second));

  core.add_registration(clock.now(), reg("svc", "i2", "a:2"));
  EXPECT_EQ(core.next_deadline(), clock.now()) << "a change beats at once";
  auto third = next_beat();
  ASSERT_TRUE(third.registrations.has_value());
  EXPECT_EQ(third.registrations->size(), 2u);
  EXPECT_NE(third.digest, first.digest);
}

TEST_F(AgentCoreTest, HubAskingForTheSetGetsItOnTheNextBeatAtOnce) {
  core.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  auto first = last_beat(core.start(clock.now()));
  core.on_message(clock.now(), 0, down_for(first));
  auto second = next_beat();
  core.on_message(clock.now(), 0, down_for(second, /*send_full=*/true));
  EXPECT_EQ(core.next_deadline(), clock.now());
  EXPECT_TRUE(next_beat().registrations.has_value());
}

TEST_F(AgentCoreTest, BeatIntervalIsJitteredWithinTenPercent) {
  core.start(clock.now());
  std::set<std::int64_t> gaps;
  for (int i = 0; i < 50; ++i) {
    auto before = clock.now();
    auto b = next_beat();
    core.on_message(clock.now(), 0, down_for(b));
    const auto gap = (clock.now() - before).count();
    EXPECT_GE(gap, 1800);
    EXPECT_LE(gap, 2200);
    gaps.insert(gap);
  }
  EXPECT_GT(gaps.size(), 10u) << "beats must not be in lockstep";
}

// Protocol section 5.17: a hub that falls behind grants a longer interval.
// The beat after the reply already goes at it (it was scheduled at the old
// one when the answered beat left); a reply without a grant brings the
// agent's own interval back.
TEST_F(AgentCoreTest, AnIntervalGrantedByAHubThatFellBehindSpacesTheBeatsOutUntilWithdrawn) {
  core.start(clock.now());
  auto slow = down_for(next_beat());
  slow.interval_ms = 8000;
  core.on_message(clock.now(), 0, slow);
  EXPECT_EQ(core.beat_interval(), Duration{8000});
  for (int i = 0; i < 5; ++i) {
    const auto before = clock.now();
    auto down = down_for(next_beat());
    const auto gap = (clock.now() - before).count();
    EXPECT_GE(gap, 7200) << "beat " << i;
    EXPECT_LE(gap, 8800) << "beat " << i;
    down.interval_ms = i < 4 ? 8000 : 0;
    core.on_message(clock.now(), 0, down);
  }
  const auto before = clock.now();
  next_beat();
  EXPECT_LE((clock.now() - before).count(), 2200)
      << "the own interval, once the grant is withdrawn";
}

TEST_F(AgentCoreTest, AGrantedIntervalShorterThanTheOwnOneChangesNothing) {
  core.start(clock.now());
  auto down = down_for(next_beat());
  down.interval_ms = 500;
  core.on_message(clock.now(), 0, down);
  EXPECT_EQ(core.beat_interval(), kInterval);
  const auto before = clock.now();
  next_beat();
  EXPECT_GE((clock.now() - before).count(), 1800);
}

// A registration change beats within change_delay; a grant arriving after
// it must not push that beat back to the end of the longer interval.
TEST_F(AgentCoreTest, ABeatBroughtForwardByAChangeIsNotPostponedByALongerGrant) {
  core.start(clock.now());
  const auto answered = next_beat();
  core.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  const auto change_beat_at = core.next_deadline();
  auto down = down_for(answered);
  down.interval_ms = 8000;
  core.on_message(clock.now(), 0, down);
  EXPECT_EQ(core.next_deadline(), change_beat_at);
}

// A failover leaves the grant behind with the hub that gave it.
TEST_F(AgentCoreTest, TheNextHubAfterAFailoverStartsFromTheOwnInterval) {
  core.start(clock.now());
  auto down = down_for(next_beat());
  down.interval_ms = 8000;
  core.on_message(clock.now(), 0, down);
  run_silent(clock.now() + Duration{60'000});
  EXPECT_NE(core.current_hub(), 0u);
  EXPECT_EQ(core.beat_interval(), kInterval);
}

// A hub past its queue bound sheds a beat unread (protocol section 5.18).
proto::ErrorReply busy(std::uint64_t ref, std::uint32_t retry_after_ms) {
  return {proto::ErrorCode::kBusy, "hub overloaded", ref, retry_after_ms};
}

TEST_F(AgentCoreTest, AShedBeatGoesAgainWhenTheHubAsksSpreadByJitterAndIsNoMiss) {
  core.on_message(clock.now(), 0, down_for(last_beat(core.start(clock.now()))));
  const auto shed = next_beat();
  const auto shed_at = clock.now();
  core.on_message(clock.now(), 0, busy(shed.seq, 6000));
  const auto again = next_beat();
  const auto gap = (clock.now() - shed_at).count();
  EXPECT_GE(gap, 6000) << "never before the hub asked";
  EXPECT_LE(gap, 9000) << "at most half as much again";
  EXPECT_GT(again.seq, shed.seq);
  EXPECT_EQ(core.counters().beats_shed, 1u);
  EXPECT_EQ(core.counters().beats_missed, 0u);
  EXPECT_EQ(core.current_hub(), 0u);
}

TEST_F(AgentCoreTest, AFleetShedTogetherComesBackSpreadOut) {
  std::vector<std::int64_t> returns;
  auto one_hub = config();
  one_hub.hub_count = 1;  // no standby keepalive among the deadlines
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    FakeClock c;
    AgentCore agent{one_hub, seed};
    const auto first = last_beat(agent.start(c.now()));
    agent.on_message(c.now(), 0, busy(first.seq, 4000));
    returns.push_back((agent.next_deadline() - c.now()).count());
  }
  const auto [lo, hi] = std::minmax_element(returns.begin(), returns.end());
  EXPECT_GE(*lo, 4000);
  EXPECT_LE(*hi, 6000);
  EXPECT_GE(*hi - *lo, 1000) << "the shed fleet would return in one burst";
}

// Shed again and again while the hub is overloaded: still no miss, so no
// failover that would carry the load to the next hub.
TEST_F(AgentCoreTest, ABeatShedEveryIntervalNeverFailsOver) {
  core.on_message(clock.now(), 0, down_for(last_beat(core.start(clock.now()))));
  for (int i = 0; i < 10; ++i)
    core.on_message(clock.now(), 0, busy(next_beat().seq, 2000));
  EXPECT_EQ(core.current_hub(), 0u);
  EXPECT_EQ(core.counters().beats_shed, 10u);
  EXPECT_EQ(core.counters().beats_missed, 0u);
}

TEST_F(AgentCoreTest, ABusyNamingAnotherMessageLeavesTheBeatWaiting) {
  core.start(clock.now());
  const auto beat = next_beat();
  const auto due = core.next_deadline();
  core.on_message(clock.now(), 0, busy(beat.seq + 100, 6000));
  EXPECT_EQ(core.next_deadline(), due);
  EXPECT_EQ(core.counters().beats_shed, 0u);
}

TEST_F(AgentCoreTest, AShedQueryEndsAtOnceForTheCallerToRetry) {
  core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("svc"), id);
  const auto a = core.on_message(clock.now(), 0, busy(id, 2000));
  EXPECT_EQ(a.timed_out, std::vector<std::uint64_t>{id});
  EXPECT_EQ(core.counters().lookups_busy, 1u);
  EXPECT_EQ(core.counters().beats_shed, 0u);
}

TEST_F(AgentCoreTest, FailoverAfterThreeMissesWithGrowingCappedBackoff) {
  auto sent = core.start(clock.now()).send;
  for (auto& o : run_silent(clock.now() + Duration{60'000}))
    sent.push_back(std::move(o));
  // Hubs are tried in order 0,1,2,0,... and each gets three beats before we move.
  ASSERT_GE(sent.size(), 12u);
  for (std::size_t i = 0; i < 12; ++i)
    EXPECT_EQ(sent[i].hub, (i / 3) % 3) << "beat " << i;
  EXPECT_GE(core.failovers(), 4u);
}

// A hub closes connections that say nothing for its idle timeout; the
// standby hubs get a keepalive so the connection a failover needs is there.
TEST_F(AgentCoreTest, StandbyHubsGetAKeepaliveWithinEveryFiveBeatIntervals) {
  const auto started = clock.now();
  core.start(started);
  std::vector<MonoTime> at;
  while (clock.now() < started + Duration{60'000}) {
    clock.set(core.next_deadline());
    auto a = core.on_timer(clock.now());
    for (const auto& out : a.send)  // hub 0 answers every beat
      if (const auto* beat = std::get_if<proto::UpBeat>(&out.message))
        core.on_message(clock.now(), 0, down_for(*beat));
    if (a.keepalive.empty()) continue;
    EXPECT_EQ(a.keepalive, (std::vector<std::size_t>{1, 2})) << "every hub but the current one";
    at.push_back(clock.now());
  }
  ASSERT_GE(at.size(), 6u);
  EXPECT_LE(at[0] - started, kInterval * 5);
  for (std::size_t i = 1; i < at.size(); ++i)
    EXPECT_LE(at[i] - at[i - 1], kInterval * 5);
}

TEST_F(AgentCoreTest, NoKeepaliveWithASingleHubOrWhenBeatingEveryHub) {
  auto single = config();
  single.hub_count = 1;
  auto all = config();
  all.hub_mode = HubMode::kAll;
  for (auto c : {single, all}) {
    AgentCore other{c, 1};
    other.start(clock.now());
    for (auto t = clock.now(); t < clock.now() + Duration{60'000}; t += Duration{500})
      EXPECT_TRUE(other.on_timer(t).keepalive.empty());
  }
}

TEST_F(AgentCoreTest, FailoverBackoffDoublesAndIsCapped) {
  core.start(clock.now());
  std::vector<MonoTime> first_beat_at_hub_change;
  std::size_t hub = 0;
  MonoTime last_beat_time = clock.now();
  std::vector<Duration> pauses;
  while (pauses.size() < 6) {
    clock.set(core.next_deadline());
    auto a = core.on_timer(clock.now());
    if (a.send.empty()) continue;
    if (a.send.back().hub != hub) {
      hub = a.send.back().hub;
      pauses.push_back(clock.now() - last_beat_time);
    }
    last_beat_time = clock.now();
  }
  // Pause = one beat interval (the third miss is noticed at the next beat) + backoff.
  auto backoff = [&](std::size_t i) { return pauses[i] - kInterval; };
  EXPECT_NEAR(backoff(0).count(), 500, 250);
  EXPECT_NEAR(backoff(1).count(), 1000, 350);
  EXPECT_NEAR(backoff(2).count(), 2000, 600);
  for (std::size_t i = 3; i < pauses.size(); ++i)
    EXPECT_LE(backoff(i).count(), 4000 * 1.2 + 250);
}

TEST_F(AgentCoreTest, AnEarlyBeatForAChangeIsNotAMiss) {
  auto c = config();
  c.misses_before_failover = 1;
  AgentCore eager{c, 1};
  eager.start(clock.now());
  clock.advance(Duration{5});
  eager.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  auto a = eager.on_timer(clock.now());  // the start beat is 5 ms old, not missed
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_EQ(a.send[0].hub, 0u);
  EXPECT_EQ(eager.failovers(), 0u);
}

TEST_F(AgentCoreTest, FailoverBackoffNeverOutlastsTheGraceOfTheGrantedLease) {
  auto b = last_beat(core.start(clock.now()));
  auto down = down_for(b);
  down.lease_ms = 1200;
  core.on_message(clock.now(), 0, down);
  std::size_t hub = 0;
  // The timer that gives up on a hub sends nothing and arms the backoff; the
  // next one beats to the next hub. (Measured from the last beat instead, the
  // gap also holds that beat's jittered interval, up to 10% over kInterval.)
  MonoTime previous_timer = clock.now();
  for (int changes = 0; changes < 6;) {
    clock.set(core.next_deadline());
    auto a = core.on_timer(clock.now());
    if (!a.send.empty() && a.send.back().hub != hub) {
      hub = a.send.back().hub;
      ++changes;
      EXPECT_LE((clock.now() - previous_timer).count(), 400 * 1.2 + 1) << "lease / 3, jittered";
    }
    previous_timer = clock.now();
  }
}

TEST_F(AgentCoreTest, AReplyResetsTheMissCount) {
  auto b = last_beat(core.start(clock.now()));
  for (int i = 0; i < 10; ++i) {
    next_beat();  // unanswered
    b = next_beat();
    core.on_message(clock.now(), 0, down_for(b));
  }
  EXPECT_EQ(core.failovers(), 0u);
  EXPECT_EQ(core.current_hub(), 0u);
}

TEST_F(AgentCoreTest, UnusedSubscriptionIsDroppedAfterTheTtl) {
  core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("svc"), id);
  proto::QueryReply reply;
  reply.request_id = id;
  reply.service = key("svc");
  reply.found = true;
  reply.version = 5;
  reply.instances = {inst("i1", "a:1")};
  auto a = core.on_message(clock.now(), 0, reply);
  EXPECT_EQ(a.answered, std::vector<std::uint64_t>{id});

  auto beat = next_beat();
  ASSERT_EQ(beat.uses.size(), 1u);
  EXPECT_EQ(beat.uses[0].version, 5u);
  std::vector<proto::ServiceKey> dropped;
  while (clock.now() < mono_from_ms(1'000'000 + 62'500)) {
    auto b = next_beat();
    core.on_message(clock.now(), 0, down_for(b));
    if (b.uses.empty()) break;
  }
  EXPECT_EQ(core.cache_size(), 0u);
  EXPECT_TRUE(next_beat().uses.empty());
}

TEST_F(AgentCoreTest, UsedSubscriptionStaysPastTheTtl) {
  start_with_svc_resolved();
  for (int i = 0; i < 60; ++i) {
    auto b = next_beat();
    core.on_message(clock.now(), 0, down_for(b));
    EXPECT_TRUE(core.lookup(clock.now(), 0, key("svc")).has_value());
  }
  EXPECT_EQ(core.cache_size(), 1u);
}

// A push between beats from hub-a (incarnation 1), carrying `update`.
proto::DownBeat push_of(proto::ServiceUpdate update) {
  proto::DownBeat d;
  d.hub_id = "hub-a";
  d.hub_epoch = 1;
  d.node_id = "agent-1";
  d.push = true;
  d.updates.push_back(std::move(update));
  return d;
}

TEST_F(AgentCoreTest, PushOntoAVersionWeMissedBeatsAtOnceSoTheReplyRepairsTheList) {
  start_with_svc_resolved();
  update_at_next_beat({key("svc"), 5, 6, proto::UpdateKind::kDelta, {inst("i2", "b:1")}, {}});
  const auto interval_beat = core.next_deadline();

  // 6 -> 7 never came (lost, or overtaken by this push): 7 -> 8 cannot apply.
  auto a = core.on_message(clock.now(), 0,
                           push_of({key("svc"), 7, 8, proto::UpdateKind::kDelta, {}, {"i1"}}));
  EXPECT_TRUE(a.changed.empty());
  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->version, 6u);
  EXPECT_EQ(core.next_deadline(), clock.now()) << "not at the interval beat";
  EXPECT_LT(core.next_deadline(), interval_beat);
  const auto beat = last_beat(core.on_timer(clock.now()));
  ASSERT_EQ(beat.uses.size(), 1u);
  EXPECT_EQ(beat.uses[0].version, 6u) << "the beat declares what we hold";
}

TEST_F(AgentCoreTest, BeatReplyCrossedByAPushBeatsAgainAtOnce) {
  start_with_svc_resolved();
  core.on_message(clock.now(), 0, down_for(next_beat()));  // hub-a answers: pushes are taken
  const auto beat = next_beat();                           // declares 5
  // Meanwhile the hub pushed 5 -> 6, then made the reply from what the beat
  // declared: 5 -> 7. It believes we hold 7 and will push nothing more.
  core.on_message(clock.now(), 0, push_of({key("svc"), 5, 6, proto::UpdateKind::kDelta, {}, {}}));
  auto reply = down_for(beat);
  reply.updates.push_back({key("svc"), 5, 7, proto::UpdateKind::kDelta, {}, {"i1"}});
  core.on_message(clock.now(), 0, reply);
  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->version, 6u);
  EXPECT_EQ(core.next_deadline(), clock.now());
  const auto repair = last_beat(core.on_timer(clock.now()));
  ASSERT_EQ(repair.uses.size(), 1u);
  EXPECT_EQ(repair.uses[0].version, 6u);

  // A second miss within the spacing waits for the interval.
  core.on_message(clock.now(), 0, push_of({key("svc"), 8, 9, proto::UpdateKind::kDelta, {}, {}}));
  EXPECT_GT(core.next_deadline(), clock.now() + Duration{1000});
}

TEST_F(AgentCoreTest, PushWeAlreadyHaveOrThatAppliesKeepsTheBeatInterval) {
  start_with_svc_resolved();
  update_at_next_beat({key("svc"), 5, 7, proto::UpdateKind::kDelta, {inst("i2", "b:1")}, {}});
  const auto interval_beat = core.next_deadline();

  // Old news: the beat reply brought 7 before the push of 6 -> 7 arrived.
  core.on_message(clock.now(), 0, push_of({key("svc"), 6, 7, proto::UpdateKind::kDelta, {}, {}}));
  EXPECT_EQ(core.next_deadline(), interval_beat);
  auto a = core.on_message(clock.now(), 0,
                           push_of({key("svc"), 7, 8, proto::UpdateKind::kDelta, {}, {"i1"}}));
  EXPECT_EQ(a.changed.size(), 1u);
  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->version, 8u);
  EXPECT_EQ(core.next_deadline(), interval_beat);
}

// A hub's versions of a list grow: a full list older than the one held is a
// late reply (or push) that a newer one overtook, and is ignored; composed
// (cross-tier) versions, top bit set, are compared among themselves only.
TEST_F(AgentCoreTest, AFullListOlderThanTheOneHeldFromTheSameHubIsIgnored) {
  start_with_svc_resolved();
  core.on_message(clock.now(), 0, down_for(next_beat()));  // hub-a, incarnation 1, answers
  core.on_message(clock.now(), 0,
                  push_of({key("svc"), 5, 8, proto::UpdateKind::kFull, {inst("i3", "c:1")}, {}}));
  auto late = core.on_message(
      clock.now(), 0,
      push_of({key("svc"), 5, 7, proto::UpdateKind::kFull, {inst("i2", "b:1")}, {}}));
  EXPECT_TRUE(late.changed.empty());
  auto held = core.lookup(clock.now(), 0, key("svc"));
  ASSERT_TRUE(held);
  EXPECT_EQ(held->version, 8u);
  ASSERT_EQ(held->instances.size(), 1u);
  EXPECT_EQ(held->instances[0].id, "i3") << "the newer list stays";

  constexpr std::uint64_t kComposed = std::uint64_t{1} << 63;
  core.on_message(
      clock.now(), 0,
      push_of({key("svc"), 8, kComposed | 2, proto::UpdateKind::kFull, {inst("x1", "x:1")}, {}}));
  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->version, kComposed | 2)
      << "a composed list replaces a local one whatever the numbers";
  core.on_message(clock.now(), 0,
                  push_of({key("svc"), 0, 6, proto::UpdateKind::kFull, {inst("i1", "a:1")}, {}}));
  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->version, 6u) << "and back";
}

TEST_F(AgentCoreTest, DeltaAppliesOnlyOnTopOfTheVersionItWasMadeFor) {
  start_with_svc_resolved();
  update_at_next_beat({key("svc"), 4, 9, proto::UpdateKind::kDelta, {inst("i2", "b:1")}, {}});
  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->version, 5u) << "delta from 4 ignored";

  update_at_next_beat({key("svc"), 5, 9, proto::UpdateKind::kDelta, {inst("i2", "b:1")}, {"i1"}});
  auto r = core.lookup(clock.now(), 0, key("svc"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->version, 9u);
  ASSERT_EQ(r->instances.size(), 1u);
  EXPECT_EQ(r->instances[0].id, "i2");
}

// ---------------------------------------------------------------- config groups

proto::ConfigEntry config_entry(const std::string& key, const std::string& value) {
  return {key, value, {1, "hub-a", 3}};
}

// Starts, and follows "orders" from hub-a's first answer: version 7, a = 1.
class AgentCoreConfigTest : public AgentCoreTest {
 protected:
  void follow_orders_at_7() {
    core.on_message(clock.now(), 0, down_for(last_beat(core.start(clock.now()))));
    core.use_config(clock.now(), "orders");
    auto down = down_for(next_beat());
    down.config_updates.push_back(
        {"orders", 0, 7, proto::UpdateKind::kFull, {config_entry("a", "1")}, {}});
    core.on_message(clock.now(), 0, down);
  }
  proto::DownBeat config_push(proto::ConfigUpdate update) {
    proto::DownBeat d;
    d.hub_id = "hub-a";
    d.hub_epoch = 1;
    d.node_id = "agent-1";
    d.push = true;
    d.config_updates.push_back(std::move(update));
    return d;
  }
};

TEST_F(AgentCoreConfigTest, AGroupFollowedForTheFirstTimeIsDeclaredByABeatAtOnce) {
  core.on_message(clock.now(), 0, down_for(last_beat(core.start(clock.now()))));
  clock.advance(Duration{300});
  core.use_config(clock.now(), "orders");
  EXPECT_EQ(core.next_deadline(), clock.now()) << "not at the end of the interval";
  const auto beat = last_beat(core.on_timer(clock.now()));
  EXPECT_EQ(beat.configs, (std::vector<proto::ConfigUse>{{"orders", 0}}));
  core.use_config(clock.now(), "orders");
  EXPECT_GT(core.next_deadline(), clock.now() + Duration{1000}) << "a group followed already";
}

TEST_F(AgentCoreConfigTest, ABeatReplysUpdateAppliesAndTheNextBeatDeclaresItsVersion) {
  core.on_message(clock.now(), 0, down_for(last_beat(core.start(clock.now()))));
  core.use_config(clock.now(), "orders");
  auto down = down_for(next_beat());
  down.config_updates.push_back(
      {"orders", 0, 7, proto::UpdateKind::kFull, {config_entry("a", "1")}, {}});
  const auto actions = core.on_message(clock.now(), 0, down);
  EXPECT_EQ(actions.config_changed, std::vector<std::string>{"orders"});
  const auto* held = core.configs().find("orders");
  ASSERT_NE(held, nullptr);
  EXPECT_EQ(held->entries.at("a").value, "1");
  EXPECT_EQ(held->confirmed_at, clock.now());
  const auto beat = next_beat();
  EXPECT_EQ(beat.configs, (std::vector<proto::ConfigUse>{{"orders", 7}}));
  // The reply without updates confirms the group as current.
  core.on_message(clock.now(), 0, down_for(beat));
  EXPECT_EQ(core.configs().find("orders")->confirmed_at, clock.now());
}

TEST_F(AgentCoreConfigTest, APushedChangeAppliesBetweenBeats) {
  follow_orders_at_7();
  const auto interval_beat = core.next_deadline();
  const auto actions = core.on_message(
      clock.now(), 0,
      config_push({"orders", 7, 8, proto::UpdateKind::kDelta, {config_entry("a", "2")}, {}}));
  EXPECT_EQ(actions.config_changed, std::vector<std::string>{"orders"});
  EXPECT_EQ(core.configs().find("orders")->entries.at("a").value, "2");
  EXPECT_EQ(core.next_deadline(), interval_beat);
  EXPECT_EQ(next_beat().configs, (std::vector<proto::ConfigUse>{{"orders", 8}}));
}

TEST_F(AgentCoreConfigTest, ADeltaOnAVersionWeMissedAsksForTheWholeGroupAtOnce) {
  follow_orders_at_7();
  // 7 -> 8 never came: 8 -> 9 cannot apply.
  const auto actions = core.on_message(
      clock.now(), 0,
      config_push({"orders", 8, 9, proto::UpdateKind::kDelta, {config_entry("b", "2")}, {}}));
  EXPECT_TRUE(actions.config_changed.empty());
  EXPECT_FALSE(core.configs().find("orders")->entries.contains("b"));
  EXPECT_EQ(core.next_deadline(), clock.now()) << "not at the interval beat";
  const auto beat = last_beat(core.on_timer(clock.now()));
  EXPECT_EQ(beat.configs, (std::vector<proto::ConfigUse>{{"orders", 0}}))
      << "version 0: the hub sends the group whole";
}

TEST_F(AgentCoreConfigTest, APushFromAnotherIncarnationOfTheHubIsNotApplied) {
  follow_orders_at_7();
  auto push =
      config_push({"orders", 7, 8, proto::UpdateKind::kDelta, {config_entry("a", "2")}, {}});
  push.hub_epoch = 2;
  EXPECT_TRUE(core.on_message(clock.now(), 0, push).config_changed.empty());
  EXPECT_EQ(core.configs().find("orders")->entries.at("a").value, "1");
}

TEST_F(AgentCoreConfigTest, AGroupNotUsedForTheTtlIsDroppedAndNoLongerDeclared) {
  follow_orders_at_7();
  core.pin_config(clock.now(), "flags");
  std::vector<std::string> dropped;
  const auto until = clock.now() + Duration{62'000};
  while (core.next_deadline() <= until) {
    clock.set(core.next_deadline());
    auto a = core.on_timer(clock.now());
    dropped.insert(dropped.end(), a.config_dropped.begin(), a.config_dropped.end());
    for (const auto& o : a.send)
      if (const auto* b = std::get_if<proto::UpBeat>(&o.message))
        core.on_message(clock.now(), 0, down_for(*b));
  }
  EXPECT_EQ(dropped, std::vector<std::string>{"orders"});
  // The list went when orders was dropped; the beats since stand for it.
  const auto beat = next_beat();
  EXPECT_TRUE(beat.configs.empty());
  EXPECT_EQ(beat.configs_digest, proto::config_uses_digest({{"flags", 0}}))
      << "a pinned group stays";
}

TEST_F(AgentCoreConfigTest, PastTheCapABeatDeclaresTheMostRecentlyUsedGroupsAndCountsTheRest) {
  core.on_message(clock.now(), 0, down_for(last_beat(core.start(clock.now()))));
  const auto groups = proto::kMaxConfigUsesPerBeat + 6;
  for (std::size_t i = 0; i < groups; ++i) {
    clock.advance(Duration{1});
    core.use_config(clock.now(), "g" + std::to_string(i));
  }
  const auto beat = last_beat(core.on_timer(clock.now()));
  EXPECT_EQ(beat.configs.size(), proto::kMaxConfigUsesPerBeat);
  EXPECT_EQ(core.counters().config_groups_left_out, 6u);
  EXPECT_FALSE(std::any_of(beat.configs.begin(), beat.configs.end(), [](const proto::ConfigUse& u) {
    return u.group == "g0";
  })) << "the least recently used is left out";
}

TEST_F(AgentCoreConfigTest, AfterMovingToAnotherHubEveryGroupIsDeclaredAtVersionZero) {
  follow_orders_at_7();
  auto down = down_for(next_beat());
  down.hub_id = "hub-b";
  down.hub_epoch = 9;
  core.on_message(clock.now(), 0, down);
  EXPECT_EQ(core.configs().find("orders")->entries.at("a").value, "1") << "kept and served";
  EXPECT_EQ(next_beat().configs, (std::vector<proto::ConfigUse>{{"orders", 0}}));
}

// The list of followed groups goes whole only when it changed; a steady beat
// sends its digest (a few bytes, whatever the number of groups).
class AgentCoreConfigDigestTest : public AgentCoreConfigTest {
 protected:
  // Follows orders at 7, and beats until the list was sent and answered.
  proto::UpBeat steady_digest_beat() {
    follow_orders_at_7();
    const auto list_beat = next_beat();
    EXPECT_EQ(list_beat.configs, (std::vector<proto::ConfigUse>{{"orders", 7}}));
    core.on_message(clock.now(), 0, down_for(list_beat));
    return next_beat();
  }
};

TEST_F(AgentCoreConfigDigestTest, ASteadyBeatSendsTheDigestOfItsListInsteadOfTheList) {
  const auto beat = steady_digest_beat();
  EXPECT_TRUE(beat.configs.empty());
  EXPECT_EQ(beat.configs_digest, proto::config_uses_digest({{"orders", 7}}));
  core.on_message(clock.now(), 0, down_for(beat));
  EXPECT_EQ(core.configs().find("orders")->confirmed_at, clock.now())
      << "a reply that took the digest confirms the groups";
}

TEST_F(AgentCoreConfigDigestTest, AHubThatAsksForTheListGetsItAtOnceAndConfirmsNothing) {
  const auto beat = steady_digest_beat();
  const auto confirmed = core.configs().find("orders")->confirmed_at;
  auto down = down_for(beat);
  down.send_configs = true;
  clock.advance(Duration{5});
  core.on_message(clock.now(), 0, down);
  EXPECT_EQ(core.configs().find("orders")->confirmed_at, confirmed);
  EXPECT_EQ(core.next_deadline(), clock.now()) << "not at the end of the interval";
  const auto list_beat = last_beat(core.on_timer(clock.now()));
  EXPECT_EQ(list_beat.configs, (std::vector<proto::ConfigUse>{{"orders", 7}}));
  EXPECT_EQ(list_beat.configs_digest, 0u);
}

TEST_F(AgentCoreConfigDigestTest, AfterTheHubRestartedTheNextBeatCarriesTheList) {
  auto down = down_for(steady_digest_beat());
  down.hub_epoch = 2;
  core.on_message(clock.now(), 0, down);
  EXPECT_EQ(next_beat().configs, (std::vector<proto::ConfigUse>{{"orders", 7}}));
}

TEST(ConfigUsesDigest, IsZeroForNoGroupAndTheSameInAnyOrderAndMovesWithAVersion) {
  EXPECT_EQ(proto::config_uses_digest({}), 0u);
  const auto digest = proto::config_uses_digest({{"orders", 7}, {"flags", 2}});
  EXPECT_NE(digest, 0u);
  EXPECT_EQ(proto::config_uses_digest({{"flags", 2}, {"orders", 7}}), digest);
  EXPECT_NE(proto::config_uses_digest({{"orders", 8}, {"flags", 2}}), digest);
  EXPECT_NE(proto::config_uses_digest({{"orders", 7}}), digest);
}

// ---------------------------------------------------------------- routing rules

std::vector<proto::RouteRuleText> dc1_rules() {
  return {{"=> zone = dc1", 10, false, true}};
}

TEST_F(AgentCoreTest, RoutingRulesOfAnUpdateAreKeptAndShownInTheResolution) {
  start_with_svc_resolved();
  EXPECT_FALSE(core.lookup(clock.now(), 0, key("svc"))->routes.has_value())
      << "the reply said nothing about rules";
  const auto actions =
      update_at_next_beat({key("svc"), 5, 6, proto::UpdateKind::kDelta, {}, {}, dc1_rules()});

  EXPECT_EQ(actions.changed, std::vector<proto::ServiceKey>{key("svc")});
  const auto r = core.lookup(clock.now(), 0, key("svc"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->version, 6u);
  EXPECT_EQ(r->routes, dc1_rules());
  ASSERT_NE(core.routes_of(key("svc")), nullptr);
  EXPECT_EQ(*core.routes_of(key("svc")), dc1_rules());
  EXPECT_EQ(r->instances.size(), 1u) << "a rules-only delta leaves the list alone";
}

TEST_F(AgentCoreTest, AnUpdateWithoutRoutingRulesKeepsTheRulesHeld) {
  start_with_svc_resolved();
  update_at_next_beat({key("svc"), 5, 6, proto::UpdateKind::kDelta, {}, {}, dc1_rules()});
  update_at_next_beat(  // nil routes: unchanged
      {key("svc"), 6, 7, proto::UpdateKind::kDelta, {inst("i2", "b:1")}, {}});

  const auto r = core.lookup(clock.now(), 0, key("svc"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->version, 7u);
  EXPECT_EQ(r->instances.size(), 2u);
  EXPECT_EQ(r->routes, dc1_rules());
}

TEST_F(AgentCoreTest, AnEmptyRuleSetClearsTheRulesHeld) {
  start_with_svc_resolved();
  update_at_next_beat({key("svc"), 5, 6, proto::UpdateKind::kDelta, {}, {}, dc1_rules()});
  proto::ServiceUpdate full{key("svc"), 6, 8, proto::UpdateKind::kFull, {inst("i1", "a:1")}, {}};
  full.routes = std::vector<proto::RouteRuleText>{};
  update_at_next_beat(full);

  const auto r = core.lookup(clock.now(), 0, key("svc"));
  ASSERT_TRUE(r);
  ASSERT_TRUE(r->routes.has_value()) << "empty is the hub saying 'no rules'";
  EXPECT_TRUE(r->routes->empty());
}

TEST_F(AgentCoreTest, RulesOfADeltaForAnotherVersionAreIgnoredWithIt) {
  start_with_svc_resolved();
  update_at_next_beat({key("svc"), 4, 6, proto::UpdateKind::kDelta, {}, {}, dc1_rules()});

  EXPECT_EQ(core.routes_of(key("svc")), nullptr);
}

TEST_F(AgentCoreTest, QueryReplyRoutingRulesAreHeld) {
  core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("svc"), id);
  proto::QueryReply reply{id, "hub-a", 1, key("svc"), true, 5, {inst("i1", "a:1")}};
  reply.routes = dc1_rules();
  core.on_message(clock.now(), 0, reply);

  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->routes, dc1_rules());
}

// Issue 11 (fuzzing; reproducers tests/fuzz/regressions/agent_core/query-reply-age-*):
// an age_ms beyond int64 wrapped to a negative age (a fresh answer), or
// overflowed the clock arithmetic (UBSan).
TEST_F(AgentCoreTest, QueryReplyAgeBeyondAnyClockIsServedStaleAtTheLongestAge) {
  core.start(clock.now());
  for (const std::uint64_t age_ms : {~std::uint64_t{0}, std::uint64_t{1} << 63}) {
    std::uint64_t id = 0;
    core.query(clock.now(), key("svc"), id);
    proto::QueryReply reply{id, "hub-a", 1, key("svc"), true, 5, {inst("i1", "a:1")}};
    reply.age_ms = age_ms;
    core.on_message(clock.now(), 0, reply);
    clock.advance(Duration{10});

    const auto r = core.lookup_any(clock.now(), clock.wall_ms(), key("svc"));
    ASSERT_TRUE(r);
    EXPECT_TRUE(r->stale) << age_ms;
    EXPECT_EQ(r->age, kMaxAnswerAge + Duration{10}) << age_ms;
  }
}

TEST_F(AgentCoreTest, SnapshotKeepsTheHubRulesThroughARestoreIntoAFreshCore) {
  const std::vector<proto::RouteRuleText> two{{"=> zone = dc1", 10, true, true},
                                              {"method = get => zone = dc2", -3, false, false}};
  core.start(clock.now());
  auto answer = [&](const std::string& service,
                    std::optional<std::vector<proto::RouteRuleText>> routes) {
    std::uint64_t id = 0;
    core.query(clock.now(), key(service), id);
    proto::QueryReply reply{id, "hub-a", 1, key(service), true, 5, {inst("i1", "a:1")}};
    reply.routes = std::move(routes);
    core.on_message(clock.now(), 0, reply);
  };
  answer("two", two);
  answer("empty", std::vector<proto::RouteRuleText>{});
  answer("none", std::nullopt);  // a hub of an older revision: said nothing

  std::vector<ServiceSnapshot> saved;
  for (const char* service : {"two", "empty", "none"})
    saved.push_back(core.snapshot_of(key(service), clock.wall_ms(), clock.now()));
  EXPECT_EQ(saved[0].routes, two);
  EXPECT_EQ(saved[1].routes, std::vector<proto::RouteRuleText>{});
  EXPECT_FALSE(saved[2].routes.has_value());

  AgentCore restarted{config(), /*rng_seed=*/2};
  restarted.restore_snapshot(saved, clock.now());

  ASSERT_NE(restarted.routes_of(key("two")), nullptr) << "picks read the rules through routes_of";
  EXPECT_EQ(*restarted.routes_of(key("two")), two);
  const auto r = restarted.lookup_any(clock.now(), clock.wall_ms(), key("two"));
  ASSERT_TRUE(r);
  EXPECT_EQ(r->source, Source::kSnapshot);
  EXPECT_EQ(r->routes, two);
  const auto empty = restarted.peek(clock.now(), clock.wall_ms(), key("empty"));
  ASSERT_TRUE(empty);
  ASSERT_TRUE(empty->routes.has_value()) << "'no rules' stays 'no rules', not 'not said'";
  EXPECT_TRUE(empty->routes->empty());
  EXPECT_EQ(restarted.routes_of(key("none")), nullptr);
  EXPECT_FALSE(restarted.peek(clock.now(), clock.wall_ms(), key("none"))->routes.has_value());
  // Saved again before any hub answers (the Client saves what changes): still there.
  EXPECT_EQ(restarted.snapshot_of(key("two"), clock.wall_ms(), clock.now()).routes, two);
}

TEST_F(AgentCoreTest, NewHubEpochTriggersOneJitteredFullResend) {
  core.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  auto b = last_beat(core.start(clock.now()));
  core.on_message(clock.now(), 0, down_for(b));
  b = next_beat();
  auto restarted = down_for(b);
  restarted.hub_epoch = 2;
  core.on_message(clock.now(), 0, restarted);
  const auto resend_at = core.next_deadline();
  EXPECT_LE(resend_at, clock.now() + kInterval);
  clock.set(resend_at);
  bool carried = false;
  for (int i = 0; i < 3 && !carried; ++i) {
    auto a = core.on_timer(clock.now());
    if (!a.send.empty())
      carried = std::get<proto::UpBeat>(a.send.back().message).registrations.has_value();
    clock.set(core.next_deadline());
  }
  EXPECT_TRUE(carried);
}

TEST_F(AgentCoreTest, SnapshotEntriesResolveStaleWithTheirAge) {
  ServiceSnapshot snap{
      key("svc"), 3, /*fetched_wall_ms=*/clock.wall_ms() - 90'000, {inst("i1", "a:1")}};
  core.restore_snapshot({snap}, clock.now());
  EXPECT_FALSE(core.lookup(clock.now(), clock.wall_ms(), key("svc")).has_value());
  auto r = core.lookup_any(clock.now(), clock.wall_ms(), key("svc"));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(r->source, Source::kSnapshot);
  EXPECT_EQ(r->age, Duration{90'000});
  EXPECT_EQ(r->instances.size(), 1u);
}

TEST_F(AgentCoreTest, SnapshotEntryBecomesFreshOnceAHubConfirmsIt) {
  core.restore_snapshot({ServiceSnapshot{key("svc"), 3, clock.wall_ms(), {inst("i1", "a:1")}}},
                        clock.now());
  auto b = last_beat(core.start(clock.now()));
  ASSERT_EQ(b.uses.size(), 1u);
  EXPECT_EQ(b.uses[0].version, ~std::uint64_t{0}) << "unverified until the hub confirms it";
  core.on_message(clock.now(), 0, down_for(b));
  auto r = core.lookup(clock.now(), clock.wall_ms(), key("svc"));
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->stale);
  EXPECT_EQ(r->source, Source::kHub);
}

// Staleness made by any hop above reaches the consumer: a reply naming the
// list as stale is not a confirmation of it (protocol section 5.14).
TEST_F(AgentCoreTest, AReplyNamingAListStaleShowsItStaleWithTheHubsAge) {
  start_with_svc_resolved();
  auto down = down_for(next_beat());
  down.stale = {proto::StaleList{key("svc"), 41'000}};
  core.on_message(clock.now(), 0, down);
  const auto r = core.peek(clock.now(), clock.wall_ms(), key("svc"));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(r->age, Duration{41'000});
  EXPECT_EQ(r->source, Source::kHub);
  EXPECT_EQ(core.held(clock.now(), key("svc"))->age, Duration{41'000});

  // The hub stood by it just now: served from the cache, marked stale, no query.
  const auto looked_up = core.lookup(clock.now(), clock.wall_ms(), key("svc"));
  ASSERT_TRUE(looked_up);
  EXPECT_TRUE(looked_up->stale);

  // The next reply that does not name it confirms it again.
  const auto beat = next_beat();  // moves the clock: before reading it below
  core.on_message(clock.now(), 0, down_for(beat));
  const auto fresh = core.peek(clock.now(), clock.wall_ms(), key("svc"));
  EXPECT_FALSE(fresh->stale);
  EXPECT_EQ(fresh->age, Duration{0});
}

TEST_F(AgentCoreTest, CacheListsNamesWhatTheCachedListHoldsWithoutUsingIt) {
  EXPECT_FALSE(core.cache_lists(key("svc"), "i1")) << "nothing cached yet";
  start_with_svc_resolved();
  core.on_message(clock.now(), 0, down_for(next_beat()));  // hub-a, incarnation 1, answers
  EXPECT_EQ(core.cache_lists(key("svc"), "i1"), std::optional<bool>(true));
  EXPECT_EQ(core.cache_lists(key("svc"), "i2"), std::optional<bool>(false));
  EXPECT_FALSE(core.cache_lists(key("other"), "i1"));
  core.on_message(clock.now(), 0,
                  push_of({key("svc"), 5, 8, proto::UpdateKind::kFull, {inst("i2", "b:1")}, {}}));
  EXPECT_EQ(core.cache_lists(key("svc"), "i1"), std::optional<bool>(false)) << "replaced";
  EXPECT_EQ(core.cache_lists(key("svc"), "i2"), std::optional<bool>(true));
}

TEST_F(AgentCoreTest, AStaleQueryReplyIsShownStaleEvenWhenItsAgeIsShort) {
  core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("svc"), id);
  proto::QueryReply reply{id, "hub-a", 1, key("svc"), true, 5, {inst("i1", "a:1")}};
  reply.stale = true;
  reply.age_ms = 1'500;  // past a short cross-tier TTL, within three of our intervals
  core.on_message(clock.now(), 0, reply);
  const auto r = core.peek(clock.now(), clock.wall_ms(), key("svc"));
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(r->age, Duration{1'500});
}

TEST_F(AgentCoreTest, AStaleListsClaimedAgeBeyondAnyClockIsBoundedNotWrapped) {
  start_with_svc_resolved();
  auto down = down_for(next_beat());
  down.stale = {proto::StaleList{key("svc"), ~std::uint64_t{0}}};
  core.on_message(clock.now(), 0, down);
  const auto r = core.peek(clock.now(), clock.wall_ms(), key("svc"));
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(r->age, kMaxAnswerAge);
}

TEST_F(AgentCoreTest, SnapshotVersionsAreDeclaredUnverifiedSoTheHubSendsWholeLists) {
  core.restore_snapshot({ServiceSnapshot{key("svc"), 3, clock.wall_ms(), {inst("i1", "a:1")}}},
                        clock.now());
  auto b = last_beat(core.start(clock.now()));
  ASSERT_EQ(b.uses.size(), 1u);
  EXPECT_EQ(b.uses[0].version, ~std::uint64_t{0});
}

TEST_F(AgentCoreTest, NothingIsSentOnceTheDeregisterIsAcknowledged) {
  core.add_registration(clock.now(), reg("a", "i1", "a:1"));
  core.start(clock.now());
  core.shutdown(clock.now());
  core.on_message(clock.now(), 0, proto::DeregisterAck{"agent-1", 2, 1});
  clock.advance(Duration{60'000});
  EXPECT_TRUE(core.on_timer(clock.now()).send.empty());
}

TEST_F(AgentCoreTest, QueryWithoutReplyTimesOut) {
  core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("svc"), id);
  clock.advance(Duration{2000});
  auto a = core.on_timer(clock.now());
  EXPECT_EQ(a.timed_out, std::vector<std::uint64_t>{id});
}

TEST_F(AgentCoreTest, ShutdownSendsOneDeregister) {
  core.add_registration(clock.now(), reg("a", "i1", "a:1"));
  core.add_registration(clock.now(), reg("b", "i2", "b:1"));
  core.start(clock.now());
  auto a = core.shutdown(clock.now());
  ASSERT_EQ(a.send.size(), 1u);
  EXPECT_TRUE(std::holds_alternative<proto::Deregister>(a.send[0].message));
  auto ack = core.on_message(clock.now(), 0, proto::DeregisterAck{"agent-1", 3, 2});
  EXPECT_TRUE(ack.deregistered);
}

TEST_F(AgentCoreTest, LateDownBeatFromAHubWeLeftIsIgnored) {
  core.start(clock.now());
  run_silent(clock.now() + Duration{7000});  // failed over to hub 1
  ASSERT_EQ(core.current_hub(), 1u);
  proto::DownBeat late;
  late.hub_id = "hub-0";
  late.hub_epoch = 1;
  late.node_id = "agent-1";
  late.updates.push_back({key("svc"), 0, 3, proto::UpdateKind::kFull, {inst("i1", "a:1")}, {}});
  core.pin(key("svc"));
  auto a = core.on_message(clock.now(), 0, late);
  EXPECT_TRUE(a.changed.empty());
}

TEST_F(AgentCoreTest, MovingToAnotherHubDeclaresNoVersionsSoListsComeWhole) {
  start_with_svc_resolved();
  auto b = next_beat();
  core.on_message(clock.now(), 0, down_for(b));
  b = next_beat();
  auto other = down_for(b);
  other.hub_id = "hub-b";  // e.g. a multi-homed agent answered by a different hub
  core.on_message(clock.now(), 0, other);
  b = next_beat();
  ASSERT_EQ(b.uses.size(), 1u);
  EXPECT_EQ(b.uses[0].version, ~std::uint64_t{0});
  EXPECT_EQ(core.lookup(clock.now(), 0, key("svc"))->instances.size(), 1u)
      << "the list is still served";
}

TEST_F(AgentCoreTest, QueryTheHubCannotAnswerEndsAtOnce) {
  core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("elsewhere"), id);
  auto out = core.on_message(
      clock.now(), 0, proto::ErrorReply{proto::ErrorCode::kUnavailable, "upper tier down", id});
  EXPECT_EQ(out.timed_out, std::vector<std::uint64_t>{id});
  EXPECT_TRUE(core.on_timer(clock.now() + Duration{5000}).timed_out.empty()) << "ended once";
}

TEST_F(AgentCoreTest, QueryRefusedForItsKeyEndsAtOnceAndTheRefusalIsKept) {
  core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("payroll"), id);
  const proto::ErrorReply refusal{proto::ErrorCode::kForbidden,
                                  "key web may not query service payroll (query scope)", id};
  auto out = core.on_message(clock.now(), 0, refusal);
  EXPECT_EQ(out.timed_out, std::vector<std::uint64_t>{id});
  EXPECT_EQ(out.refused, std::vector<proto::ErrorReply>{refusal});
  EXPECT_EQ(core.last_refusal(), refusal);
}

TEST_F(AgentCoreTest, RefusedBeatNeverEndsAQueryWhoseIdEqualsItsSeq) {
  auto start = core.start(clock.now());
  std::uint64_t id = 0;
  core.query(clock.now(), key("svc"), id);
  const auto seq = std::get<proto::UpBeat>(start.send.front().message).seq;
  ASSERT_NE(id, seq) << "query ids and beat seqs never meet";
  auto out = core.on_message(
      clock.now(), 0, proto::ErrorReply{proto::ErrorCode::kForbidden, "register scope", seq});
  EXPECT_TRUE(out.timed_out.empty());
  EXPECT_EQ(out.refused.size(), 1u);
}

// ---------------------------------------------------------------- counters

TEST_F(AgentCoreTest, CountersTellBeatsSentAnsweredMissedAndUnsent) {
  core.on_message(clock.now(), 0, down_for(last_beat(core.start(clock.now()))));
  next_beat();  // unanswered
  next_beat();  // the interval before it ended unanswered: a miss
  core.beat_not_sent(clock.now());
  const auto& c = core.counters();
  EXPECT_EQ(c.beats_sent, 3u);
  EXPECT_EQ(c.beat_replies, 1u);
  EXPECT_EQ(c.beats_missed, 1u);
  EXPECT_EQ(c.beats_unsent, 1u);
  EXPECT_EQ(c.beat_retries, 0u);
}

TEST_F(AgentCoreTest, ABeatResentForWantOfAReplyCountsAsARetry) {
  auto c = config();
  c.retries_per_beat = 3;
  c.reply_timeout = Duration{500};
  AgentCore retrying{c, 1};
  retrying.start(clock.now());
  const auto resent = retrying.on_timer(clock.now() + Duration{500});
  ASSERT_EQ(resent.send.size(), 1u);
  EXPECT_EQ(retrying.counters().beat_retries, 1u);
  EXPECT_EQ(retrying.counters().beats_sent, 2u);
}

TEST_F(AgentCoreTest, PushesAreCountedApartFromBeatReplies) {
  start_with_svc_resolved();
  update_at_next_beat({key("svc"), 5, 6, proto::UpdateKind::kDelta, {inst("i2", "b:1")}, {}});
  core.on_message(clock.now(), 0,
                  push_of({key("svc"), 6, 7, proto::UpdateKind::kDelta, {}, {"i2"}}));
  EXPECT_EQ(core.counters().pushes, 1u);
  EXPECT_EQ(core.counters().beat_replies, 1u);
}

TEST_F(AgentCoreTest, CountersTellHowEachFirstLookupEnded) {
  core.start(clock.now());
  const auto ask = [&](const std::string& service) {
    std::uint64_t id = 0;
    core.query(clock.now(), key(service), id);
    return id;
  };
  const auto found = ask("found"), missing = ask("missing"), refused = ask("payroll"),
             unavailable = ask("elsewhere");
  ask("silent");
  core.on_message(clock.now(), 0, proto::QueryReply{found, "hub-a", 1, key("found"), true, 5, {}});
  core.on_message(clock.now(), 0,
                  proto::QueryReply{missing, "hub-a", 1, key("missing"), false, 0, {}});
  core.on_message(clock.now(), 0,
                  proto::ErrorReply{proto::ErrorCode::kForbidden, "query scope", refused});
  core.on_message(
      clock.now(), 0,
      proto::ErrorReply{proto::ErrorCode::kUnavailable, "upper tier down", unavailable});
  core.on_timer(clock.now() + Duration{5000});  // past query_timeout: "silent" gives up
  const auto& c = core.counters();
  EXPECT_EQ(c.lookups_sent, 5u);
  EXPECT_EQ(c.lookups_answered, 1u);
  EXPECT_EQ(c.lookups_not_found, 1u);
  EXPECT_EQ(c.lookups_refused, 1u);
  EXPECT_EQ(c.lookups_unavailable, 1u);
  EXPECT_EQ(c.lookups_timed_out, 1u);
}

TEST_F(AgentCoreTest, FastFailReportsAreCountedAsTheyGoOut) {
  core.start(clock.now());
  core.report_failure(clock.now(), key("svc"), "a:1", proto::FailureKind::kTimeout);
  core.report_failure(clock.now(), key("svc"), "b:1", proto::FailureKind::kTimeout);
  EXPECT_EQ(core.counters().fast_fail_reports, 0u) << "batched, not sent yet";
  clock.advance(Duration{10});
  core.on_timer(clock.now());
  EXPECT_EQ(core.counters().fast_fail_reports, 1u) << "one report for both";
  EXPECT_EQ(core.report_counters().signals, 2u);
}

TEST_F(AgentCoreTest, CacheAgesNameTheOldestListAndCountTheStaleOnes) {
  EXPECT_FALSE(core.cache_ages(clock.now(), clock.wall_ms()).oldest) << "nothing cached";
  start_with_svc_resolved();
  clock.advance(Duration{1000});
  std::uint64_t id = 0;
  core.query(clock.now(), key("cut-off"), id);
  proto::QueryReply stale{id, "hub-a", 1, key("cut-off"), true, 3, {inst("i1", "c:1")}};
  stale.age_ms = 300;
  stale.stale = true;  // the hub's upper tier is unreachable
  core.on_message(clock.now(), 0, stale);

  auto ages = core.cache_ages(clock.now(), clock.wall_ms());
  EXPECT_EQ(ages.oldest, Duration{1000}) << "svc, confirmed before cut-off's 300 ms";
  EXPECT_EQ(ages.stale, 1u);

  clock.advance(kInterval * 3);  // no beat answered for three intervals
  ages = core.cache_ages(clock.now(), clock.wall_ms());
  EXPECT_EQ(ages.oldest, Duration{1000} + kInterval * 3);
  EXPECT_EQ(ages.stale, 2u);
}

// ---------------------------------------------------------------- multi-homing

class AgentCoreAllHubsTest : public AgentCoreTest {
 protected:
  AgentCoreConfig all_config() {
    auto c = config();
    c.hub_count = 2;
    c.hub_mode = HubMode::kAll;
    return c;
  }
  AgentCore multi{all_config(), /*rng_seed=*/1};

  std::map<std::size_t, proto::UpBeat> beats_by_hub(const AgentActions& a) {
    std::map<std::size_t, proto::UpBeat> by_hub;
    for (const auto& o : a.send)
      if (const auto* b = std::get_if<proto::UpBeat>(&o.message)) by_hub[o.hub] = *b;
    return by_hub;
  }
};

TEST_F(AgentCoreAllHubsTest, EveryHubGetsTheSetButOnlyTheCurrentOneTheUses) {
  multi.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  multi.pin(key("payments"));
  auto beats = beats_by_hub(multi.start(clock.now()));
  ASSERT_EQ(beats.size(), 2u);
  for (const auto& [hub, beat] : beats) {
    ASSERT_TRUE(beat.registrations.has_value()) << "hub " << hub;
    EXPECT_EQ(beat.digest, multi.digest());
  }
  EXPECT_EQ(beats[0].uses.size(), 1u);
  EXPECT_TRUE(beats[1].uses.empty()) << "versions are per hub: read from one";
}

TEST_F(AgentCoreAllHubsTest, AMirrorHubThatAcknowledgedTheSetGetsOnlyTheDigestAfterwards) {
  multi.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  auto beats = beats_by_hub(multi.start(clock.now()));
  multi.on_message(clock.now(), 1, down_for(beats[1]));
  clock.advance(kInterval * 2);
  beats = beats_by_hub(multi.on_timer(clock.now()));
  ASSERT_TRUE(beats.contains(1));
  EXPECT_FALSE(beats[1].registrations.has_value());

  // The mirror hub restarted and lost us: it asks, and the set goes again.
  multi.on_message(clock.now(), 1, down_for(beats[1], /*send_full=*/true));
  clock.advance(kInterval * 2);
  beats = beats_by_hub(multi.on_timer(clock.now()));
  EXPECT_TRUE(beats[1].registrations.has_value());
}

TEST_F(AgentCoreAllHubsTest, TheCurrentHubsReplyConfirmsTheGroupsAlthoughMirrorBeatsWentAfter) {
  multi.use_config(clock.now(), "orders");
  auto beats = beats_by_hub(multi.start(clock.now()));
  EXPECT_TRUE(beats[1].configs.empty()) << "config is read from one hub";
  auto down = down_for(beats[0]);
  down.config_updates.push_back(
      {"orders", 0, 7, proto::UpdateKind::kFull, {{"a", "1", {1, "hub-a", 7}}}, {}});
  multi.on_message(clock.now(), 0, down);
  clock.advance(kInterval * 2);
  beats = beats_by_hub(multi.on_timer(clock.now()));
  ASSERT_EQ(beats[0].configs, (std::vector<proto::ConfigUse>{{"orders", 7}}));
  multi.on_message(clock.now(), 1, down_for(beats[1]));
  multi.on_message(clock.now(), 0, down_for(beats[0]));
  EXPECT_EQ(multi.configs().find("orders")->confirmed_at, clock.now())
      << "the mirror beat sent after the current hub's must not take its place";
}

TEST_F(AgentCoreAllHubsTest, DeregisterGoesToEveryHubAndStopsOnlyWhenAllAcknowledged) {
  multi.add_registration(clock.now(), reg("svc", "i1", "a:1"));
  multi.start(clock.now());
  auto out = multi.shutdown(clock.now());
  ASSERT_EQ(out.send.size(), 2u);
  const auto seq = std::get<proto::Deregister>(out.send[0].message).seq;
  EXPECT_FALSE(
      multi.on_message(clock.now(), 0, proto::DeregisterAck{"agent-1", seq, 1}).deregistered);
  clock.advance(Duration{200});
  auto retry = multi.on_timer(clock.now());
  ASSERT_EQ(retry.send.size(), 1u) << "only the hub that has not acknowledged";
  EXPECT_EQ(retry.send[0].hub, 1u);
  EXPECT_TRUE(
      multi.on_message(clock.now(), 1, proto::DeregisterAck{"agent-1", seq, 1}).deregistered);
}

}  // namespace
}  // namespace cascade::agent

namespace cascade::agent {
namespace {

// A tier's uplink sends deltas (AgentCoreConfig::send_deltas). In a
// registration wave its changes come faster than the upper hub answers: the
// whole set went up with every change until the newest whole set was
// answered (each instance carried ~100 times at a 100 ms round trip). A model
// upper hub applies what arrives in order and checks the digest as HubCore
// does, answering send_full when it does not match.
class DeltaWaveTest : public ::testing::Test {
 protected:
  struct Counts {
    std::size_t whole_sets = 0;  // beats carrying the whole set
    std::size_t carried = 0;     // registrations in all beats
    std::size_t refused = 0;     // answered send_full
  };

  static AgentCoreConfig uplink_config(std::size_t hubs, std::size_t per_beat) {
    AgentCoreConfig c;
    c.node_id = "l1-hub";
    c.epoch = 3;
    c.hub_count = hubs;
    c.hub_mode = HubMode::kAll;  // as a tier's uplink beating to every upstream
    c.beat_interval = Duration{2000};
    c.send_deltas = true;
    c.change_delay = Duration{20};
    c.max_registrations_per_beat = per_beat;
    return c;
  }

  // Registers `count` instances one every `every`, removing every fifth one
  // again, against an upper hub answering after `round_trip`.
  Counts run_wave(Duration round_trip, Duration every, std::size_t count) {
    if (!started) sent(core.start(clock.now()), round_trip);
    started = true;
    MonoTime next_change = clock.now();
    std::size_t made = 0;
    const MonoTime end = clock.now() + every * static_cast<int>(count) + Duration{5000};
    while (clock.now() < end) {
      MonoTime next = std::min(core.next_deadline(), end);
      if (made < count) next = std::min(next, next_change);
      if (!in_flight.empty()) next = std::min(next, in_flight.begin()->first);
      clock.set(std::max(clock.now(), next));
      while (!in_flight.empty() && in_flight.begin()->first <= clock.now()) {
        const auto [hub, down] = in_flight.begin()->second;
        in_flight.erase(in_flight.begin());
        sent(core.on_message(clock.now(), hub, down), round_trip);
      }
      if (made < count && clock.now() >= next_change) {
        const auto id = "i" + std::to_string(made);
        sent(core.add_registration(clock.now(), reg("svc", id, "10.0.0.1:" + std::to_string(made))),
             round_trip);
        if (made % 5 == 4) sent(core.remove_registration(clock.now(), key("svc"), id), round_trip);
        ++made;
        next_change = clock.now() + every;
      }
      if (core.next_deadline() <= clock.now()) sent(core.on_timer(clock.now()), round_trip);
    }
    return counts;
  }

  using Set = std::map<proto::InstanceKey, proto::Registration>;
  Set mine() const {
    Set set;
    for (const auto& r : core.registrations())
      set[{r.service, r.instance.id}] = r;
    return set;
  }

  explicit DeltaWaveTest(std::size_t hubs = 1, std::size_t per_beat = 0)
      : core{uplink_config(hubs, per_beat), /*rng_seed=*/1} {}

  FakeClock clock;
  AgentCore core;
  std::map<std::size_t, Set> held;  // by hub: what each model hub holds
  std::multimap<MonoTime, std::pair<std::size_t, proto::DownBeat>> in_flight;
  Counts counts;
  bool started = false;
  std::size_t whole_sets_to_lose = 0;     // the network drops the next so many whole sets
  std::size_t middle_chunks_to_lose = 0;  // ... and so many delta chunks neither first nor last
  std::size_t middle_chunks_lost = 0;
  std::map<std::size_t, bool> in_burst;  // by hub: the last beat sent it said `more`
  std::size_t largest_beat = 0;          // registrations and removals in one beat, at most
  std::uint64_t mirror_epoch = 1;        // hub 1's incarnation

 private:
  // The hub applies a beat on arrival; the answer reaches the agent later.
  void sent(const AgentActions& actions, Duration round_trip) {
    for (const auto& out : actions.send) {
      const auto* beat = std::get_if<proto::UpBeat>(&out.message);
      if (beat == nullptr) continue;
      largest_beat = std::max(largest_beat, carried(*beat));
      if (beat->registrations && whole_sets_to_lose > 0) {
        --whole_sets_to_lose;
        continue;
      }
      const bool more = beat->delta && beat->delta->more;
      const bool middle = more && in_burst[out.hub];
      in_burst[out.hub] = more;
      if (middle && middle_chunks_to_lose > 0) {
        --middle_chunks_to_lose;
        ++middle_chunks_lost;
        continue;
      }
      proto::DownBeat down;
      down.hub_id = "l2";
      down.hub_epoch = out.hub == 1 ? mirror_epoch : 1;
      down.node_id = beat->node_id;
      down.ack_seq = beat->seq;
      down.lease_ms = 6000;
      down.send_full = !apply(held[out.hub], *beat);
      counts.refused += down.send_full ? 1 : 0;
      in_flight.emplace(clock.now() + round_trip, std::pair{out.hub, down});
    }
  }
  static std::size_t carried(const proto::UpBeat& beat) {
    std::size_t n = beat.registrations ? beat.registrations->size() : 0;
    if (beat.delta) n += beat.delta->upserts.size() + beat.delta->removed.size();
    return n;
  }
  bool apply(Set& set, const proto::UpBeat& beat) {
    if (beat.registrations) {
      ++counts.whole_sets;
      counts.carried += beat.registrations->size();
      set.clear();
      for (const auto& r : *beat.registrations)
        set[{r.service, r.instance.id}] = r;
    }
    if (beat.delta) {
      if (beat.delta->reset) {
        ++counts.whole_sets;
        set.clear();
      }
      counts.carried += beat.delta->upserts.size();
      for (const auto& r : beat.delta->upserts)
        set[{r.service, r.instance.id}] = r;
      for (const auto& k : beat.delta->removed)
        set.erase(k);
      if (beat.delta->more) return true;  // judged at the last chunk
    }
    proto::SetDigest digest;
    for (const auto& [k, r] : set)
      digest.add(r);
    return digest.value() == beat.digest;
  }
};

TEST_F(DeltaWaveTest, AWaveFasterThanTheAnswersSendsTheWholeSetOnceThenDeltas) {
  const auto wave = run_wave(Duration{500}, Duration{5}, 1000);
  EXPECT_EQ(wave.whole_sets, 1u) << "the whole set with every change until it is answered";
  EXPECT_EQ(wave.refused, 0u);
  EXPECT_EQ(held[0], mine()) << "the upper hub holds the set";
  EXPECT_EQ(mine().size(), 800u);
}

// Each delta still carries every change not yet answered: the carrying
// factor is the round trip over the beat spacing, not the wave's length.
TEST_F(DeltaWaveTest, ADeltaCarriesTheChangesNotYetAnswered) {
  const auto wave = run_wave(Duration{100}, Duration{5}, 1000);
  EXPECT_EQ(wave.whole_sets, 1u);
  EXPECT_LE(wave.carried, 8u * 1000) << "~100 ms of changes in each 20 ms beat";
}

// The whole set is no longer repeated until it is answered: when it is lost
// on the way, the next delta does not give the hub our digest and the hub's
// send_full brings the whole set again.
TEST_F(DeltaWaveTest, AWholeSetLostOnTheWayGoesAgainWhenTheHubRefusesTheNextDelta) {
  whole_sets_to_lose = 1;
  const auto wave = run_wave(Duration{100}, Duration{5}, 200);
  EXPECT_GE(wave.refused, 1u) << "the delta on top of the lost set";
  EXPECT_EQ(wave.whole_sets, 1u) << "received: the one sent again";
  EXPECT_EQ(held[0], mine()) << "the upper hub holds the set";
}

// Beating to every upstream (a tier's uplink in kAll mode), the other hubs
// took the whole set with every change, unchunked, until one answer matched a
// digest that kept moving: they take deltas as the current hub does.
class DeltaWaveToTwoHubsTest : public DeltaWaveTest {
 protected:
  DeltaWaveToTwoHubsTest() : DeltaWaveTest(2) {}
};

TEST_F(DeltaWaveToTwoHubsTest, EveryUpstreamTakesTheWholeSetOnceThenDeltas) {
  const auto wave = run_wave(Duration{100}, Duration{5}, 1000);
  EXPECT_EQ(wave.whole_sets, 2u) << "one to each hub";
  EXPECT_EQ(wave.refused, 0u);
  EXPECT_LE(wave.carried, 2u * 8 * 1000);
  EXPECT_EQ(held[0], mine());
  EXPECT_EQ(held[1], mine());
}

// A tier's set is larger than one frame may carry: every hub, mirrors too,
// takes it and its deltas in chunks of max_registrations_per_beat.
class ChunkedDeltaWaveToTwoHubsTest : public DeltaWaveTest {
 protected:
  ChunkedDeltaWaveToTwoHubsTest() : DeltaWaveTest(2, /*per_beat=*/50) {}
};

TEST_F(ChunkedDeltaWaveToTwoHubsTest, EveryUpstreamTakesTheSetInChunks) {
  run_wave(Duration{100}, Duration{5}, 1000);
  EXPECT_LE(largest_beat, 50u) << "a whole set or delta unchunked";
  EXPECT_EQ(held[0], mine());
  EXPECT_EQ(held[1], mine());
}

// A delta of more changes than a beat may carry goes in chunks, and the hub
// applies each as it comes. When one in the middle is lost, the hub applies
// the others and the last chunk's digest does not match what it holds: it
// answers send_full. That answer is to a burst the agent has already
// followed with newer ones, and each delta carries every change after the
// last one answered, the lost chunk's among them: the next burst heals the
// hub without a whole set.
class SmallChunksDeltaWaveTest : public DeltaWaveTest {
 protected:
  SmallChunksDeltaWaveTest() : DeltaWaveTest(1, /*per_beat=*/5) {}
};

TEST_F(SmallChunksDeltaWaveTest, AChunkLostInTheMiddleOfADeltaIsCarriedAgainByTheNextDelta) {
  middle_chunks_to_lose = 1;
  const auto wave = run_wave(Duration{100}, Duration{5}, 400);
  ASSERT_EQ(middle_chunks_lost, 1u) << "no delta went in three chunks or more";
  EXPECT_GE(wave.refused, 1u) << "the last chunk's digest did not match";
  EXPECT_EQ(wave.whole_sets, 1u) << "the first only: the next delta carried the lost changes";
  EXPECT_EQ(held[0], mine()) << "the upper hub holds the set";
}

TEST_F(ChunkedDeltaWaveToTwoHubsTest, ARestartedMirrorTakesTheWholeSetInChunks) {
  run_wave(Duration{100}, Duration{5}, 400);
  held[1].clear();  // the mirror restarted from an empty disk
  mirror_epoch = 2;
  largest_beat = 0;
  run_wave(Duration{100}, Duration{5}, 0);
  EXPECT_LE(largest_beat, 50u);
  EXPECT_EQ(held[1], mine()) << "the restarted mirror holds our set again";
}

}  // namespace
}  // namespace cascade::agent
