#include "cascade/agent/caller.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <future>
#include <memory>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "cascade/agent/latency_tracker.hpp"

namespace cascade::agent {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

proto::Instance inst(const std::string& name) {
  proto::Instance i;
  i.id = name;
  i.address = name + ":80";
  return i;
}

// ---- LatencyTracker ----

LatencyConfig latency_config(std::uint32_t min_samples) {
  LatencyConfig c;
  c.min_samples = min_samples;
  return c;
}

TEST(LatencyTracker, NoPercentileUntilTheMinimumSampleCount) {
  FakeClock clock;
  LatencyTracker t(latency_config(20));
  for (int i = 0; i < 19; ++i)
    t.record(clock.now(), milliseconds(10));
  EXPECT_FALSE(t.percentile(clock.now(), 0.9));
  t.record(clock.now(), milliseconds(10));
  EXPECT_TRUE(t.percentile(clock.now(), 0.9));
}

TEST(LatencyTracker, PercentileIsAtOrAboveTheTrueValueAndWithinTheBinWidth) {
  FakeClock clock;
  LatencyTracker t(latency_config(20));
  for (int ms = 1; ms <= 1000; ++ms)
    t.record(clock.now(), milliseconds(ms));
  for (double p : {0.5, 0.9, 0.99}) {
    const auto truth = microseconds(std::lround(p * 1000) * 1000);
    const auto got = *t.percentile(clock.now(), p);
    EXPECT_GE(got, truth) << p;
    EXPECT_LE(got.count(), static_cast<std::int64_t>(static_cast<double>(truth.count()) * 1.125))
        << p;
  }
}

TEST(LatencyTracker, EveryBinBoundsItsValuesWithin12Point5Percent) {
  for (std::uint64_t v = 0; v < (std::uint64_t{1} << 36); v = v * 3 / 2 + 1) {
    const std::uint64_t upper = LatencyTracker::bin_upper_bound(LatencyTracker::bin_of(v));
    ASSERT_GE(upper, v);
    ASSERT_LE(static_cast<double>(upper), static_cast<double>(v) * 1.125 + 1) << v;
  }
}

TEST(LatencyTracker, OldSamplesDecayOutOfTheWindow) {
  FakeClock clock;
  LatencyTracker t(latency_config(20));  // 6 x 10 s
  for (int i = 0; i < 50; ++i)
    t.record(clock.now(), milliseconds(500));
  clock.advance(std::chrono::seconds(30));
  for (int i = 0; i < 50; ++i)
    t.record(clock.now(), milliseconds(5));
  EXPECT_GE(*t.percentile(clock.now(), 0.9), milliseconds(500));  // half the window is slow
  clock.advance(std::chrono::seconds(30));                        // the slow half leaves
  EXPECT_EQ(t.samples(clock.now()), 50u);
  EXPECT_LT(*t.percentile(clock.now(), 0.9), milliseconds(6));
  clock.advance(std::chrono::seconds(30));
  EXPECT_FALSE(t.percentile(clock.now(), 0.9));  // nothing recent: no backups
}

// ---- CallSession, with a scripted environment ----

class FakeEnv final : public CallEnv {
 public:
  std::vector<proto::Instance> instances{inst("a"), inst("b"), inst("c")};
  std::set<std::string> refused;  // breakers that say no
  int extras_left = 100;
  int workers_free = 8;
  int extras_asked = 0;
  std::vector<std::vector<std::string>> excludes_seen;

  bool reserve_worker() override {
    if (workers_free == 0) return false;
    --workers_free;
    return true;
  }
  void release_worker() override { ++workers_free; }
  bool try_spend_extra(MonoTime) override {
    ++extras_asked;
    if (extras_left == 0) return false;
    --extras_left;
    return true;
  }
  std::optional<proto::Instance> pick(const std::vector<std::string>& exclude) override {
    excludes_seen.push_back(exclude);
    for (const auto& i : instances)
      if (std::find(exclude.begin(), exclude.end(), i.address) == exclude.end()) return i;
    return std::nullopt;
  }
  bool admit(const std::string& address, MonoTime) override { return !refused.contains(address); }
};

CallOptions idempotent_options() {
  CallOptions o;
  o.idempotent = true;
  o.timeout = Duration{1000};
  return o;
}

// One call's session, started now, over a fake clock and a scripted environment.
struct SessionRun {
  FakeClock clock;
  FakeEnv env;
  CallSession session;

