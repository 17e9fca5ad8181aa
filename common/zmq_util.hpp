#pragma once
// Small helpers over cppzmq shared by the hub, the agent and the tools.

#include <chrono>
#include <zmq.hpp>

namespace cascade {

// zmq::poll that treats a signal interrupting the wait as "nothing ready":
// the caller's loop then looks at its stop flag instead of dying on EINTR.
inline void poll_ignoring_signals(zmq::pollitem_t* items, std::size_t count,
                                  std::chrono::milliseconds timeout) {
  try {
    zmq::poll(items, count, timeout);
  } catch (const zmq::error_t& e) {
    if (e.num() != EINTR) throw;
    for (std::size_t i = 0; i < count; ++i)
      items[i].revents = 0;
  }
}

}  // namespace cascade
