#pragma once
// A virtual clock and the events scheduled on it.
//
// Events run in (time, scheduling order): two events at the same millisecond
// run in the order they were scheduled, so a run depends on nothing but its
// inputs. Time moves only when the next event is taken; nothing sleeps.
// Thread-safety: none; one simulation runs on one thread.

#include <algorithm>
#include <cstdint>
#include <functional>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::sim {

class EventQueue {
 public:
  using Action = std::function<void()>;

  explicit EventQueue(MonoTime start) : now_(start) {}

  MonoTime now() const { return now_; }

  // Schedules `action` at `when`; a time in the past means "now, after what is already due".
  void at(MonoTime when, Action action) {
    events_.push_back(Event{std::max(when, now_), next_seq_++, std::move(action)});
    std::push_heap(events_.begin(), events_.end(), Later{});
  }
  void after(Duration delay, Action action) { at(now_ + delay, std::move(action)); }

  // Runs every event due at or before `until`, then leaves the clock at `until`.
  void run_until(MonoTime until) {
    while (!events_.empty() && events_.front().at <= until)
      run_next();
    now_ = std::max(now_, until);
  }

  std::size_t pending() const { return events_.size(); }
  std::uint64_t executed() const { return executed_; }

 private:
  struct Event {
    MonoTime at;
    std::uint64_t seq;
    Action action;
  };
  // std::push_heap builds a max-heap; "later" on top would be wrong, so the
  // comparison is inverted: the earliest (at, seq) ends up at the front.
  struct Later {
    bool operator()(const Event& a, const Event& b) const {
      return a.at != b.at ? a.at > b.at : a.seq > b.seq;
    }
  };

  void run_next() {
    std::pop_heap(events_.begin(), events_.end(), Later{});
    Event event = std::move(events_.back());
    events_.pop_back();
    now_ = event.at;
    ++executed_;
    event.action();  // may schedule more events
  }

  MonoTime now_;
  std::uint64_t next_seq_ = 0;
  std::uint64_t executed_ = 0;
  std::vector<Event> events_;
};

}  // namespace cascade::sim
