// Client, calls and failures: fast-fail reports to the hub and the call
// helper (agent/caller.hpp) wired to the client's picks, balancers and reports.

#include "cascade/agent/client.hpp"

namespace cascade::agent {

namespace {

// What the hub hears about a failed attempt; nullopt: nothing to report.
std::optional<proto::FailureKind> failure_kind(AttemptOutcome outcome, bool business_counts) {
  switch (outcome) {
    case AttemptOutcome::kOk:
      return std::nullopt;
    case AttemptOutcome::kTimeout:
      return proto::FailureKind::kTimeout;
    case AttemptOutcome::kConnectionError:
      return proto::FailureKind::kConnectionRefused;
    case AttemptOutcome::kOtherSystemError:
      return proto::FailureKind::kSystemError;
    case AttemptOutcome::kBusinessError:
      if (business_counts) return proto::FailureKind::kBusinessError;
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

Caller& Client::caller() {
  std::call_once(caller_once_, [this] {
    CallerHooks hooks{
        [this](const proto::ServiceKey& service, const std::vector<std::string>& exclude) {
          PickContext ctx;
          ctx.exclude = &exclude;
          return pick(service, ctx);
        },
        [this](const proto::ServiceKey& service, const proto::Instance& instance,
               AttemptOutcome outcome, std::chrono::microseconds latency) {
          on_attempt(service, instance, outcome, latency);
        },
        [this](const proto::ServiceKey& service, const std::string& address) {
          report_failure(service, address, proto::FailureKind::kBreakerOpen);
        },
        clock_};
    auto started = std::make_unique<Caller>(options_.caller, std::move(hooks));
    std::lock_guard lock(mu_);  // stats() reads caller_ under it, without call_once
    caller_ = std::move(started);
  });
  return *caller_;
}

// Every attempt feeds the learning balancers; a failed one is also reported.
void Client::on_attempt(const proto::ServiceKey& service, const proto::Instance& instance,
                        AttemptOutcome outcome, std::chrono::microseconds latency) {
  const bool ok = outcome == AttemptOutcome::kOk || outcome == AttemptOutcome::kBusinessError;
  on_call_finished(service, instance.address, latency, ok);
  if (auto kind = failure_kind(outcome, options_.report_business_errors))
    report_failure(service, instance.address, *kind);
}

// The operator's levers come first (agent/call_levers.hpp): a degraded or
// saturated service costs the caller no pick, no breaker and no network.
CallResult Client::call(const proto::ServiceKey& service, const AttemptFn& fn,
                        const CallOptions& options) {
  const Lever lever = levers_.lever(service.name);
  if (lever.degraded) return degraded_call(options);
  auto slot = levers_.enter(service.name, lever);
  if (!slot) {
    CallResult refused;
    refused.refused = CallRefusal::kOverLimit;
    refused.outcome = AttemptOutcome::kOtherSystemError;
    return refused;
  }
  return caller().call(service, fn, options);
}

CallResult Client::degraded_call(const CallOptions& options) {
  levers_.count_degraded();
  CallResult result;
  result.refused = CallRefusal::kDegraded;
  result.outcome = AttemptOutcome::kOtherSystemError;
  if (options.fallback) {
    result.fallback_ran = true;
    try {
      result.outcome = options.fallback();
    } catch (...) {
      result.outcome = AttemptOutcome::kOtherSystemError;  // as a throwing attempt counts
    }
  }
  return result;
}

CallerStats Client::call_stats(const proto::ServiceKey& service) {
  return caller().stats(service);
}

BreakerStats Client::breaker(const std::string& address) {
  return caller().breaker(address);
}

}  // namespace cascade::agent
