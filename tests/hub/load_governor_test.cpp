// The load governor alone (hub/load_governor.hpp): when it doubles and halves
// the stretch, fed with synthetic passes of the serving loop.
#include "cascade/hub/load_governor.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace cascade::hub {
namespace {

constexpr Duration kInterval{2000};
constexpr Duration kPass{10};
constexpr std::uint64_t kCapacityPerPass = 1000;

class LoadGovernorTest : public ::testing::Test {
 protected:
  MonoTime now{};
  LoadGovernor governor{LoadGovernorConfig{}, kInterval};

  std::uint64_t beats = 0;

  // Passes of 10 ms for `span`, busy `busy_share` of each, serving
  // `beats_per_pass`, each ending with frames queued or not.
  void run(Duration span, double busy_share, bool backlog, std::uint64_t beats_per_pass) {
    for (const auto until = now + span; now < until;) {
      now += kPass;
      beats += beats_per_pass;
      governor.on_pass(now,
                       std::chrono::duration_cast<std::chrono::microseconds>(kPass * busy_share),
                       backlog, beats);
    }
  }
  // Saturated, the hub serves 100,000 beats per second (its capacity).
  void saturated(Duration span) { run(span, 1.0, true, kCapacityPerPass); }
  // At `share` of that capacity.
  void loaded(Duration span, double share) {
    run(span, share, false, static_cast<std::uint64_t>(kCapacityPerPass * share));
  }
  void idle(Duration span) { loaded(span, 0.05); }
};

TEST_F(LoadGovernorTest, AnUnloadedHubGrantsNoInterval) {
  idle(Duration{10'000});
  EXPECT_EQ(governor.stretch(), 1u);
  EXPECT_EQ(governor.granted_interval(), Duration{0});
}

TEST_F(LoadGovernorTest, ALoopThatStaysSaturatedForTwoWindowsDoublesTheInterval) {
  saturated(Duration{390});
  EXPECT_EQ(governor.stretch(), 1u) << "one window is a burst";
  saturated(Duration{20});
  EXPECT_EQ(governor.stretch(), 2u);
  EXPECT_EQ(governor.granted_interval(), Duration{4000});
  EXPECT_EQ(governor.counters().stretched, 1u);
}

TEST_F(LoadGovernorTest, ABurstShorterThanTwoWindowsIsServedFromTheQueue) {
  for (int i = 0; i < 20; ++i) {
    saturated(Duration{200});
    idle(Duration{200});
  }
  EXPECT_EQ(governor.stretch(), 1u);
}

TEST_F(LoadGovernorTest, ALoopBusyAllTheTimeIsSaturatedEvenWhenEachPassEndsEmpty) {
  run(Duration{420}, 0.97, false, 900);
  EXPECT_EQ(governor.stretch(), 2u);
}

// Nodes take a new grant at their next beat, one old interval later at most:
// until then the load has not fallen, and doubling again would overshoot.
// Shedding empties the hub's queue (protocol section 5.18): passes end
// without a backlog and the loop is not busy all the time, yet the hub is
// refusing work. Every window with a frame shed is saturated.
TEST_F(LoadGovernorTest, ALoopThatShedsIsSaturatedThoughItsPassesEndEmpty) {
  std::uint64_t shed = 0;
  for (int pass = 0; pass < 41; ++pass) {
    now += kPass;
    beats += kCapacityPerPass / 2;
    shed += pass % 4 == 0 ? 1 : 0;
    governor.on_pass(now, std::chrono::microseconds{6000}, false, beats, shed);
  }
  EXPECT_EQ(governor.stretch(), 2u);
}

TEST_F(LoadGovernorTest, TheSameLoopWithoutSheddingIsNotSaturated) {
  loaded(Duration{410}, 0.6);
  EXPECT_EQ(governor.stretch(), 1u);
}

TEST_F(LoadGovernorTest, TheNextDoublingWaitsOneIntervalOfTheOldStretchForItsEffect) {
  saturated(Duration{400});
  ASSERT_EQ(governor.stretch(), 2u);
  saturated(kInterval - Duration{100});
  EXPECT_EQ(governor.stretch(), 2u);
  saturated(Duration{400});
  EXPECT_EQ(governor.stretch(), 4u);
  saturated(Duration{60'000});
  EXPECT_EQ(governor.stretch(), 8u) << "the default cap";
  EXPECT_EQ(governor.counters().stretched, 3u);
}

// Halving doubles the load: only a loop idle enough for that, for a whole
// granted interval after the last change took effect, gets it.
TEST_F(LoadGovernorTest, ACalmLoopHalvesTheStretchOneGrantedIntervalAtATime) {
  saturated(Duration{400});
  saturated(kInterval);
  ASSERT_EQ(governor.stretch(), 4u);
  // 4 -> 2: one old interval (4 s) for the change to settle, then a
  // granted interval (8 s) of calm; 2 -> 1: 8 s to settle, 4 s of calm.
  const auto calm_from = now;
  std::optional<Duration> at_two, at_one;
  while (now - calm_from < Duration{60'000}) {
    loaded(Duration{100}, 0.2);
    if (!at_two && governor.stretch() == 2) at_two = now - calm_from;
    if (!at_one && governor.stretch() == 1) at_one = now - calm_from;
  }
  ASSERT_TRUE(at_two && at_one);
  EXPECT_GE(*at_two, Duration{12'000});
  EXPECT_LE(*at_two, Duration{12'500});
  EXPECT_GE(*at_one - *at_two, Duration{12'000});
  EXPECT_LE(*at_one - *at_two, Duration{12'500});
  EXPECT_EQ(governor.counters().relaxed, 2u);
}

TEST_F(LoadGovernorTest, AHalvingNeedsAWholeGrantedIntervalOfCalm) {
  saturated(Duration{400});
  ASSERT_EQ(governor.stretch(), 2u);
  // Settled one old interval (2 s) after the change; then 4 s of calm.
  loaded(kInterval + Duration{3'500}, 0.2);
  EXPECT_EQ(governor.stretch(), 2u);
  loaded(Duration{1000}, 0.2);
  EXPECT_EQ(governor.stretch(), 1u);
}

// Between saturated and calm (the fleet at the new pace takes half the
// capacity), the stretch stays: halving it would saturate the loop again.
TEST_F(LoadGovernorTest, AFleetTakingHalfTheCapacityKeepsItsStretch) {
  saturated(Duration{400});
  ASSERT_EQ(governor.stretch(), 2u);
  loaded(Duration{120'000}, 0.5);
  EXPECT_EQ(governor.stretch(), 2u);
  EXPECT_EQ(governor.counters().relaxed, 0u);
}

// The loop's busy time misses what ZeroMQ's I/O thread and the rest of the
// machine spend on the load: a loop busy 30% of the time while serving
// half the beats it served saturated is not calm.
TEST_F(LoadGovernorTest, CalmIsJudgedByTheBeatsServedAgainstTheCapacityNotByBusyTimeAlone) {
  saturated(Duration{400});
  ASSERT_EQ(governor.stretch(), 2u);
  run(Duration{120'000}, 0.3, false, kCapacityPerPass / 2);
  EXPECT_EQ(governor.stretch(), 2u);
  run(Duration{120'000}, 0.3, false, kCapacityPerPass / 4);
  EXPECT_EQ(governor.stretch(), 1u);
}

// A fleet beating far faster on its own than the hub's interval comes back
// at many times the load when a halving shortens its grant: each halving it
// undoes is tried again after a calm twice as long.
TEST_F(LoadGovernorTest, AHalvingTheLoadUndoesIsTriedAgainAfterALongerCalmEachTime) {
  std::vector<MonoTime> halvings;
  for (int round = 0; round < 4; ++round) {
    saturated(Duration{400});
    ASSERT_EQ(governor.stretch(), 2u);
    const auto relaxed = governor.counters().relaxed;
    while (governor.counters().relaxed == relaxed)
      idle(Duration{100});
    halvings.push_back(now);
  }
  ASSERT_EQ(halvings.size(), 4u);
  for (std::size_t i = 2; i < halvings.size(); ++i)
    EXPECT_GT(halvings[i] - halvings[i - 1], (halvings[i - 1] - halvings[i - 2]) * 3 / 2)
        << "halving " << i;
}

// A halving that held shortens the wait again.
TEST_F(LoadGovernorTest, AHalvingThatHoldsBringsTheNextOneSooner) {
  saturated(Duration{400});
  while (governor.stretch() == 2)
    idle(Duration{100});
  saturated(Duration{400});  // undone: the next halving waits longer
  const auto held_from = now;
  while (governor.stretch() == 2)
    idle(Duration{100});
  const auto held_wait = now - held_from;
  idle(Duration{20'000});  // this one held
  saturated(Duration{400});
  const auto from = now;
  while (governor.stretch() == 2)
    idle(Duration{100});
  EXPECT_LT(now - from, held_wait);
}

// Saturated by queries, the hub served few beats: that is not its capacity
// for beats, and a loop that is nearly idle after the flood is calm.
TEST_F(LoadGovernorTest, ALoopSaturatedByOtherWorkComesDownOnceNearlyIdle) {
  run(Duration{400}, 1.0, true, 1);
  ASSERT_EQ(governor.stretch(), 2u);
  run(Duration{60'000}, 0.05, false, 100);
  EXPECT_EQ(governor.stretch(), 1u);
}

// A restarted hub resumes at the stretch its fleet holds; the first halving
// waits for every node to have beaten at it (one interval of 16 s) and then
// a granted interval of calm.
TEST_F(LoadGovernorTest, AResumedStretchIsHeldForAnIntervalOfItThenRelaxedWhenCalm) {
  governor.resume(now, 8);
  EXPECT_EQ(governor.stretch(), 8u);
  EXPECT_EQ(governor.granted_interval(), 8 * kInterval);
  idle(2 * 8 * kInterval - Duration{500});
  EXPECT_EQ(governor.stretch(), 8u);
  idle(Duration{1000});
  EXPECT_EQ(governor.stretch(), 4u);
}

TEST_F(LoadGovernorTest, AResumedStretchIsCappedAtTheConfiguredMaximum) {
  governor.resume(now, 64);
  EXPECT_EQ(governor.stretch(), 8u);
  governor.resume(now, 0);
  EXPECT_EQ(governor.stretch(), 1u);
}

TEST_F(LoadGovernorTest, AMaxStretchOfOneNeverSlowsTheFleet) {
  LoadGovernor off{LoadGovernorConfig{.max_stretch = 1}, kInterval};
  for (int i = 0; i < 1000; ++i) {
    now += kPass;
    off.on_pass(now, kPass, true, 0);
  }
  EXPECT_EQ(off.stretch(), 1u);
  EXPECT_EQ(off.granted_interval(), Duration{0});
}

}  // namespace
}  // namespace cascade::hub
