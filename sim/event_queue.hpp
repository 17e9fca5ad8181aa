#pragma once
// A virtual clock and the events scheduled on it.
//
// Events run in (time, scheduling order): two events at the same millisecond
// run in the order they were scheduled, so a run depends on nothing but its
// inputs. Time moves only when the next event is taken; nothing sleeps.
//
// The clock counts whole milliseconds, so the queue is a timing wheel: one
// bucket per millisecond of the next kHorizon, each holding its events in the
// order they were scheduled, and a heap by (time, order) for the events
// beyond. A bucket's time enters the horizon before anything can be scheduled
// into it directly, and the heap's events for that time move into it at that
// moment, oldest first: each bucket stays in scheduling order, and the run is
// the one a single heap of every event gives. (A heap of every event spent a
// tenth of a 20,000-agent simulation sifting, a cache miss at each level.)
// Thread-safety: none; one simulation runs on one thread.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::sim {

class EventQueue {
 public:
  using Action = std::function<void()>;

  explicit EventQueue(MonoTime start) : now_(start), wheel_(kHorizon) {}

  MonoTime now() const { return now_; }

  // Schedules `action` at `when`; a time in the past means "now, after what is already due".
  void at(MonoTime when, Action action) {
    when = std::max(when, now_);
    if (when - now_ < Duration{kHorizon}) {
      bucket(when).push_back(std::move(action));
      ++in_wheel_;
    } else {
      far_.push_back(Far{when, next_seq_++, std::move(action)});
      std::push_heap(far_.begin(), far_.end(), Later{});
    }
  }
  void after(Duration delay, Action action) { at(now_ + delay, std::move(action)); }

  // Runs every event due at or before `until`, then leaves the clock at `until`.
  void run_until(MonoTime until) {
    while (now_ <= until) {
      run_bucket();
      if (now_ == until) break;
      advance(until);
    }
  }

  std::size_t pending() const { return in_wheel_ + far_.size(); }
  std::uint64_t executed() const { return executed_; }

 private:
  static constexpr std::int64_t kHorizon = 4096;  // milliseconds the wheel covers

  // Beyond the horizon, ordered by time then by scheduling order.
  struct Far {
    MonoTime at;
    std::uint64_t seq;
    Action action;
  };
  // std::push_heap builds a max-heap; the comparison is inverted so the
  // earliest (at, seq) ends up at the front.
  struct Later {
    bool operator()(const Far& a, const Far& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };

  std::vector<Action>& bucket(MonoTime t) {
    const std::int64_t slot = to_ms(t) % kHorizon;  // negative before the clock's epoch
    return wheel_[static_cast<std::size_t>(slot < 0 ? slot + kHorizon : slot)];
  }

  // The bucket of now_, including what its own events add to it.
  void run_bucket() {
    auto& due = bucket(now_);
    for (std::size_t i = 0; i < due.size(); ++i) {
      Action action = std::move(due[i]);  // the bucket may grow while it runs
      --in_wheel_;
      ++executed_;
      action();
    }
    due.clear();
  }

  // One millisecond on, or straight to the next event (or `until`) when the
  // wheel is empty; the heap's events now within the horizon move in.
  void advance(MonoTime until) {
    MonoTime next = now_ + Duration{1};
    if (in_wheel_ == 0) next = far_.empty() ? until : std::clamp(far_.front().at, next, until);
    now_ = next;
    while (!far_.empty() && far_.front().at - now_ < Duration{kHorizon}) {
      std::pop_heap(far_.begin(), far_.end(), Later{});
      bucket(far_.back().at).push_back(std::move(far_.back().action));
      ++in_wheel_;
      far_.pop_back();
    }
  }

  MonoTime now_;
  std::vector<std::vector<Action>> wheel_;  // by time modulo kHorizon
  std::size_t in_wheel_ = 0;
  std::vector<Far> far_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t executed_ = 0;
};

}  // namespace cascade::sim
