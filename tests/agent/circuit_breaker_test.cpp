#include "cascade/agent/circuit_breaker.hpp"

#include <gtest/gtest.h>

#include <stdexcept>

namespace cascade::agent {
namespace {

using std::chrono::seconds;

// Defaults: 10 x 1 s window, opens at 50% with >= 20 calls, open 5 s, 3 probes.
BreakerConfig defaults() {
  return BreakerConfig{};
}

void record_n(CircuitBreaker& b, MonoTime now, CallOutcome outcome, int n) {
  for (int i = 0; i < n; ++i)
    ASSERT_EQ(b.record(now, outcome), BreakerTransition::kNone) << "record " << i;
}

// An open breaker at `now`.
CircuitBreaker opened_breaker(MonoTime now, BreakerConfig config = defaults()) {
  CircuitBreaker b(config);
  for (std::uint32_t i = 0; i + 1 < config.min_requests_in_window; ++i)
    b.record(now, CallOutcome::kFailure);
  EXPECT_EQ(b.record(now, CallOutcome::kFailure), BreakerTransition::kOpened);
  return b;
}

// Waits out open_for (defaults: 5 s) from the opening and asks for a probe's slot.
bool probe_after_open_for(CircuitBreaker& b, FakeClock& clock) {
  clock.advance(defaults().open_for);
  return b.allow(clock.now());
}

// 9 failures, then 11 successes 5 s later: 9 of 20 failed, still closed.
CircuitBreaker nine_failures_then_eleven_successes(FakeClock& clock) {
  CircuitBreaker b(defaults());
  record_n(b, clock.now(), CallOutcome::kFailure, 9);
  clock.advance(seconds(5));
  record_n(b, clock.now(), CallOutcome::kSuccess, 11);
  return b;
}

TEST(CircuitBreaker, DoesNotOpenBelowTheMinimumVolumeEvenAtFullFailure) {
  FakeClock clock;
  CircuitBreaker b(defaults());
  record_n(b, clock.now(), CallOutcome::kFailure, 19);
  EXPECT_EQ(b.state(clock.now()), BreakerState::kClosed);
  EXPECT_TRUE(b.allow(clock.now()));
  // The 20th call reaches the volume: 20 of 20 failed.
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kFailure), BreakerTransition::kOpened);
  EXPECT_EQ(b.state(clock.now()), BreakerState::kOpen);
}

TEST(CircuitBreaker, OpensExactlyWhenTheFailureRateReachesTheThreshold) {
  FakeClock clock;
  CircuitBreaker b(defaults());
  record_n(b, clock.now(), CallOutcome::kSuccess, 11);
  record_n(b, clock.now(), CallOutcome::kFailure, 10);  // 10 of 21: 47.6%
  EXPECT_EQ(b.state(clock.now()), BreakerState::kClosed);
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kTimeout), BreakerTransition::kOpened);  // 11 of 22
}

TEST(CircuitBreaker, StaysClosedBelowTheThresholdWhateverTheVolume) {
  FakeClock clock;
  CircuitBreaker b(defaults());
  for (int i = 0; i < 200; ++i) {
    // 40% failures, spread: s f s f s ...
    const auto outcome = (i % 5 == 1 || i % 5 == 3) ? CallOutcome::kFailure : CallOutcome::kSuccess;
    ASSERT_EQ(b.record(clock.now(), outcome), BreakerTransition::kNone);
  }
  EXPECT_EQ(b.state(clock.now()), BreakerState::kClosed);
}

TEST(CircuitBreaker, TimeoutsCountAsFailures) {
  FakeClock clock;
  CircuitBreaker b(defaults());
  record_n(b, clock.now(), CallOutcome::kTimeout, 19);
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kTimeout), BreakerTransition::kOpened);
  EXPECT_EQ(b.stats(clock.now()).timeouts, 20u);
}

TEST(CircuitBreaker, OpenBreakerRefusesCallsAndCountsTheRejections) {
  FakeClock clock;
  CircuitBreaker b = opened_breaker(clock.now());
  clock.advance(Duration{4999});
  EXPECT_FALSE(b.allow(clock.now()));
  EXPECT_FALSE(b.allow(clock.now()));
  const BreakerStats s = b.stats(clock.now());
  EXPECT_EQ(s.state, BreakerState::kOpen);
  EXPECT_EQ(s.rejections, 2u);
  EXPECT_EQ(s.failures, 20u);
  EXPECT_EQ(s.times_opened, 1u);
}

