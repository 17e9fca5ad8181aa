#pragma once
// One thread's epoll set of HTTP connections (an internal piece of Server).
// Connections stay in the set for their whole life, edge-triggered for input
// and output: a parked request needs no epoll_ctl to be answered. The loop
// also accepts (the first loop holds the listening socket), closes idle
// connections once a second, and on stop answers what is parked.
//
// Other threads reach a loop by message (adopt a connection, resume one,
// stop), through an eventfd in the same set.

#include <sys/epoll.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "cascade/http/connection.hpp"

namespace cascade::http {

class EventLoop {
 public:
  // Throws std::runtime_error when the kernel refuses an epoll set or an eventfd.
  EventLoop();
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // Before run(): `listener` (non-blocking) is watched; `on_acceptable` runs
  // on this loop's thread when it has connections to accept, and returns
  // false to pause accepting for a moment (out of file descriptors).
  void listen(int listener, std::function<bool()> on_acceptable);

  // On the loop's thread until stop(): waits for events and serves them.
  void run();

  // Any thread.
  void adopt(std::shared_ptr<Connection> connection);
  void resume(std::shared_ptr<Connection> connection);
  // Stops accepting, answers every parked request `shed`, gives the answers
  // up to `drain` to be written, closes every connection and returns from run().
  void stop(Response shed, std::chrono::milliseconds drain);

 private:
  enum class Kind { kAdopt, kResume };
  struct Message {
    Kind kind;
    std::shared_ptr<Connection> connection;
  };
  using Connections = std::unordered_map<Connection*, std::shared_ptr<Connection>>;

  void post(Message message);
  void wake();
  void serve(const epoll_event& event, SteadyTime now);
  void take_messages(SteadyTime now);
  void accept(SteadyTime now);
  void watch_listener(std::uint32_t events);
  void sweep(SteadyTime now);
  void shed_and_drain();

  int epoll_ = -1;
  int wake_fd_ = -1;
  int listener_ = -1;
  std::function<bool()> on_acceptable_;
  SteadyTime accept_paused_until_{};
  bool accept_paused_ = false;

  std::mutex mu_;  // guards the messages and the stop request
  std::vector<Message> messages_;
  Response shed_;  // what parked requests get at the stop (set by stop())
  std::chrono::milliseconds drain_{0};
  std::atomic<bool> stopping_{false};

  Connections connections_;  // only on the loop's thread
  // Tags that tell the eventfd and the listener from connections in epoll data.
  char wake_tag_ = 0;
  char listen_tag_ = 0;
};

}  // namespace cascade::http
