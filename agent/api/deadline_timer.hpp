#pragma once
// A thread that calls `fire(now)` whenever the deadline `next()` reports has
// come: the adapter that gives a state machine that only knows `now` (such
// as ConsulServices' TTL checks) its time. It looks at the deadline again
// after every firing, when poked (something may have moved it earlier), and
// at least once a second.
//
// `next` and `fire` are called on the timer's thread, without its lock held.

#include <condition_variable>
#include <functional>
#include <mutex>
#include <optional>
#include <thread>

#include "cascade/common/clock.hpp"

namespace cascade::agent::api {

class DeadlineTimer {
 public:
  using Next = std::function<std::optional<MonoTime>()>;
  using Fire = std::function<void(MonoTime now)>;

  DeadlineTimer(const Clock& clock, Next next, Fire fire);
  ~DeadlineTimer();  // stops and joins the thread
  DeadlineTimer(const DeadlineTimer&) = delete;
  DeadlineTimer& operator=(const DeadlineTimer&) = delete;

  // The deadline may have moved: look again now.
  void poke();

 private:
  void run();

  const Clock& clock_;
  Next next_;
  Fire fire_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool poked_ = false;
  bool stop_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace cascade::agent::api