  SessionRun(const CallOptions& options, std::optional<Duration> backup_delay)
      : session(options, clock.now(), backup_delay) {}

  CallStep next() { return session.next(clock.now(), env); }
  // next(), which must order an attempt.
  CallStep expect_start() {
    CallStep step = next();
    EXPECT_EQ(step.kind, CallStep::Kind::kStart);
    return step;
  }
  // Orders the first attempt and ends it with `outcome` now: the step after.
  CallStep after_first(AttemptOutcome outcome) {
    const CallStep first = expect_start();
    session.finished(first.attempt.id, outcome);
    return next();
  }
};

// The call is over after its first attempt, which ended with `outcome`.
::testing::AssertionResult done_after_one_attempt(const CallStep& step, AttemptOutcome outcome) {
  if (step.kind != CallStep::Kind::kDone) return ::testing::AssertionFailure() << "not done";
  if (step.result.outcome != outcome)
    return ::testing::AssertionFailure() << "ended " << to_string(step.result.outcome);
  if (step.result.attempts != 1)
    return ::testing::AssertionFailure() << step.result.attempts << " attempts";
  return ::testing::AssertionSuccess();
}

TEST(CallSession, NonIdempotentCallIsNeverRetried) {
  SessionRun run(CallOptions{}, Duration{10});  // idempotent = false, max_retries = 2
  const CallStep first = run.expect_start();
  EXPECT_FALSE(first.attempt.on_worker);  // no backup for it either: runs inline
  run.session.finished(first.attempt.id, AttemptOutcome::kConnectionError);
  EXPECT_TRUE(done_after_one_attempt(run.next(), AttemptOutcome::kConnectionError));
  EXPECT_EQ(run.env.extras_asked, 0);
}

TEST(CallSession, RetriesAvoidAddressesAlreadyTriedInThisCall) {
  SessionRun run(idempotent_options(), std::nullopt);
  std::vector<std::string> tried;
  for (int i = 0; i < 3; ++i) {
    const CallStep step = run.expect_start();
    EXPECT_EQ(step.attempt.kind, i == 0 ? AttemptKind::kPrimary : AttemptKind::kRetry);
    tried.push_back(step.attempt.instance.address);
    run.session.finished(step.attempt.id, AttemptOutcome::kOtherSystemError);
  }
  EXPECT_EQ(tried, (std::vector<std::string>{"a:80", "b:80", "c:80"}));
  EXPECT_EQ(run.env.excludes_seen.back(), (std::vector<std::string>{"a:80", "b:80"}));
  const CallStep done = run.next();  // max_retries = 2 reached
  ASSERT_EQ(done.kind, CallStep::Kind::kDone);
  EXPECT_EQ(done.result.attempts, 3u);
  EXPECT_EQ(done.result.retries, 2u);
  EXPECT_EQ(done.result.instance->address, "c:80");
}

TEST(CallSession, RetryEndsTheCallWhenEveryAddressWasTried) {
  SessionRun run(idempotent_options(), std::nullopt);
  run.env.instances = {inst("a")};
  EXPECT_TRUE(
      done_after_one_attempt(run.after_first(AttemptOutcome::kTimeout), AttemptOutcome::kTimeout));
}

TEST(CallSession, BusinessErrorIsNeverRetried) {
  SessionRun run(idempotent_options(), std::nullopt);
  EXPECT_TRUE(done_after_one_attempt(run.after_first(AttemptOutcome::kBusinessError),
                                     AttemptOutcome::kBusinessError));
  EXPECT_EQ(run.env.extras_asked, 0);
}

TEST(CallSession, RetryIsDroppedWhenTheBudgetRefuses) {
  SessionRun run(idempotent_options(), std::nullopt);
  run.env.extras_left = 0;
  const CallStep done = run.after_first(AttemptOutcome::kConnectionError);
  ASSERT_EQ(done.kind, CallStep::Kind::kDone);
  EXPECT_EQ(done.result.attempts, 1u);
  EXPECT_EQ(run.session.counts().retries_denied_by_budget, 1u);
  EXPECT_EQ(run.env.excludes_seen.size(), 1u);  // no pick for the refused retry
}

TEST(CallSession, NoRetryAfterTheDeadline) {
  SessionRun run(idempotent_options(), std::nullopt);
  const CallStep first = run.expect_start();
  run.clock.advance(Duration{1000});
  run.session.finished(first.attempt.id, AttemptOutcome::kTimeout);
  EXPECT_EQ(run.next().kind, CallStep::Kind::kDone);
  EXPECT_EQ(run.env.extras_asked, 0);
}

TEST(CallSession, AddressesRefusedByTheirBreakerAreSkipped) {
  SessionRun run(CallOptions{}, std::nullopt);
  run.env.refused = {"a:80"};
  const CallStep first = run.expect_start();
  EXPECT_EQ(first.attempt.instance.address, "b:80");
  EXPECT_EQ(run.session.counts().breaker_skips, 1u);
  EXPECT_EQ(run.env.excludes_seen, (std::vector<std::vector<std::string>>{{}, {"a:80"}}));
}

TEST(CallSession, NoInstanceWhenEveryBreakerRefuses) {
  SessionRun run(CallOptions{}, std::nullopt);
  run.env.refused = {"a:80", "b:80", "c:80"};
  const CallStep done = run.next();
  ASSERT_EQ(done.kind, CallStep::Kind::kDone);
  EXPECT_TRUE(done.result.no_instance);
  EXPECT_EQ(done.result.attempts, 0u);
  EXPECT_FALSE(done.result.instance);
}

TEST(CallSession, ACallWhoseEveryPickWasRefusedByItsBreakerEndsAllBroken) {
  SessionRun broken(CallOptions{}, std::nullopt);
  broken.env.refused = {"a:80", "b:80", "c:80"};
  EXPECT_EQ(call_end(broken.next().result, broken.session.counts()), CallEnd::kAllBroken);
  SessionRun empty(CallOptions{}, std::nullopt);
  empty.env.instances.clear();
  EXPECT_EQ(call_end(empty.next().result, empty.session.counts()), CallEnd::kNoInstance);
}

TEST(CallSession, BackupIsSentOnlyOnceThePrimaryHasRunForTheDelay) {
  SessionRun run(idempotent_options(), Duration{50});
  const MonoTime start = run.clock.now();
  const CallStep primary = run.expect_start();
  EXPECT_TRUE(primary.attempt.on_worker);  // the caller's thread must stay free
  run.clock.advance(Duration{49});
  const CallStep wait = run.next();
  ASSERT_EQ(wait.kind, CallStep::Kind::kWait);
  EXPECT_EQ(wait.wake_at, start + Duration{50});
  EXPECT_EQ(run.env.extras_asked, 0);
  run.clock.advance(Duration{1});
  const CallStep backup = run.expect_start();
  EXPECT_EQ(backup.attempt.kind, AttemptKind::kBackup);
  EXPECT_TRUE(backup.attempt.on_worker);
  EXPECT_EQ(backup.attempt.instance.address, "b:80");  // another address than the primary's
  EXPECT_EQ(run.env.extras_asked, 1);
  // Only one backup: now both run, the session waits for the deadline.
  const CallStep after = run.next();
  ASSERT_EQ(after.kind, CallStep::Kind::kWait);
  EXPECT_EQ(after.wake_at, start + Duration{1000});
}

TEST(CallSession, BackupIsNotSentWhenTheBudgetRefuses) {
  SessionRun run(idempotent_options(), Duration{50});
  run.env.extras_left = 0;
  run.expect_start();
  run.clock.advance(Duration{50});
  const CallStep step = run.next();
  EXPECT_EQ(step.kind, CallStep::Kind::kWait);
  EXPECT_EQ(run.session.counts().backups_denied_by_budget, 1u);
  EXPECT_EQ(run.env.workers_free, 7);  // the backup's worker was given back
  run.clock.advance(Duration{10});
  run.next();
  EXPECT_EQ(run.env.extras_asked, 1);  // asked once, not at every wake-up
}

TEST(CallSession, PrimaryFinishingBeforeTheDelayGetsNoBackup) {
  SessionRun run(idempotent_options(), Duration{50});
  const CallStep primary = run.expect_start();
  run.clock.advance(Duration{20});
  run.session.finished(primary.attempt.id, AttemptOutcome::kOk);
  run.clock.advance(Duration{40});
  const CallStep done = run.next();
  ASSERT_EQ(done.kind, CallStep::Kind::kDone);
  EXPECT_EQ(done.result.backups, 0u);
  EXPECT_EQ(run.env.extras_asked, 0);
}

TEST(CallSession, NoBackupWithoutADelayOrForANonIdempotentCall) {
  SessionRun no_samples(idempotent_options(), std::nullopt);
  EXPECT_FALSE(no_samples.expect_start().attempt.on_worker);
  SessionRun not_idempotent(CallOptions{}, Duration{50});
  EXPECT_FALSE(not_idempotent.expect_start().attempt.on_worker);
  CallOptions off = idempotent_options();
  off.backup_after_percentile.reset();
  SessionRun disabled(off, Duration{50});
  EXPECT_FALSE(disabled.expect_start().attempt.on_worker);
}

TEST(CallSession, WithoutAFreeWorkerThePrimaryRunsInlineAndGetsNoBackup) {
  SessionRun run(idempotent_options(), Duration{50});
  run.env.workers_free = 0;
  EXPECT_FALSE(run.expect_start().attempt.on_worker);
  EXPECT_EQ(run.session.counts().backups_without_worker, 1u);
}

// A session whose primary has run 50 ms and got its backup: {primary, backup}.
struct WithBackup : SessionRun {
  WithBackup() : SessionRun(idempotent_options(), Duration{50}) {
    primary = expect_start();
    clock.advance(Duration{50});
    backup = expect_start();
  }
  CallStep primary{};
  CallStep backup{};
};

TEST(CallSession, FirstSuccessWinsOverTheSlowerPrimary) {
  WithBackup run;
  run.clock.advance(Duration{5});
  run.session.finished(run.backup.attempt.id, AttemptOutcome::kOk);
  const CallStep done = run.next();
  ASSERT_EQ(done.kind, CallStep::Kind::kDone);  // without waiting for the primary
  EXPECT_EQ(done.result.outcome, AttemptOutcome::kOk);
  EXPECT_EQ(done.result.instance->address, "b:80");
  EXPECT_EQ(done.result.attempts, 2u);
  EXPECT_EQ(done.result.backups, 1u);
  EXPECT_EQ(done.result.latency, milliseconds(55));
  run.session.finished(run.primary.attempt.id, AttemptOutcome::kOk);  // late: changes nothing
  EXPECT_EQ(run.next().result.instance->address, "b:80");
}

TEST(CallSession, FailedPrimaryWaitsForItsRunningBackupInsteadOfRetrying) {
  WithBackup run;
  run.session.finished(run.primary.attempt.id, AttemptOutcome::kConnectionError);
  EXPECT_EQ(run.next().kind, CallStep::Kind::kWait);
  run.session.finished(run.backup.attempt.id, AttemptOutcome::kOk);
  const CallStep done = run.next();
  ASSERT_EQ(done.kind, CallStep::Kind::kDone);
  EXPECT_EQ(done.result.outcome, AttemptOutcome::kOk);
  EXPECT_EQ(done.result.retries, 0u);
}

TEST(CallSession, BothFailedThenARetryGoesToAThirdAddress) {
  WithBackup run;
  run.session.finished(run.primary.attempt.id, AttemptOutcome::kTimeout);
  run.session.finished(run.backup.attempt.id, AttemptOutcome::kOtherSystemError);
  const CallStep retry = run.expect_start();
  EXPECT_EQ(retry.attempt.kind, AttemptKind::kRetry);
  EXPECT_EQ(retry.attempt.instance.address, "c:80");
  EXPECT_FALSE(retry.attempt.on_worker);  // only the primary gets a backup
}

TEST(CallSession, DeadlinePassingWhileAnAttemptRunsEndsTheCallAsATimeout) {
  WithBackup run;
  run.clock.advance(Duration{950});
  const CallStep done = run.next();
  ASSERT_EQ(done.kind, CallStep::Kind::kDone);
  EXPECT_EQ(done.result.outcome, AttemptOutcome::kTimeout);
  EXPECT_EQ(done.result.instance->address, "a:80");
}

// ---- CallerCore ----

proto::ServiceKey svc() {
  return proto::ServiceKey{"payments", "default"};
}

CallerConfig small_config() {
  CallerConfig c;
  c.latency.min_samples = 20;
  c.breakers.breaker.min_requests_in_window = 4;
  c.worker_threads = 4;
  return c;
}

// An attempt of a call to svc() at `address`, ended at `now` after `latency`.
BreakerTransition record(CallerCore& core, MonoTime now, const std::string& address,
                         AttemptOutcome outcome, microseconds latency = milliseconds(1),
                         bool business_errors_count = false) {
  return core.record_attempt(svc(), address, outcome, business_errors_count, latency, now);
}

TEST(CallerCore, BackupDelayIsTheServicesLatencyPercentileOnceThereAreEnoughSamples) {
  FakeClock clock;
  CallerCore core(small_config());
  const CallOptions options = idempotent_options();
  core.begin_call(svc(), clock.now());
  for (int i = 0; i < 19; ++i)
    record(core, clock.now(), "a:80", AttemptOutcome::kOk, milliseconds(40));
  EXPECT_FALSE(core.backup_delay(svc(), options, clock.now()));
  record(core, clock.now(), "a:80", AttemptOutcome::kBusinessError, milliseconds(40));
  const auto delay = core.backup_delay(svc(), options, clock.now());
  ASSERT_TRUE(delay);
  EXPECT_GE(*delay, Duration{40});
  EXPECT_LE(*delay, Duration{45});
  EXPECT_FALSE(core.backup_delay(svc(), CallOptions{}, clock.now()));  // not idempotent
  CallOptions short_timeout = options;
  short_timeout.timeout = *delay;
  EXPECT_FALSE(core.backup_delay(svc(), short_timeout, clock.now()));  // no time for it
}

TEST(CallerCore, FailuresDoNotFeedTheLatencyPercentile) {
  FakeClock clock;
  CallerCore core(small_config());
  core.begin_call(svc(), clock.now());
  for (int i = 0; i < 30; ++i)
    record(core, clock.now(), "a:80", AttemptOutcome::kConnectionError);
  EXPECT_EQ(core.stats(svc(), clock.now()).latency_samples, 0u);
}

TEST(CallerCore, AttemptsOpenTheAddressBreakerAndSayWhen) {
  FakeClock clock;
  CallerCore core(small_config());
  for (int i = 0; i < 3; ++i)
    EXPECT_EQ(record(core, clock.now(), "a:80", AttemptOutcome::kConnectionError),
              BreakerTransition::kNone);
  EXPECT_EQ(record(core, clock.now(), "a:80", AttemptOutcome::kTimeout),
            BreakerTransition::kOpened);
  EXPECT_FALSE(core.admit("a:80", clock.now()));
  EXPECT_EQ(core.breaker("a:80", clock.now()).state, BreakerState::kOpen);
  EXPECT_EQ(core.breakers(clock.now()).size(), 1u);
}

TEST(CallerCore, BusinessErrorsCountInTheBreakerOnlyWhenAsked) {
  FakeClock clock;
  CallerCore core(small_config());
  for (int i = 0; i < 10; ++i)
    record(core, clock.now(), "a:80", AttemptOutcome::kBusinessError, milliseconds(1), false);
  EXPECT_EQ(core.breaker("a:80", clock.now()).state, BreakerState::kClosed);
  for (int i = 0; i < 10; ++i)
    record(core, clock.now(), "b:80", AttemptOutcome::kBusinessError, milliseconds(1), true);
  EXPECT_EQ(core.breaker("b:80", clock.now()).state, BreakerState::kOpen);
}

TEST(CallerCore, BadConfigAndOptionsAreRefusedWithAClearMessage) {
  CallerConfig c;
  c.budget.extra_ratio = -1;
  EXPECT_NE(check_caller_config(c).find("extra_ratio"), std::string::npos);
  EXPECT_THROW(CallerCore{c}, std::invalid_argument);
  c = CallerConfig{};
  c.latency.min_samples = 0;
  EXPECT_NE(check_caller_config(c).find("min_samples"), std::string::npos);
  CallOptions o;
  o.backup_after_percentile = 90;  // a percent, not a fraction
  EXPECT_NE(check_call_options(o).find("backup_after_percentile"), std::string::npos);
  o = CallOptions{};
  o.timeout = Duration{0};
  EXPECT_NE(check_call_options(o).find("timeout"), std::string::npos);
}

TEST(CallerCore, TotalsCountEveryCallByResultAndOutliveForgottenServices) {
  FakeClock clock;
  CallerCore core(small_config());
  const proto::ServiceKey other{"ledger", "default"};
  CallResult ok;
  ok.outcome = AttemptOutcome::kOk;
  CallCounts retried_once;
  retried_once.attempts = 2;
  retried_once.retries = 1;
  retried_once.backups_denied_by_budget = 1;
  CallResult no_instance;
  no_instance.no_instance = true;
  CallCounts all_refused;
  all_refused.breaker_skips = 2;
  core.begin_call(svc(), clock.now());
  core.end_call(svc(), retried_once, ok);
  core.begin_call(other, clock.now());
  core.end_call(other, all_refused, no_instance);
  core.begin_call(other, clock.now());
  core.end_call(other, CallCounts{}, no_instance);

  clock.advance(small_config().forget_service_after * 2);
  core.begin_call(other, clock.now());  // sweeps svc() away
  EXPECT_EQ(core.stats(svc(), clock.now()).calls, 0u) << "forgotten";
  const CallerTotals& totals = core.totals();
  EXPECT_EQ(totals.calls_ended(CallEnd::kOk), 1u);
  EXPECT_EQ(totals.calls_ended(CallEnd::kAllBroken), 1u);
  EXPECT_EQ(totals.calls_ended(CallEnd::kNoInstance), 1u);
  EXPECT_EQ(totals.attempts, 2u);
  EXPECT_EQ(totals.retries, 1u);
  EXPECT_EQ(totals.backups_denied_by_budget, 1u);
  EXPECT_EQ(totals.breaker_skips, 2u);
}

// A session driven over a real core: the budget and the latencies are the core's.
class CoreEnv final : public CallEnv {
 public:
  explicit CoreEnv(CallerCore& core) : core_(core) {}
  bool reserve_worker() override { return true; }
  void release_worker() override {}
  bool try_spend_extra(MonoTime now) override { return core_.try_spend_extra(svc(), now); }
  std::optional<proto::Instance> pick(const std::vector<std::string>& exclude) override {
    for (const auto& i : {inst("a"), inst("b")})
      if (std::find(exclude.begin(), exclude.end(), i.address) == exclude.end()) return i;
    return std::nullopt;
  }
  bool admit(const std::string& address, MonoTime now) override {
    return core_.admit(address, now);
  }

