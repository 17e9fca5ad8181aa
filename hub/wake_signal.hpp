#pragma once
// A readable file descriptor that one thread raises to wake another
// thread's zmq::poll: an eventfd.
//
// Why a descriptor and not a condition variable: the thread to wake sleeps
// in zmq::poll beside its sockets, which can wait on a plain fd but on
// nothing else. Used by the owner's mailbox (tasks from other threads) and
// by the store writer (a commit tried).
//
//   signal.raise();                                     // any thread
//   ... poll(..., signal.poll_item(), ...) ...          // the waiting thread
//   signal.reset();  // before looking at what it signals: a raise that
//                    // races with the look wakes the next poll
//
// Thread-safety: raise() from any thread; reset() and poll_item() from the
// waiting thread.

#include <zmq.hpp>

namespace cascade::hub {

class WakeSignal {
 public:
  // Throws std::system_error when the kernel refuses an eventfd.
  WakeSignal();
  ~WakeSignal();
  WakeSignal(const WakeSignal&) = delete;
  WakeSignal& operator=(const WakeSignal&) = delete;

  void raise();
  void reset();
  // Readable from the first raise() after the last reset().
  zmq::pollitem_t poll_item() const { return {nullptr, fd_, ZMQ_POLLIN, 0}; }

 private:
  int fd_;
};

}  // namespace cascade::hub