TEST(CircuitBreaker, HalfOpenAfterOpenForAdmitsOnlyTheConfiguredProbes) {
  FakeClock clock;
  CircuitBreaker b = opened_breaker(clock.now());
  clock.advance(Duration{5000});
  EXPECT_EQ(b.state(clock.now()), BreakerState::kHalfOpen);
  EXPECT_TRUE(b.allow(clock.now()));
  EXPECT_TRUE(b.allow(clock.now()));
  EXPECT_TRUE(b.allow(clock.now()));
  EXPECT_EQ(b.stats(clock.now()).probes_in_flight, 3u);
  EXPECT_FALSE(b.allow(clock.now()));  // a fourth concurrent probe
  EXPECT_EQ(b.stats(clock.now()).rejections, 1u);
}

TEST(CircuitBreaker, ProbeSuccessClosesAndResetsTheWindow) {
  FakeClock clock;
  CircuitBreaker b = opened_breaker(clock.now());
  ASSERT_TRUE(probe_after_open_for(b, clock));
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kSuccess), BreakerTransition::kClosed);
  const BreakerStats s = b.stats(clock.now());
  EXPECT_EQ(s.state, BreakerState::kClosed);
  EXPECT_EQ(s.failures, 0u);  // the failures that opened it are gone
  EXPECT_EQ(s.successes, 0u);
  // Had the old 20 failures stayed, this one would reopen it at once.
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kFailure), BreakerTransition::kNone);
  EXPECT_TRUE(b.allow(clock.now()));
}

TEST(CircuitBreaker, ProbeFailureReopensForAFreshOpenFor) {
  FakeClock clock;
  CircuitBreaker b = opened_breaker(clock.now());
  ASSERT_TRUE(probe_after_open_for(b, clock));
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kFailure), BreakerTransition::kOpened);
  EXPECT_EQ(b.stats(clock.now()).times_opened, 2u);
  clock.advance(Duration{4999});
  EXPECT_FALSE(b.allow(clock.now()));  // counted from the reopening, not the first opening
  clock.advance(Duration{1});
  EXPECT_TRUE(b.allow(clock.now()));
  EXPECT_EQ(b.state(clock.now()), BreakerState::kHalfOpen);
}

TEST(CircuitBreaker, ProbeTimeoutReopens) {
  FakeClock clock;
  CircuitBreaker b = opened_breaker(clock.now());
  ASSERT_TRUE(probe_after_open_for(b, clock));
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kTimeout), BreakerTransition::kOpened);
  EXPECT_FALSE(b.allow(clock.now()));
}

TEST(CircuitBreaker, LateResultWhileOpenIsCountedButDoesNotShortenOpenFor) {
  FakeClock clock;
  CircuitBreaker b = opened_breaker(clock.now());
  clock.advance(Duration{1000});
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kSuccess), BreakerTransition::kNone);
  EXPECT_EQ(b.state(clock.now()), BreakerState::kOpen);
  EXPECT_EQ(b.stats(clock.now()).successes, 1u);
}

TEST(CircuitBreaker, ProbesThatNeverReportAreReclaimedAfterAnotherOpenFor) {
  FakeClock clock;
  CircuitBreaker b = opened_breaker(clock.now());
  clock.advance(Duration{5000});
  for (int i = 0; i < 3; ++i)
    ASSERT_TRUE(b.allow(clock.now()));
  clock.advance(Duration{4999});
  EXPECT_FALSE(b.allow(clock.now()));
  clock.advance(Duration{1});
  EXPECT_TRUE(b.allow(clock.now()));
}

TEST(CircuitBreaker, WindowSlidesOldFailuresOut) {
  FakeClock clock;
  CircuitBreaker b = nine_failures_then_eleven_successes(clock);
  clock.advance(seconds(5));  // the first 9 failures leave the window
  EXPECT_EQ(b.stats(clock.now()).failures, 0u);
  EXPECT_EQ(b.stats(clock.now()).successes, 11u);
  // 9 of 20 again; with the old failures it would be 18 of 29.
  record_n(b, clock.now(), CallOutcome::kFailure, 9);
  EXPECT_EQ(b.state(clock.now()), BreakerState::kClosed);
}

TEST(CircuitBreaker, FailuresInsideTheWindowAddUp) {
  FakeClock clock;
  CircuitBreaker b = nine_failures_then_eleven_successes(clock);
  clock.advance(Duration{4999});                       // the first bucket is still in the window
  record_n(b, clock.now(), CallOutcome::kFailure, 1);  // 10 of 21
  EXPECT_EQ(b.record(clock.now(), CallOutcome::kFailure), BreakerTransition::kOpened);  // 11 of 22
}

