#include "cascade/agent/circuit_breaker.hpp"

#include <algorithm>

#include "cascade/agent/config_check.hpp"

namespace cascade::agent {

const char* to_string(BreakerState state) {
  switch (state) {
    case BreakerState::kClosed:
      return "closed";
    case BreakerState::kOpen:
      return "open";
    case BreakerState::kHalfOpen:
      return "half-open";
  }
  return "?";
}

BreakerTransitions& BreakerTransitions::operator+=(const BreakerTransitions& other) {
  opened += other.opened;
  half_opened += other.half_opened;
  closed += other.closed;
  return *this;
}

std::string check_breaker_config(const BreakerConfig& c) {
  if (auto error = check_window("breaker", c); !error.empty()) return error;
  if (!(c.failure_rate_to_open > 0.0 && c.failure_rate_to_open <= 1.0))
    return "breaker: failure_rate_to_open must be in (0, 1], got " +
           std::to_string(c.failure_rate_to_open);
  if (c.open_for.count() <= 0) return "breaker: open_for must be a positive number of ms";
  if (c.half_open_probes == 0) return "breaker: half_open_probes must be at least 1";
  return "";
}

CircuitBreaker::CircuitBreaker(BreakerConfig config)
    : config_(checked(config, check_breaker_config)),
      ring_(config_.buckets, config_.bucket_width) {}

CircuitBreaker::Bucket CircuitBreaker::window_sum(MonoTime now) const {
  Bucket sum;
  ring_.for_each_live(now, [&sum](const Bucket& b) {
    sum.successes += b.successes;
    sum.failures += b.failures;
    sum.timeouts += b.timeouts;
    sum.rejections += b.rejections;
  });
  return sum;
}

void CircuitBreaker::advance(MonoTime now) {
  if (state_ == BreakerState::kOpen && now >= opened_at_ + config_.open_for) {
    state_ = BreakerState::kHalfOpen;
    probes_in_flight_ = 0;
    probes_since_ = now;
    ++transitions_.half_opened;
  }
  // A probe whose outcome never comes (a call that hangs, a caller that
  // forgot to record) would keep every slot taken and the breaker half-open
  // for ever. After another open_for without a verdict the slots are reissued.
  if (state_ == BreakerState::kHalfOpen && probes_in_flight_ > 0 &&
      now >= probes_since_ + config_.open_for) {
    probes_in_flight_ = 0;
    probes_since_ = now;
  }
}

void CircuitBreaker::open(MonoTime now) {
  state_ = BreakerState::kOpen;
  opened_at_ = now;
  probes_in_flight_ = 0;
  ++transitions_.opened;
}

void CircuitBreaker::close() {
  state_ = BreakerState::kClosed;
  probes_in_flight_ = 0;
  ++transitions_.closed;
  // The failures that opened it describe the instance before it recovered;
  // kept, they would reopen it on the first failure after closing.
  ring_.clear();
}

bool CircuitBreaker::allow(MonoTime now) {
  advance(now);
  switch (state_) {
    case BreakerState::kClosed:
      return true;
    case BreakerState::kHalfOpen:
      if (probes_in_flight_ < config_.half_open_probes) {
        ++probes_in_flight_;
        return true;
      }
      break;
    case BreakerState::kOpen:
      break;
  }
  ++ring_.at(now).rejections;
  return false;
}

BreakerTransition CircuitBreaker::record(MonoTime now, CallOutcome outcome) {
  advance(now);
  Bucket& bucket = ring_.at(now);
  switch (outcome) {
    case CallOutcome::kSuccess:
      ++bucket.successes;
      break;
    case CallOutcome::kFailure:
      ++bucket.failures;
      break;
    case CallOutcome::kTimeout:
      ++bucket.timeouts;
      break;
  }
  switch (state_) {
    case BreakerState::kOpen:
      // A late answer from a call admitted before the breaker opened: counted,
      // but only open_for decides when the address is tried again.
      return BreakerTransition::kNone;
    case BreakerState::kHalfOpen:
      if (outcome == CallOutcome::kSuccess) {
        close();
        return BreakerTransition::kClosed;
      }
      open(now);
      return BreakerTransition::kOpened;
    case BreakerState::kClosed:
      break;
  }
  const Bucket sum = window_sum(now);
  const std::uint64_t bad = sum.failures + sum.timeouts;
  const std::uint64_t answered = sum.successes + bad;
  if (answered < config_.min_requests_in_window) return BreakerTransition::kNone;
  if (static_cast<double>(bad) < config_.failure_rate_to_open * static_cast<double>(answered))
    return BreakerTransition::kNone;
  open(now);
  return BreakerTransition::kOpened;
}

BreakerState CircuitBreaker::state(MonoTime now) const {
  if (state_ == BreakerState::kOpen && now >= opened_at_ + config_.open_for)
    return BreakerState::kHalfOpen;
  return state_;
}

BreakerStats CircuitBreaker::stats(MonoTime now) const {
  const Bucket sum = window_sum(now);
  BreakerStats s;
  s.state = state(now);
  s.successes = sum.successes;
  s.failures = sum.failures;
  s.timeouts = sum.timeouts;
  s.rejections = sum.rejections;
  s.probes_in_flight = state_ == BreakerState::kHalfOpen ? probes_in_flight_ : 0;
  s.times_opened = transitions_.opened;
  return s;
}

// ---- BreakerSet ----

std::string check_breaker_set_config(const BreakerSetConfig& c) {
  if (auto error = check_breaker_config(c.breaker); !error.empty()) return error;
  if (c.forget_after.count() <= 0)
    return "breaker set: forget_after must be a positive number of ms";
  return "";
}

BreakerSet::BreakerSet(BreakerSetConfig config)
    : config_(checked(config, check_breaker_set_config)) {}

BreakerSet::Entry& BreakerSet::entry(const std::string& address, MonoTime now) {
  auto it = breakers_.find(address);
  if (it == breakers_.end())
    it = breakers_.emplace(address, Entry{CircuitBreaker(config_.breaker), now}).first;
  it->second.last_seen = now;
  return it->second;
}

bool BreakerSet::allow(const std::string& address, MonoTime now) {
  forget_idle(now);
  return entry(address, now).breaker.allow(now);
}

BreakerTransition BreakerSet::record(const std::string& address, MonoTime now,
                                     CallOutcome outcome) {
  return entry(address, now).breaker.record(now, outcome);
}

BreakerStats BreakerSet::stats(const std::string& address, MonoTime now) const {
  if (auto it = breakers_.find(address); it != breakers_.end())
    return it->second.breaker.stats(now);
  return BreakerStats{};
}

std::map<std::string, BreakerStats> BreakerSet::all(MonoTime now) const {
  std::map<std::string, BreakerStats> out;
  for (const auto& [address, e] : breakers_)
    out.emplace(address, e.breaker.stats(now));
  return out;
}

BreakerCensus BreakerSet::census(MonoTime now) const {
  BreakerCensus census;
  census.transitions = forgotten_;
  for (const auto& [address, e] : breakers_) {
    switch (e.breaker.state(now)) {
      case BreakerState::kClosed:
        ++census.closed;
        break;
      case BreakerState::kOpen:
        ++census.open;
        break;
      case BreakerState::kHalfOpen:
        ++census.half_open;
        break;
    }
    census.transitions += e.breaker.transitions();
  }
  return census;
}

void BreakerSet::forget_idle(MonoTime now) {
  // A full sweep at most once per forget_after/4: the cost stays off the hot
  // path and an idle address lives at most 1.25 * forget_after.
  if (now < next_sweep_) return;
  next_sweep_ = now + std::max(Duration{1}, config_.forget_after / 4);
  std::erase_if(breakers_, [&](const auto& kv) {
    const bool idle = now - kv.second.last_seen >= config_.forget_after;
    if (idle) forgotten_ += kv.second.breaker.transitions();  // counters never go down
    return idle;
  });
}

}  // namespace cascade::agent
