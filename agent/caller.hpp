#pragma once
// Resilient calls to a service: retries, backup requests, circuit breakers and
// an extra-request budget around one user-supplied attempt function.
//
//   agent::Caller caller(config, {.pick = ..., .on_attempt_finished = ...,
//                                 .on_breaker_opened = ..., .clock = clock});
//   auto r = caller.call({"payments", "default"},
//       [&](const proto::Instance& to, MonoTime deadline) { return send(to.address, deadline); },
//       {.timeout = Duration{300}, .idempotent = true});
//
// Three layers, from pure logic to threads:
//   CallSession  one call's decisions (which attempt next, when to wait, when
//                to give up). Sans-IO: takes `now`, asks a CallEnv for picks,
//                breaker admission, budget and workers.
//   CallerCore   state shared by all calls: breakers by address, budget and
//                latencies by service. Sans-IO, not thread-safe.
//   Caller       the executor: runs attempts inline or on its worker pool,
//                waits for them, serialises access to the core.
//
// Semantics of one call:
//   - Every attempt gets the call's absolute deadline (start + timeout).
//   - The first answer wins: kOk, or kBusinessError (the server answered; the
//     answer is "no", and asking another server would get the same "no").
//   - Retries: only for idempotent calls, only after a system error or
//     timeout, only when no attempt is still running, at most max_retries,
//     before the deadline, each on an address this call has not tried, and only
//     when the service's extra-request budget grants one.
//   - Backup request: for an idempotent call whose service has enough latency
//     samples, if the primary attempt has not finished after the service's
//     p-th percentile latency (and the budget grants), one second attempt goes
//     to another address. A non-idempotent call gets no backup: a backup is a
//     duplicate of the request, exactly what a retry of it would be.
//   - Breakers: an address whose breaker refuses is skipped (picked again with
//     it excluded); every attempt's outcome is recorded in its breaker.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cascade/agent/call_budget.hpp"
#include "cascade/agent/circuit_breaker.hpp"
#include "cascade/agent/latency_tracker.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent {

// How one attempt ended, as the user's attempt function reports it.
enum class AttemptOutcome : std::uint8_t {
  kOk,
  kTimeout,           // no answer by the deadline
  kConnectionError,   // could not reach the address
  kOtherSystemError,  // transport or server fault (e.g. HTTP 503)
  kBusinessError,     // the server answered "no" (e.g. HTTP 404): never retried
};

const char* to_string(AttemptOutcome outcome);

// The breaker's view of an attempt. A business error is the server working
// as intended, so it counts as a success unless the caller says otherwise.
CallOutcome breaker_outcome(AttemptOutcome outcome, bool business_errors_count);

// Blocking user code making one attempt to one instance; must return by
// `deadline` (nothing can interrupt it) and must not throw (a throw counts as
// kOtherSystemError). An attempt run on a worker can outlive call(): capture
// what it needs by value, never a reference to the caller's stack.
using AttemptFn = std::function<AttemptOutcome(const proto::Instance&, MonoTime deadline)>;

struct CallOptions {
  Duration timeout{1000};  // ms, for the whole call including retries and backups
  std::uint32_t max_retries = 2;
  bool idempotent = false;  // false: never retried, never a backup request
  // Send a backup after the service's latency at this percentile, in (0, 1]
  // (nullopt: never).
  std::optional<double> backup_after_percentile = 0.9;
  bool business_errors_count = false;  // as failures in the address's breaker
  // Client::call() of a service an operator degraded (agent/call_levers.hpp):
  // runs instead of any attempt, on the caller's thread; its outcome is the
  // call's. Without one, a degraded call ends kOtherSystemError at once.
  std::function<AttemptOutcome()> fallback{};
};

// Why Client::call() made no attempt although the service may have instances
// (agent/call_levers.hpp): the operator's levers.
enum class CallRefusal : std::uint8_t {
  kNone,
  kDegraded,   // degrade.SERVICE is on: failed fast, or the fallback ran
  kOverLimit,  // limit.SERVICE.max_in_flight calls were already in flight
};
const char* to_string(CallRefusal refusal);

