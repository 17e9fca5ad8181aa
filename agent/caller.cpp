#include "cascade/agent/caller.hpp"

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <stdexcept>
#include <thread>
#include <utility>

#include "cascade/agent/config_check.hpp"

namespace cascade::agent {

const char* to_string(AttemptOutcome outcome) {
  switch (outcome) {
    case AttemptOutcome::kOk:
      return "ok";
    case AttemptOutcome::kTimeout:
      return "timeout";
    case AttemptOutcome::kConnectionError:
      return "connection-error";
    case AttemptOutcome::kOtherSystemError:
      return "system-error";
    case AttemptOutcome::kBusinessError:
      return "business-error";
  }
  return "?";
}

const char* to_string(CallRefusal refusal) {
  switch (refusal) {
    case CallRefusal::kNone:
      return "none";
    case CallRefusal::kDegraded:
      return "degraded";
    case CallRefusal::kOverLimit:
      return "over-limit";
  }
  return "?";
}

CallOutcome breaker_outcome(AttemptOutcome outcome, bool business_errors_count) {
  switch (outcome) {
    case AttemptOutcome::kOk:
      return CallOutcome::kSuccess;
    case AttemptOutcome::kTimeout:
      return CallOutcome::kTimeout;
    case AttemptOutcome::kConnectionError:
    case AttemptOutcome::kOtherSystemError:
      return CallOutcome::kFailure;
    case AttemptOutcome::kBusinessError:
      return business_errors_count ? CallOutcome::kFailure : CallOutcome::kSuccess;
  }
  return CallOutcome::kFailure;
}

const char* to_string(CallEnd end) {
  switch (end) {
    case CallEnd::kOk:
      return "ok";
    case CallEnd::kBusinessError:
      return "business_error";
    case CallEnd::kTimeout:
      return "timeout";
    case CallEnd::kConnectionError:
      return "connection_error";
    case CallEnd::kSystemError:
      return "system_error";
    case CallEnd::kNoInstance:
      return "no_instance";
    case CallEnd::kAllBroken:
      return "all_broken";
  }
  return "?";
}

CallEnd call_end(const CallResult& result, const CallCounts& counts) {
  if (result.no_instance)
    return counts.breaker_skips > 0 ? CallEnd::kAllBroken : CallEnd::kNoInstance;
  switch (result.outcome) {
    case AttemptOutcome::kOk:
      return CallEnd::kOk;
    case AttemptOutcome::kBusinessError:
      return CallEnd::kBusinessError;
    case AttemptOutcome::kTimeout:
      return CallEnd::kTimeout;
    case AttemptOutcome::kConnectionError:
      return CallEnd::kConnectionError;
    case AttemptOutcome::kOtherSystemError:
      return CallEnd::kSystemError;
  }
  return CallEnd::kSystemError;
}

namespace {

// An answer ends the call; anything else may be retried.
bool is_answer(AttemptOutcome outcome) {
  return outcome == AttemptOutcome::kOk || outcome == AttemptOutcome::kBusinessError;
}

}  // namespace

std::string check_call_options(const CallOptions& o) {
  if (o.timeout.count() <= 0) return "call: timeout must be a positive number of ms";
  if (o.backup_after_percentile &&
      !(*o.backup_after_percentile > 0.0 && *o.backup_after_percentile <= 1.0))
    return "call: backup_after_percentile must be in (0, 1], got " +
           std::to_string(*o.backup_after_percentile);
  return "";
}

// ---- CallSession ----

CallSession::CallSession(const CallOptions& options, MonoTime start,
                         std::optional<Duration> backup_delay)
    : options_(options), start_(start), deadline_(start + options.timeout) {
  if (options_.idempotent && options_.backup_after_percentile && backup_delay &&
      *backup_delay < options_.timeout) {
    backup_delay_ = std::max(*backup_delay, Duration{0});
    backup_ = Backup::kPending;
  }
}

std::size_t CallSession::in_flight() const {
  return static_cast<std::size_t>(std::count_if(attempts_.begin(), attempts_.end(),
                                                [](const Attempt& a) { return !a.finished; }));
}

std::optional<proto::Instance> CallSession::pick_admitted(MonoTime now, CallEnv& env) {
  for (;;) {
    auto instance = env.pick(excluded_);
    if (!instance) return std::nullopt;
    // A pick hook that ignores the exclude list would otherwise loop here for ever.
    if (std::find(excluded_.begin(), excluded_.end(), instance->address) != excluded_.end())
      return std::nullopt;
    if (env.admit(instance->address, now)) return instance;
    excluded_.push_back(instance->address);
    ++counts_.breaker_skips;
  }
}

std::optional<CallStep> CallSession::start(AttemptKind kind, MonoTime now, CallEnv& env) {
  // The worker comes first: it is the one resource with a free undo. The
  // budget is spent before the pick because a breaker's admission may take a
  // half-open probe slot, which an unspent budget could not give back.
  bool on_worker = kind == AttemptKind::kBackup ||
                   (kind == AttemptKind::kPrimary && backup_ == Backup::kPending);
  if (on_worker && !env.reserve_worker()) {
    ++counts_.backups_without_worker;
    backup_ = Backup::kNone;
    if (kind == AttemptKind::kBackup) return std::nullopt;
    on_worker = false;  // the primary runs inline, without a backup
  }
  auto give_up = [&] {
    if (on_worker) env.release_worker();
    if (kind == AttemptKind::kBackup) backup_ = Backup::kNone;
    if (kind == AttemptKind::kRetry) retry_blocked_ = true;
    return std::nullopt;
  };
  if (kind != AttemptKind::kPrimary && !env.try_spend_extra(now)) {
    if (kind == AttemptKind::kBackup) ++counts_.backups_denied_by_budget;
    if (kind == AttemptKind::kRetry) ++counts_.retries_denied_by_budget;
    return give_up();
  }
  auto instance = pick_admitted(now, env);
  if (!instance) return give_up();

  excluded_.push_back(instance->address);
  Attempt attempt;
  attempt.kind = kind;
  attempt.instance = *instance;
  attempt.started = now;
  attempt.on_worker = on_worker;
  attempts_.push_back(std::move(attempt));
  ++counts_.attempts;
  if (kind == AttemptKind::kBackup) {
    ++counts_.backups;
    backup_ = Backup::kSent;
  }
  if (kind == AttemptKind::kRetry) ++counts_.retries;

  CallStep step;
  step.kind = CallStep::Kind::kStart;
  step.attempt.id = static_cast<std::uint32_t>(attempts_.size() - 1);
  step.attempt.kind = kind;
  step.attempt.instance = std::move(*instance);
  step.attempt.deadline = deadline_;
  step.attempt.on_worker = on_worker;
  return step;
}

bool CallSession::may_retry(MonoTime now) const {
  if (!options_.idempotent || retry_blocked_) return false;
  if (counts_.retries >= options_.max_retries || now >= deadline_) return false;
  return last_finished_ && !is_answer(attempts_[*last_finished_].outcome);
}

CallStep CallSession::next(MonoTime now, CallEnv& env) {
  if (winner_) return done(now);
  if (!primary_ordered_) {
    primary_ordered_ = true;
    if (auto step = start(AttemptKind::kPrimary, now, env)) return *step;
    return done(now);
  }
  if (in_flight() > 0) {
    if (now >= deadline_) return done(now);
    MonoTime wake = deadline_;
    // Only the primary gets a backup, and only while it alone is running on a worker.
    const Attempt& primary = attempts_.front();
    if (backup_ == Backup::kPending && !primary.finished && primary.on_worker) {
      const MonoTime backup_at = primary.started + *backup_delay_;
      if (now >= backup_at) {
        if (auto step = start(AttemptKind::kBackup, now, env)) return *step;
      } else {
        wake = std::min(wake, backup_at);
      }
    }
    CallStep step;
    step.kind = CallStep::Kind::kWait;
    step.wake_at = wake;
    return step;
  }
  // Nothing running and no answer: the last attempt failed.
  backup_ = Backup::kNone;  // a backup belongs to a running primary
  if (may_retry(now)) {
    if (auto step = start(AttemptKind::kRetry, now, env)) return *step;
  }
  return done(now);
}

void CallSession::finished(std::uint32_t id, AttemptOutcome outcome) {
  if (id >= attempts_.size() || attempts_[id].finished) return;
  attempts_[id].finished = true;
  attempts_[id].outcome = outcome;
  last_finished_ = id;
  if (!winner_ && is_answer(outcome)) winner_ = id;
}

CallStep CallSession::done(MonoTime now) const {
  CallStep step;
  step.kind = CallStep::Kind::kDone;
  CallResult& r = step.result;
  r.attempts = counts_.attempts;
  r.backups = counts_.backups;
  r.retries = counts_.retries;
  r.latency = std::chrono::duration_cast<std::chrono::microseconds>(now - start_);
  if (winner_) {
    r.outcome = attempts_[*winner_].outcome;
    r.instance = attempts_[*winner_].instance;
  } else if (auto running = std::find_if(attempts_.begin(), attempts_.end(),
                                         [](const Attempt& a) { return !a.finished; });
             running != attempts_.end()) {
    r.outcome = AttemptOutcome::kTimeout;  // the deadline passed while it ran
    r.instance = running->instance;
  } else if (last_finished_) {
    r.outcome = attempts_[*last_finished_].outcome;
    r.instance = attempts_[*last_finished_].instance;
  } else {
    r.outcome = AttemptOutcome::kConnectionError;
    r.no_instance = true;
  }
  return step;
}

// ---- CallerCore ----

std::string check_caller_config(const CallerConfig& c) {
  if (auto error = check_breaker_set_config(c.breakers); !error.empty()) return error;
  if (auto error = check_budget_config(c.budget); !error.empty()) return error;
  if (auto error = check_latency_config(c.latency); !error.empty()) return error;
  if (c.forget_service_after.count() <= 0)
    return "caller: forget_service_after must be a positive number of ms";
  if (c.worker_threads > 1024)
    return "caller: worker_threads must be at most 1024, got " + std::to_string(c.worker_threads);
  return "";
}

CallerCore::CallerCore(const CallerConfig& config)
    : config_(checked(config, check_caller_config)), breakers_(config.breakers) {}

CallerCore::ServiceState& CallerCore::service_state(const proto::ServiceKey& service,
                                                    MonoTime now) {
  auto it = services_.find(service);
  if (it == services_.end())
    it = services_
             .emplace(service, ServiceState{CallBudget(config_.budget),
                                            LatencyTracker(config_.latency), now, CallerStats{}})
             .first;
  it->second.last_used = now;
  return it->second;
}

void CallerCore::forget_idle_services(MonoTime now) {
  if (now < next_sweep_) return;
  next_sweep_ = now + std::max(Duration{1}, config_.forget_service_after / 4);
  std::erase_if(services_, [&](const auto& kv) {
    return now - kv.second.last_used >= config_.forget_service_after;
  });
}

void CallerCore::begin_call(const proto::ServiceKey& service, MonoTime now) {
  forget_idle_services(now);
  ServiceState& state = service_state(service, now);
  state.budget.record_primary(now);
  ++state.totals.calls;
}

std::optional<Duration> CallerCore::backup_delay(const proto::ServiceKey& service,
                                                 const CallOptions& options, MonoTime now) const {
  if (!options.idempotent || !options.backup_after_percentile) return std::nullopt;
  auto it = services_.find(service);
  if (it == services_.end()) return std::nullopt;
  auto latency = it->second.latency.percentile(now, *options.backup_after_percentile);
  if (!latency) return std::nullopt;
  const Duration delay = std::max(Duration{1}, std::chrono::ceil<Duration>(*latency));
  if (delay >= options.timeout) return std::nullopt;
  return delay;
}

bool CallerCore::try_spend_extra(const proto::ServiceKey& service, MonoTime now) {
  return service_state(service, now).budget.try_spend_extra(now);
}

bool CallerCore::admit(const std::string& address, MonoTime now) {
  return breakers_.allow(address, now);
}

BreakerTransition CallerCore::record_attempt(const proto::ServiceKey& service,
                                             const std::string& address, AttemptOutcome outcome,
                                             bool business_errors_count,
                                             std::chrono::microseconds latency, MonoTime now) {
  if (is_answer(outcome)) service_state(service, now).latency.record(now, latency);
  return breakers_.record(address, now, breaker_outcome(outcome, business_errors_count));
}

void CallerCore::end_call(const proto::ServiceKey& service, const CallCounts& counts,
                          const CallResult& result) {
  ++totals_.calls[static_cast<std::size_t>(call_end(result, counts))];
  totals_ += counts;
  if (auto it = services_.find(service); it != services_.end()) it->second.totals += counts;
}

CallerStats CallerCore::stats(const proto::ServiceKey& service, MonoTime now) const {
  auto it = services_.find(service);
  if (it == services_.end()) return CallerStats{};
  const ServiceState& state = it->second;
  CallerStats s = state.totals;
  s.budget = state.budget.stats(now);
  s.latency_samples = state.latency.samples(now);
  s.latency_p50 = state.latency.percentile(now, 0.5);
  s.latency_p90 = state.latency.percentile(now, 0.9);
  s.latency_p99 = state.latency.percentile(now, 0.99);
  return s;
}

BreakerStats CallerCore::breaker(const std::string& address, MonoTime now) const {
  return breakers_.stats(address, now);
}

std::map<std::string, BreakerStats> CallerCore::breakers(MonoTime now) const {
  return breakers_.all(now);
}

// ---- Caller: the executor ----

// A fixed set of threads. A task runs only on a worker reserved for it, so a
// task never waits in a queue behind a slow attempt: no free worker means the
// caller decides what to do instead (run inline, drop the backup).
class Caller::WorkerPool {
 public:
  explicit WorkerPool(std::size_t threads) : free_(threads) {
    threads_.reserve(threads);
    for (std::size_t i = 0; i < threads; ++i)
      threads_.emplace_back([this] { loop(); });
  }
  // Runs what was handed over, then joins.
  ~WorkerPool() {
    {
      std::lock_guard lock(mu_);
      stopping_ = true;
    }
    cv_.notify_all();
    for (auto& t : threads_)
      t.join();
  }
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  bool try_reserve() {
    std::lock_guard lock(mu_);
    if (free_ == 0) return false;
    --free_;
    return true;
  }
  void cancel_reservation() {
    std::lock_guard lock(mu_);
    ++free_;
  }
  void run_reserved(std::function<void()> task) {
    {
      std::lock_guard lock(mu_);
      tasks_.push_back(std::move(task));
    }
    cv_.notify_one();
  }

