#pragma once
// Per-address circuit breaker: stops sending calls to an address that keeps
// failing, so a dead or overloaded instance costs its callers one fast "no"
// instead of a timeout each, and gets time to recover.
//
//   Closed --(failure rate >= threshold, with enough volume)--> Open
//   Open --(open_for elapsed)--> HalfOpen
//   HalfOpen --(a probe succeeds)--> Closed (window reset)
//   HalfOpen --(a probe fails or times out)--> Open (a fresh open_for)
//
// Sans-IO: every method takes `now`; nothing reads a clock. Thread-safety:
// none; the Caller (agent/caller.hpp) serialises access.
//
// The minimum volume keeps a quiet address from opening on its first unlucky
// call (1 failure of 1 is a 100% rate); half-open admits only a few probes so a
// recovering instance is not flattened by every caller returning at once.

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cascade/agent/bucket_ring.hpp"
#include "cascade/common/clock.hpp"

namespace cascade::agent {

// How one admitted call ended, as the breaker sees it.
enum class CallOutcome : std::uint8_t { kSuccess, kFailure, kTimeout };

enum class BreakerState : std::uint8_t { kClosed, kOpen, kHalfOpen };

// What one record() did to the breaker. kOpened is the fast-fail signal the
// Client reports to the hub.
enum class BreakerTransition : std::uint8_t { kNone, kOpened, kClosed };

const char* to_string(BreakerState state);

// How often a breaker changed state, since it was created. The move to
// half-open happens when open_for has passed and is counted at the breaker's
// next allow() or record() (state() already reports it before then).
struct BreakerTransitions {
  std::uint64_t opened = 0;
  std::uint64_t half_opened = 0;
  std::uint64_t closed = 0;  // a half-open probe succeeded
  BreakerTransitions& operator+=(const BreakerTransitions& other);
};

struct BreakerConfig {
  std::size_t buckets = 10;                   // the window is buckets * bucket_width long
  Duration bucket_width{1000};                // ms
  double failure_rate_to_open = 0.5;          // (failures + timeouts) / answered calls, in (0, 1]
  std::uint32_t min_requests_in_window = 20;  // calls in the window before the rate counts
  Duration open_for{5000};                    // ms an open breaker refuses calls before probing
  std::uint32_t half_open_probes = 3;         // concurrent probes admitted while half-open
};

// "" when the config is usable, else what is wrong with it.
std::string check_breaker_config(const BreakerConfig& config);

struct BreakerStats {
  BreakerState state = BreakerState::kClosed;
  // Counts in the current window (reset when the breaker closes again).
  std::uint64_t successes = 0;
  std::uint64_t failures = 0;
  std::uint64_t timeouts = 0;
  std::uint64_t rejections = 0;  // calls the breaker refused
  std::uint32_t probes_in_flight = 0;
  std::uint64_t times_opened = 0;  // since the breaker was created
};

// Every breaker of a BreakerSet at once, for metrics: how many are in each
// state now, and every transition any of them made.
struct BreakerCensus {
  std::size_t closed = 0;
  std::size_t open = 0;
  std::size_t half_open = 0;
  BreakerTransitions transitions{};  // forgotten breakers' included
};

class CircuitBreaker {
 public:
  // Throws std::invalid_argument with check_breaker_config's message.
  explicit CircuitBreaker(BreakerConfig config);

  // May a call go to this address now? False counts a rejection. In
  // half-open, true takes a probe slot that the matching record() gives back
  // (a slot never given back is reclaimed after another open_for).
  bool allow(MonoTime now);
  // The outcome of a call allow() admitted. In half-open every record is
  // taken as a probe's result: the breaker cannot tell a probe from a call
  // admitted before it opened, and either says how the address is doing now.
  BreakerTransition record(MonoTime now, CallOutcome outcome);

  BreakerState state(MonoTime now) const;
  BreakerStats stats(MonoTime now) const;
  const BreakerTransitions& transitions() const { return transitions_; }

 private:
  struct Bucket {
    std::int64_t index = -1;  // which bucket_width-long slice of time it counts
    std::uint64_t successes = 0;
    std::uint64_t failures = 0;
    std::uint64_t timeouts = 0;
    std::uint64_t rejections = 0;
  };

  Bucket window_sum(MonoTime now) const;
  // Open -> HalfOpen once open_for has passed; lost probes are given back.
  void advance(MonoTime now);
  void open(MonoTime now);
  void close();

  BreakerConfig config_;
  BucketRing<Bucket> ring_;
  BreakerState state_ = BreakerState::kClosed;
  MonoTime opened_at_{};
  // When the probe slots were last handed out afresh (half-open entered, or
  // lost probes reclaimed).
  MonoTime probes_since_{};
  std::uint32_t probes_in_flight_ = 0;
  BreakerTransitions transitions_;
};

struct BreakerSetConfig {
  BreakerConfig breaker{};
  // An address not asked about for this long is forgotten (ms): instances come
  // and go, and the set must not grow with every address ever called.
  Duration forget_after{std::chrono::minutes(10)};
};

std::string check_breaker_set_config(const BreakerSetConfig& config);

// One breaker per address, created on first use. Thread-safety: none.
class BreakerSet {
 public:
  explicit BreakerSet(BreakerSetConfig config);  // throws std::invalid_argument

  bool allow(const std::string& address, MonoTime now);
  BreakerTransition record(const std::string& address, MonoTime now, CallOutcome outcome);

  // Stats of one address; a closed, empty breaker for an address not tracked.
  BreakerStats stats(const std::string& address, MonoTime now) const;
  // Every tracked address, for "breaker state by address".
  std::map<std::string, BreakerStats> all(MonoTime now) const;
  std::size_t size() const { return breakers_.size(); }
  // One pass over the tracked addresses: for a scrape, not for every call.
  BreakerCensus census(MonoTime now) const;

  // Drops addresses idle for forget_after. Called by every allow(); public so
  // a quiet process can be swept too.
  void forget_idle(MonoTime now);

 private:
  struct Entry {
    CircuitBreaker breaker;
    MonoTime last_seen;
  };
  Entry& entry(const std::string& address, MonoTime now);

  BreakerSetConfig config_;
  std::map<std::string, Entry> breakers_;
  BreakerTransitions forgotten_;  // of the breakers forget_idle() dropped
  MonoTime next_sweep_{};
};

}  // namespace cascade::agent