 private:
  CallerCore& core_;
};

TEST(CallerCore, BackupsStopWhenTheServiceBudgetIsSpent) {
  FakeClock clock;
  CallerConfig config = small_config();
  config.budget.min_extra_per_window = 0;  // strictly 15% of the primaries
  CallerCore core(config);
  CoreEnv env(core);
  for (int i = 0; i < 20; ++i)
    record(core, clock.now(), "a:80", AttemptOutcome::kOk, milliseconds(10));
  // 20 calls whose primary hangs: 15% of 20 primaries is 3 backups.
  int backups = 0;
  for (int call = 0; call < 20; ++call) {
    core.begin_call(svc(), clock.now());
    const auto delay = core.backup_delay(svc(), idempotent_options(), clock.now());
    ASSERT_TRUE(delay);
    CallSession s(idempotent_options(), clock.now(), delay);
    ASSERT_EQ(s.next(clock.now(), env).kind, CallStep::Kind::kStart);
    const CallStep step = s.next(clock.now() + *delay, env);
    if (step.kind == CallStep::Kind::kStart) ++backups;
  }
  EXPECT_EQ(backups, 3);
  EXPECT_EQ(core.stats(svc(), clock.now()).budget.extras_denied, 17u);
}

// ---- Caller: the threaded executor, in real time ----

// Hooks over a fixed list of instances, remembering every attempt.
struct Recorder {
  std::mutex mu;
  std::vector<std::pair<std::string, AttemptOutcome>> attempts;
  std::vector<std::string> opened;
  std::vector<proto::Instance> instances{inst("a"), inst("b"), inst("c")};