// "" when the options are usable, else what is wrong with them.
std::string check_call_options(const CallOptions& options);

struct CallResult {
  // The winning answer; else the last finished attempt's outcome; kTimeout
  // when the deadline passed with attempts still running; kConnectionError
  // when no attempt could start (see no_instance).
  AttemptOutcome outcome = AttemptOutcome::kConnectionError;
  std::optional<proto::Instance> instance;  // the instance `outcome` came from
  std::uint32_t attempts = 0;               // started, backups and retries included
  std::uint32_t backups = 0;
  std::uint32_t retries = 0;
  bool no_instance = false;                  // the pick found nothing, or every breaker refused
  CallRefusal refused = CallRefusal::kNone;  // a lever stopped the call before any attempt
  bool fallback_ran = false;                 // kDegraded: the outcome is the fallback's
  std::chrono::microseconds latency{0};      // of the whole call
};

enum class AttemptKind : std::uint8_t { kPrimary, kBackup, kRetry };

// What a CallSession needs from the world. The Caller implements it over its
// locked core, its pick hook and its worker pool; tests implement it directly.
class CallEnv {
 public:
  virtual ~CallEnv() = default;
  // Holds a worker for an attempt that must not block the caller's thread.
  // False: every worker is busy (the attempt runs inline, or the backup is dropped).
  virtual bool reserve_worker() = 0;
  // Gives back a reservation the session will not use.
  virtual void release_worker() = 0;
  virtual bool try_spend_extra(MonoTime now) = 0;
  // An instance whose address is not in `exclude`, or nullopt.
  virtual std::optional<proto::Instance> pick(const std::vector<std::string>& exclude) = 0;
  // The address's breaker admits a call (may take a half-open probe slot).
  virtual bool admit(const std::string& address, MonoTime now) = 0;
};

// One attempt the executor must start now.
struct AttemptOrder {
  std::uint32_t id = 0;
  AttemptKind kind = AttemptKind::kPrimary;
  proto::Instance instance{};
  MonoTime deadline{};
  bool on_worker = false;  // run on the worker reserved for it; false: inline, now
};

struct CallStep {
  enum class Kind : std::uint8_t { kStart, kWait, kDone };
  Kind kind = Kind::kDone;
  AttemptOrder attempt{};  // kStart
  MonoTime wake_at{};      // kWait: call next() at this time, or as soon as an attempt finishes
  CallResult result{};     // kDone
};

// What calls did beside their results: of one call (CallCounts, which
// CallResult does not carry), or summed over many (CallSums: of one service
// in CallerStats, of a whole Caller in CallerTotals).
template <typename Count>
struct CallTally {
  Count attempts = 0;
  Count retries = 0;
  Count backups = 0;
  Count retries_denied_by_budget = 0;
  Count backups_denied_by_budget = 0;
  Count backups_without_worker = 0;
  Count breaker_skips = 0;  // picked addresses skipped because their breaker refused

  template <typename Other>
  CallTally& operator+=(const CallTally<Other>& call) {
    attempts += call.attempts;
    retries += call.retries;
    backups += call.backups;
    retries_denied_by_budget += call.retries_denied_by_budget;
    backups_denied_by_budget += call.backups_denied_by_budget;
    backups_without_worker += call.backups_without_worker;
    breaker_skips += call.breaker_skips;
    return *this;
  }
};
using CallCounts = CallTally<std::uint32_t>;
using CallSums = CallTally<std::uint64_t>;

// How a call ended, as metrics count it: its CallResult::outcome, or why no
// attempt could start.
enum class CallEnd : std::uint8_t {
  kOk,
  kBusinessError,
  kTimeout,
  kConnectionError,
  kSystemError,
  kNoInstance,  // the pick found no candidate
  kAllBroken,   // every instance picked was refused by its breaker
};
inline constexpr std::size_t kCallEndCount = 7;  // for tables indexed by CallEnd

// "ok", "business_error", "timeout", "connection_error", "system_error",
// "no_instance", "all_broken": label values of metrics.
const char* to_string(CallEnd end);
CallEnd call_end(const CallResult& result, const CallCounts& counts);