 private:
  void loop() {
    std::unique_lock lock(mu_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, nothing left
      auto task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      ++free_;
    }
  }

  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::function<void()>> tasks_;
  std::size_t free_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// Where workers leave the outcomes of one call's attempts. Shared with the
// workers, so it outlives a call that returned before its attempts did.
struct Caller::Inbox {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<Finished> done;

  void post(Finished f) {
    {
      std::lock_guard lock(mu);
      done.push_back(f);
    }
    cv.notify_all();
  }
  std::vector<Finished> take() {
    std::lock_guard lock(mu);
    return std::exchange(done, {});
  }
  void wait_for(Duration d) {
    std::unique_lock lock(mu);
    cv.wait_for(lock, d, [&] { return !done.empty(); });
  }
};

// The CallEnv of one call: the pick hook unlocked, the core under the lock.
class Caller::Env final : public CallEnv {
 public:
  Env(Caller& caller, const proto::ServiceKey& service) : caller_(caller), service_(service) {}
  ~Env() override { release_worker(); }
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;

  bool reserve_worker() override {
    reserved_ = caller_.pool_->try_reserve();
    return reserved_;
  }
  void release_worker() override {
    if (reserved_) caller_.pool_->cancel_reservation();
    reserved_ = false;
  }
  // The session ordered an attempt on the reserved worker.
  void run_on_worker(std::function<void()> task) {
    reserved_ = false;
    caller_.pool_->run_reserved(std::move(task));
  }
  bool try_spend_extra(MonoTime now) override {
    std::lock_guard lock(caller_.mu_);
    return caller_.core_.try_spend_extra(service_, now);
  }
  std::optional<proto::Instance> pick(const std::vector<std::string>& exclude) override {
    return caller_.hooks_.pick(service_, exclude);
  }
  bool admit(const std::string& address, MonoTime now) override {
    std::lock_guard lock(caller_.mu_);
    return caller_.core_.admit(address, now);
  }