  CallerHooks hooks(const Clock& clock) {
    return CallerHooks{
        [this](const proto::ServiceKey&,
               const std::vector<std::string>& exclude) -> std::optional<proto::Instance> {
          for (const auto& i : instances)
            if (std::find(exclude.begin(), exclude.end(), i.address) == exclude.end()) return i;
          return std::nullopt;
        },
        [this](const proto::ServiceKey&, const proto::Instance& i, AttemptOutcome o, microseconds) {
          std::lock_guard lock(mu);
          attempts.emplace_back(i.address, o);
        },
        [this](const proto::ServiceKey&, const std::string& address) {
          std::lock_guard lock(mu);
          opened.push_back(address);
        },
        clock};
  }
};

// Fills the service's latency window with fast answers, inline (a call has
// no backup before the window holds min_samples).
void warm_up(Caller& caller, std::uint32_t samples) {
  for (std::uint32_t i = 0; i < samples; ++i)
    caller.call(
        svc(), [](const proto::Instance&, MonoTime) { return AttemptOutcome::kOk; },
        idempotent_options());
}

TEST(Caller, NonIdempotentCallRunsOnceOnTheCallersThread) {
  SystemClock clock;
  Recorder rec;
  Caller caller(small_config(), rec.hooks(clock));
  const auto self = std::this_thread::get_id();
  int runs = 0;
  const CallResult r = caller.call(svc(), [&](const proto::Instance&, MonoTime) {
    ++runs;
    EXPECT_EQ(std::this_thread::get_id(), self);
    return AttemptOutcome::kConnectionError;
  });
  EXPECT_EQ(runs, 1);
  EXPECT_EQ(r.outcome, AttemptOutcome::kConnectionError);
  EXPECT_EQ(r.attempts, 1u);
  EXPECT_EQ(rec.attempts.size(), 1u);
  EXPECT_EQ(caller.stats(svc()).calls, 1u);
}

TEST(Caller, RetryGoesToAnotherAddressAndEveryAttemptIsReported) {
  SystemClock clock;
  Recorder rec;
  Caller caller(small_config(), rec.hooks(clock));
  const CallResult r = caller.call(
      svc(),
      [](const proto::Instance& to, MonoTime) {
        return to.address == "a:80" ? AttemptOutcome::kConnectionError : AttemptOutcome::kOk;
      },
      idempotent_options());
  EXPECT_EQ(r.outcome, AttemptOutcome::kOk);
  EXPECT_EQ(r.instance->address, "b:80");
  EXPECT_EQ(r.retries, 1u);
  using Seen = std::vector<std::pair<std::string, AttemptOutcome>>;
  EXPECT_EQ(rec.attempts,
            (Seen{{"a:80", AttemptOutcome::kConnectionError}, {"b:80", AttemptOutcome::kOk}}));
  EXPECT_EQ(caller.stats(svc()).retries, 1u);
}

TEST(Caller, OpenBreakerIsReportedAndItsAddressSkipped) {
  SystemClock clock;
  Recorder rec;
  Caller caller(small_config(), rec.hooks(clock));  // opens at 4 calls, 50%
  auto fail_on_a = [](const proto::Instance& to, MonoTime) {
    return to.address == "a:80" ? AttemptOutcome::kConnectionError : AttemptOutcome::kOk;
  };
  for (int i = 0; i < 4; ++i)
    caller.call(svc(), fail_on_a);  // not idempotent: each stays on a
  EXPECT_EQ(rec.opened, (std::vector<std::string>{"a:80"}));
  EXPECT_EQ(caller.breaker("a:80").state, BreakerState::kOpen);
  const CallResult r = caller.call(svc(), fail_on_a);
  EXPECT_EQ(r.outcome, AttemptOutcome::kOk);
  EXPECT_EQ(r.instance->address, "b:80");
  EXPECT_EQ(caller.stats(svc()).breaker_skips, 1u);
  EXPECT_EQ(caller.breakers().size(), 2u);
}

TEST(Caller, TotalsAndTheBreakerCensusFollowItsCalls) {
  SystemClock clock;
  Recorder rec;
  Caller caller(small_config(), rec.hooks(clock));  // opens at 4 calls, 50%
  const auto fail_on_a = [](const proto::Instance& to, MonoTime) {
    return to.address == "a:80" ? AttemptOutcome::kConnectionError : AttemptOutcome::kOk;
  };
  for (int i = 0; i < 5; ++i)
    caller.call(svc(), fail_on_a);  // four on a open its breaker; the fifth skips it
  const auto totals = caller.totals();
  EXPECT_EQ(totals.calls_ended(CallEnd::kConnectionError), 4u);
  EXPECT_EQ(totals.calls_ended(CallEnd::kOk), 1u);
  EXPECT_EQ(totals.breaker_skips, 1u);
  const auto census = caller.breaker_census();
  EXPECT_EQ(census.open, 1u);
  EXPECT_EQ(census.closed, 1u);
  EXPECT_EQ(census.transitions.opened, 1u);
}

// small_config() with backups once the latency window holds 5 samples.
CallerConfig quick_backup_config() {
  CallerConfig c = small_config();
  c.latency.min_samples = 5;
  return c;
}

// Attempts that wait() on it are stuck until release(), 5 s at the latest.
// Captured by value: a stuck attempt outlives call().
class Gate {
 public:
  void wait() const { released_.wait_for(std::chrono::seconds(5)); }
  void release() { release_->set_value(); }