// What every call of a Caller added up to since it started, services
// forgotten since included: for metrics, which must never go down.
struct CallerTotals : CallSums {
  std::array<std::uint64_t, kCallEndCount> calls{};  // by CallEnd
  std::uint64_t calls_ended(CallEnd end) const { return calls[static_cast<std::size_t>(end)]; }
};

// The decisions of one call. Sans-IO; one thread (the caller's) drives it:
//   loop { report finished attempts; step = next(now, env); start / wait / return }
class CallSession {
 public:
  // backup_delay: when the primary gets a backup (nullopt: never); ignored
  // for calls that may not have one (not idempotent, no percentile set).
  CallSession(const CallOptions& options, MonoTime start, std::optional<Duration> backup_delay);

  CallStep next(MonoTime now, CallEnv& env);
  // An attempt next() ordered has ended. Unknown or repeated ids are ignored.
  void finished(std::uint32_t id, AttemptOutcome outcome);

  // Addresses this call has tried or found refused by their breaker.
  const std::vector<std::string>& excluded() const { return excluded_; }
  const CallCounts& counts() const { return counts_; }
  MonoTime deadline() const { return deadline_; }

 private:
  struct Attempt {
    AttemptKind kind = AttemptKind::kPrimary;
    proto::Instance instance{};
    MonoTime started{};
    bool on_worker = false;
    bool finished = false;
    AttemptOutcome outcome = AttemptOutcome::kOk;
  };
  enum class Backup : std::uint8_t { kPending, kSent, kNone };

  // Orders an attempt of `kind`, or nullopt when the budget, the pick or the
  // worker pool says no (the reason is remembered so it is not asked again).
  std::optional<CallStep> start(AttemptKind kind, MonoTime now, CallEnv& env);
  std::optional<proto::Instance> pick_admitted(MonoTime now, CallEnv& env);
  std::size_t in_flight() const;
  bool may_retry(MonoTime now) const;
  CallStep done(MonoTime now) const;

  CallOptions options_;
  MonoTime start_;
  MonoTime deadline_;
  std::optional<Duration> backup_delay_;
  Backup backup_ = Backup::kNone;
  bool primary_ordered_ = false;
  bool retry_blocked_ = false;  // the budget or the pick refused a retry
  std::vector<Attempt> attempts_;
  std::vector<std::string> excluded_;
  std::optional<std::size_t> winner_;
  std::optional<std::size_t> last_finished_;
  CallCounts counts_;
};

struct CallerConfig {
  BreakerSetConfig breakers{};
  BudgetConfig budget{};
  LatencyConfig latency{};
  // A service not called for this long loses its budget, latencies and
  // counters (ms), so the state does not grow with every service ever called.
  Duration forget_service_after{std::chrono::minutes(10)};
  // Threads for attempts that may get a backup (the primary and its backup
  // each hold one until they return). A call that finds no free worker runs
  // its primary inline and sends no backup. 0: never a backup request.
  std::size_t worker_threads = 8;
};

// "" when the config is usable, else what is wrong with it.
std::string check_caller_config(const CallerConfig& config);

// The CallSums are since the service was first called (or last forgotten).
struct CallerStats : CallSums {
  BudgetStats budget{};               // in the budget's window
  std::uint64_t latency_samples = 0;  // in the latency window
  std::optional<std::chrono::microseconds> latency_p50;
  std::optional<std::chrono::microseconds> latency_p90;
  std::optional<std::chrono::microseconds> latency_p99;
  std::uint64_t calls = 0;  // since the service was first called (or last forgotten)
};

// The state every call shares. Sans-IO; thread-safety: none (Caller locks).
class CallerCore {
 public:
  explicit CallerCore(const CallerConfig& config);  // throws std::invalid_argument

