#pragma once
// Work that other threads hand to the thread owning a hub's (or a proxy's)
// state, and the answers they wait for.
//
// The registry has one owner (hub/hub_server.hpp): a metrics scrape or an
// HTTP admin request never reads it from its own thread. It posts a task
// here instead; the owner runs the task between two passes of its loop,
// where the state is consistent, and the poster waits for the result with a
// deadline. The mailbox's eventfd sits in the owner's poll set, so an idle
// owner wakes at once rather than at its next timer.
//
//   // scrape thread:
//   auto status = ask<proto::StatusReply>(mailbox, [&] { return server.status(); },
//                                         std::chrono::seconds(1));
//   // owning thread, when the poll item fired:
//   mailbox.run_pending();
//
// A task runs on the owning thread and must be short: every beat waits
// behind it. Thread-safety: post() and ask() from any thread; poll_item()
// and run_pending() from the owner only.

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>
#include <zmq.hpp>

#include "cascade/hub/wake_signal.hpp"

namespace cascade::hub {

class OwnerMailbox {
 public:
  // Throws std::system_error when the kernel refuses an eventfd.
  OwnerMailbox() = default;

  void post(std::function<void()> task);

  // For the owner's zmq::poll: readable while tasks are waiting.
  zmq::pollitem_t poll_item() const { return wake_.poll_item(); }
  // Runs the tasks posted so far, in order; returns how many ran. A task
  // that throws is logged and the others still run.
  std::size_t run_pending();

 private:
  WakeSignal wake_;
  std::mutex mutex_;
  std::vector<std::function<void()>> tasks_;
};

// Runs `read` on the owning thread and returns its result, or nullopt when
// the owner did not get to it within `timeout` (stopped, or stuck behind a
// long pass). A late result is dropped: the task holds its own promise.
template <typename T>
std::optional<T> ask(OwnerMailbox& mailbox, std::function<T()> read,
                     std::chrono::milliseconds timeout) {
  auto promise = std::make_shared<std::promise<T>>();
  auto answer = promise->get_future();
  mailbox.post([promise, read = std::move(read)] { promise->set_value(read()); });
  if (answer.wait_for(timeout) != std::future_status::ready) return std::nullopt;
  return answer.get();
}

}  // namespace cascade::hub