 private:
  std::shared_ptr<std::promise<void>> release_ = std::make_shared<std::promise<void>>();
  std::shared_future<void> released_ = release_->get_future().share();
};

TEST(Caller, BackupAnswersWhileThePrimaryIsStuck) {
  SystemClock clock;
  Recorder rec;
  Caller caller(quick_backup_config(), rec.hooks(clock));
  warm_up(caller, 5);  // p90 ~0 ms: a backup after 1 ms
  Gate gate;
  const CallResult r = caller.call(
      svc(),
      [gate](const proto::Instance& to, MonoTime) {
        if (to.address == "a:80") gate.wait();
        return AttemptOutcome::kOk;
      },
      idempotent_options());
  EXPECT_EQ(r.outcome, AttemptOutcome::kOk);
  EXPECT_EQ(r.instance->address, "b:80");
  EXPECT_EQ(r.backups, 1u);
  EXPECT_LT(r.latency, milliseconds(900));  // well before the 1 s timeout
  gate.release();                           // the primary returns; ~Caller joins it
}

TEST(Caller, CallReturnsAtItsDeadlineWhileEveryAttemptIsStuck) {
  SystemClock clock;
  Recorder rec;
  Caller caller(quick_backup_config(), rec.hooks(clock));
  warm_up(caller, 5);
  Gate gate;
  CallOptions options = idempotent_options();
  options.timeout = Duration{50};
  const auto before = std::chrono::steady_clock::now();
  const CallResult r = caller.call(
      svc(),
      [gate](const proto::Instance&, MonoTime) {
        gate.wait();
        return AttemptOutcome::kOk;
      },
      options);
  const auto took = std::chrono::steady_clock::now() - before;
  EXPECT_EQ(r.outcome, AttemptOutcome::kTimeout);
  EXPECT_EQ(r.attempts, 2u);  // the primary and its backup
  EXPECT_GE(took, milliseconds(49));
  EXPECT_LT(took, milliseconds(2000));
  gate.release();
}

TEST(Caller, MissingPickHookAndBadOptionsAreRefused) {
  SystemClock clock;
  Recorder rec;
  CallerHooks hooks = rec.hooks(clock);
  hooks.pick = nullptr;
  EXPECT_THROW(Caller(CallerConfig{}, hooks), std::invalid_argument);
  Caller caller(CallerConfig{}, rec.hooks(clock));
  CallOptions bad;
  bad.timeout = Duration{-5};
  EXPECT_THROW(
      caller.call(
          svc(), [](const proto::Instance&, MonoTime) { return AttemptOutcome::kOk; }, bad),
      std::invalid_argument);
  EXPECT_THROW(caller.call(svc(), AttemptFn{}), std::invalid_argument);
}

}  // namespace
}  // namespace cascade::agent
