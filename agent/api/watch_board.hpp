#pragma once
// Parked long-poll watches (?index=V&wait=30s), answered when their service
// changes or their wait ends. Changes come from the agent's cache (its
// downstream beats and pushes, through Client::on_change): a thousand
// watchers of a service cost the hub nothing more than the one use the
// agent's beats already carry.
//
// A thread of the board's own answers the watches, so neither the Client's
// I/O thread (which delivers changes) nor the HTTP threads do that work.
// Watches of one service woken by one change share one rendering per variant.
// Waits are jittered (up to 1/16 longer, as Consul does), so watchers that
// parked together do not all come back together.

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <unordered_map>

#include "cascade/agent/agent_core.hpp"
#include "cascade/agent/api/watch_set.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/random.hpp"
#include "cascade/http/exchange.hpp"

namespace cascade::agent::api {

// What the board asks of the agent (a Client in the daemon; fakes in tests).
struct WatchSource {
  // The version cached for a service, cheaply, marking it used (nullopt: not cached).
  std::function<std::optional<std::uint64_t>(const proto::ServiceKey&)> version;
  // The service as cached now (nullopt: not cached any more).
  std::function<std::optional<Resolution>(const proto::ServiceKey&)> current;
};

class WatchBoard {
 public:
  // How a watch is answered, from the service as it is (nullptr: not cached).
  using Render = std::function<http::Response(const Resolution* now)>;

  WatchBoard(WatchSource source, const Clock& clock, std::uint64_t seed);
  // Stops the thread. Watches still parked are left to their Responders'
  // owner (the HTTP server answers them when it stops).
  ~WatchBoard();
  WatchBoard(const WatchBoard&) = delete;
  WatchBoard& operator=(const WatchBoard&) = delete;

  // Answers through `responder` once the cached version of `service`
  // differs from `index`: at once (on this thread) when it does already,
  // else when it changes or `wait` ends.
  void watch(const proto::ServiceKey& service, std::uint64_t index, Duration wait,
             std::string variant, Render render, http::ResponderPtr responder);
  // A cached list changed (called on the Client's I/O thread): its watches
  // are answered on the board's thread.
  void on_change(const Resolution& resolution);

  std::size_t parked() const;

 private:
  struct Waiter {
    proto::ServiceKey service;
    std::string variant;
    Render render;
    http::ResponderPtr responder;
  };
  struct Wakeup {
    std::shared_ptr<const Resolution> now;  // null: answer from the cache (wait ended)
    std::vector<Waiter> waiters;
  };
  void run();
  std::vector<Waiter> take(const std::vector<WatchSet::Id>& ids);  // caller holds mu_
  void answer(const Wakeup& wakeup);  // on the board's thread, unlocked

  WatchSource source_;
  const Clock& clock_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  Rng rng_;
  WatchSet set_;
  std::unordered_map<WatchSet::Id, Waiter> waiters_;
  std::deque<Wakeup> wakeups_;
  MonoTime next_touch_{};
  bool stop_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace cascade::agent::api