TEST(CircuitBreaker, BadConfigIsRefusedWithAClearMessage) {
  BreakerConfig c;
  c.failure_rate_to_open = 1.5;
  EXPECT_NE(check_breaker_config(c).find("failure_rate_to_open"), std::string::npos);
  EXPECT_THROW(CircuitBreaker{c}, std::invalid_argument);
  c = BreakerConfig{};
  c.buckets = 0;
  EXPECT_NE(check_breaker_config(c).find("buckets"), std::string::npos);
  c = BreakerConfig{};
  c.half_open_probes = 0;
  EXPECT_NE(check_breaker_config(c).find("half_open_probes"), std::string::npos);
  c = BreakerConfig{};
  c.open_for = Duration{0};
  EXPECT_NE(check_breaker_config(c).find("open_for"), std::string::npos);
  EXPECT_EQ(check_breaker_config(BreakerConfig{}), "");
}

TEST(BreakerSet, AddressesHaveIndependentBreakers) {
  FakeClock clock;
  BreakerSet set(BreakerSetConfig{});
  for (int i = 0; i < 20; ++i)
    set.record("bad:1", clock.now(), CallOutcome::kFailure);
  set.record("good:1", clock.now(), CallOutcome::kSuccess);
  EXPECT_FALSE(set.allow("bad:1", clock.now()));
  EXPECT_TRUE(set.allow("good:1", clock.now()));
  const auto all = set.all(clock.now());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all.at("bad:1").state, BreakerState::kOpen);
  EXPECT_EQ(all.at("good:1").state, BreakerState::kClosed);
  EXPECT_EQ(set.stats("unknown:1", clock.now()).state, BreakerState::kClosed);
}

TEST(BreakerSet, ForgetsAddressesNotSeenForForgetAfter) {
  FakeClock clock;
  BreakerSetConfig config;
  config.forget_after = std::chrono::minutes(10);
  BreakerSet set(config);
  set.allow("old:1", clock.now());
  clock.advance(std::chrono::minutes(6));
  set.allow("recent:1", clock.now());
  clock.advance(std::chrono::minutes(5));  // old: 11 min idle; recent: 5 min
  set.forget_idle(clock.now());
  EXPECT_EQ(set.size(), 1u);
  EXPECT_EQ(set.all(clock.now()).count("recent:1"), 1u);
}

TEST(BreakerSet, CensusCountsBreakersByStateAndKeepsTheTransitionsOfForgottenOnes) {
  FakeClock clock;
  BreakerSet set(BreakerSetConfig{});
  for (int i = 0; i < 20; ++i)
    set.record("bad:1", clock.now(), CallOutcome::kFailure);
  set.record("good:1", clock.now(), CallOutcome::kSuccess);
  auto census = set.census(clock.now());
  EXPECT_EQ(census.closed, 1u);
  EXPECT_EQ(census.open, 1u);
  EXPECT_EQ(census.half_open, 0u);
  EXPECT_EQ(census.transitions.opened, 1u);

  clock.advance(defaults().open_for);
  census = set.census(clock.now());
  EXPECT_EQ(census.half_open, 1u) << "half-open as soon as open_for has passed";
  EXPECT_EQ(census.transitions.half_opened, 0u) << "counted when the breaker next sees a call";
  ASSERT_TRUE(set.allow("bad:1", clock.now()));  // the probe
  set.record("bad:1", clock.now(), CallOutcome::kSuccess);
  census = set.census(clock.now());
  EXPECT_EQ(census.closed, 2u);
  EXPECT_EQ(census.transitions.half_opened, 1u);
  EXPECT_EQ(census.transitions.closed, 1u);

  clock.advance(std::chrono::minutes(11));
  set.forget_idle(clock.now());
  census = set.census(clock.now());
  EXPECT_EQ(census.closed + census.open + census.half_open, 0u);
  EXPECT_EQ(census.transitions.opened, 1u) << "a counter never goes down";
  EXPECT_EQ(census.transitions.half_opened, 1u);
  EXPECT_EQ(census.transitions.closed, 1u);
}

TEST(BreakerSet, BadForgetAfterIsRefused) {
  BreakerSetConfig config;
  config.forget_after = Duration{0};
  EXPECT_NE(check_breaker_set_config(config).find("forget_after"), std::string::npos);
  EXPECT_THROW(BreakerSet{config}, std::invalid_argument);
}

}  // namespace
}  // namespace cascade::agent