  // A call starts: one primary request in the service's budget.
  void begin_call(const proto::ServiceKey& service, MonoTime now);
  // When this call's primary gets a backup: the service's latency at the
  // options' percentile, rounded up to whole ms and at least 1 ms; nullopt
  // when the call may not have one, too few samples, or not before the timeout.
  std::optional<Duration> backup_delay(const proto::ServiceKey& service, const CallOptions& options,
                                       MonoTime now) const;
  bool try_spend_extra(const proto::ServiceKey& service, MonoTime now);
  bool admit(const std::string& address, MonoTime now);
  // An attempt ended: its breaker counts it; an answer's latency is tracked
  // (failures are not: a refused connection returns fast and would pull the
  // percentile, and with it every backup, earlier).
  BreakerTransition record_attempt(const proto::ServiceKey& service, const std::string& address,
                                   AttemptOutcome outcome, bool business_errors_count,
                                   std::chrono::microseconds latency, MonoTime now);
  void end_call(const proto::ServiceKey& service, const CallCounts& counts,
                const CallResult& result);

  CallerStats stats(const proto::ServiceKey& service, MonoTime now) const;
  BreakerStats breaker(const std::string& address, MonoTime now) const;
  std::map<std::string, BreakerStats> breakers(MonoTime now) const;
  const CallerTotals& totals() const { return totals_; }
  BreakerCensus breaker_census(MonoTime now) const { return breakers_.census(now); }

 private:
  struct ServiceState {
    CallBudget budget;
    LatencyTracker latency;
    MonoTime last_used{};
    CallerStats totals{};  // only the cumulative counters are used
  };
  ServiceState& service_state(const proto::ServiceKey& service, MonoTime now);
  void forget_idle_services(MonoTime now);

  CallerConfig config_;
  BreakerSet breakers_;
  std::map<proto::ServiceKey, ServiceState> services_;
  CallerTotals totals_;
  MonoTime next_sweep_{};
};

// Hooks into the Client. They are called from the calling thread and from
// worker threads, without any Caller lock held; they must be thread-safe and
// must not throw.
struct CallerHooks {
  // An instance of `service` whose address is not in `exclude`, or nullopt.
  std::function<std::optional<proto::Instance>(const proto::ServiceKey& service,
                                               const std::vector<std::string>& exclude)>
      pick;
  // Every attempt, when it ends (latency of that attempt alone). Optional.
  std::function<void(const proto::ServiceKey& service, const proto::Instance& instance,
                     AttemptOutcome outcome, std::chrono::microseconds latency)>
      on_attempt_finished;
  // An attempt's outcome opened the address's breaker. Optional.
  std::function<void(const proto::ServiceKey& service, const std::string& address)>
      on_breaker_opened;
  const Clock& clock;  // must move on its own (SystemClock): the Caller waits on it
};

// The executor. Thread-safe: any number of threads may call() at once.
// Attempts without a possible backup run on the calling thread; a primary that
// may get a backup, and the backup, run on the Caller's worker pool so the
// caller can return on the first answer. The destructor waits for running
// attempts (they return by their deadline) and joins the workers.
class Caller {
 public:
  // Throws std::invalid_argument for a bad config or a missing pick hook.
  Caller(CallerConfig config, CallerHooks hooks);
  ~Caller();
  Caller(const Caller&) = delete;
  Caller& operator=(const Caller&) = delete;

  // Throws std::invalid_argument for bad options or an empty fn.
  CallResult call(const proto::ServiceKey& service, const AttemptFn& fn,
                  const CallOptions& options = {});

  CallerStats stats(const proto::ServiceKey& service) const;
  BreakerStats breaker(const std::string& address) const;
  std::map<std::string, BreakerStats> breakers() const;
  CallerTotals totals() const;
  BreakerCensus breaker_census() const;

 private:
  class Env;
  class WorkerPool;
  struct Inbox;
  struct Finished {
    std::uint32_t id = 0;
    AttemptOutcome outcome = AttemptOutcome::kOk;
  };

  // Runs one attempt on the current thread and records its outcome.
  Finished run_attempt(const proto::ServiceKey& service, const AttemptFn& fn,
                       const AttemptOrder& order, bool business_errors_count);

  CallerHooks hooks_;
  mutable std::mutex mu_;
  CallerCore core_;  // guarded by mu_
  // Last member: destroyed first, so no worker outlives what it touches.
  std::unique_ptr<WorkerPool> pool_;
};

}  // namespace cascade::agent