 private:
  Caller& caller_;
  const proto::ServiceKey& service_;
  bool reserved_ = false;
};

Caller::Caller(CallerConfig config, CallerHooks hooks) : hooks_(std::move(hooks)), core_(config) {
  if (!hooks_.pick) throw std::invalid_argument("caller: the pick hook is required");
  pool_ = std::make_unique<WorkerPool>(config.worker_threads);
}

Caller::~Caller() {
  pool_.reset();  // running attempts finish and record before the core goes
}

Caller::Finished Caller::run_attempt(const proto::ServiceKey& service, const AttemptFn& fn,
                                     const AttemptOrder& order, bool business_errors_count) {
  const MonoTime started = hooks_.clock.now();
  AttemptOutcome outcome = AttemptOutcome::kOtherSystemError;
  try {
    outcome = fn(order.instance, order.deadline);
  } catch (...) {
    outcome = AttemptOutcome::kOtherSystemError;  // documented: fn must not throw
  }
  const MonoTime ended = hooks_.clock.now();
  const auto latency = std::chrono::duration_cast<std::chrono::microseconds>(ended - started);
  BreakerTransition transition;
  {
    std::lock_guard lock(mu_);
    transition = core_.record_attempt(service, order.instance.address, outcome,
                                      business_errors_count, latency, ended);
  }
  if (hooks_.on_attempt_finished)
    hooks_.on_attempt_finished(service, order.instance, outcome, latency);
  if (transition == BreakerTransition::kOpened && hooks_.on_breaker_opened)
    hooks_.on_breaker_opened(service, order.instance.address);
  return Finished{order.id, outcome};
}

CallResult Caller::call(const proto::ServiceKey& service, const AttemptFn& fn,
                        const CallOptions& options) {
  if (auto error = check_call_options(options); !error.empty()) throw std::invalid_argument(error);
  if (!fn) throw std::invalid_argument("call: the attempt function is empty");

  const MonoTime start = hooks_.clock.now();
  std::optional<Duration> backup_delay;
  {
    std::lock_guard lock(mu_);
    core_.begin_call(service, start);
    backup_delay = core_.backup_delay(service, options, start);
  }
  CallSession session(options, start, backup_delay);
  Env env(*this, service);
  auto inbox = std::make_shared<Inbox>();
  // Copied once, for attempts on workers: they may outlive this call.
  std::shared_ptr<const AttemptFn> shared_fn;

  for (;;) {
    const MonoTime now = hooks_.clock.now();
    for (const Finished& f : inbox->take())
      session.finished(f.id, f.outcome);
    CallStep step = session.next(now, env);
    switch (step.kind) {
      case CallStep::Kind::kDone: {
        std::lock_guard lock(mu_);
        core_.end_call(service, session.counts(), step.result);
        return step.result;
      }
      case CallStep::Kind::kWait:
        inbox->wait_for(step.wake_at - now);
        break;
      case CallStep::Kind::kStart:
        if (step.attempt.on_worker) {
          if (!shared_fn) shared_fn = std::make_shared<const AttemptFn>(fn);
          env.run_on_worker([this, service, shared_fn, inbox, order = std::move(step.attempt),
                             counts = options.business_errors_count] {
            inbox->post(run_attempt(service, *shared_fn, order, counts));
          });
        } else {
          const Finished f = run_attempt(service, fn, step.attempt, options.business_errors_count);
          session.finished(f.id, f.outcome);
        }
        break;
    }
  }
}

CallerStats Caller::stats(const proto::ServiceKey& service) const {
  std::lock_guard lock(mu_);
  return core_.stats(service, hooks_.clock.now());
}

BreakerStats Caller::breaker(const std::string& address) const {
  std::lock_guard lock(mu_);
  return core_.breaker(address, hooks_.clock.now());
}

std::map<std::string, BreakerStats> Caller::breakers() const {
  std::lock_guard lock(mu_);
  return core_.breakers(hooks_.clock.now());
}

CallerTotals Caller::totals() const {
  std::lock_guard lock(mu_);
  return core_.totals();
}

BreakerCensus Caller::breaker_census() const {
  std::lock_guard lock(mu_);
  return core_.breaker_census(hooks_.clock.now());
}

}  // namespace cascade::agent
