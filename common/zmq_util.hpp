#pragma once
// Small helpers over cppzmq shared by the hub, the agent and the tools.

#include <chrono>
#include <cstdint>
#include <vector>
#include <zmq.hpp>

#include "cascade/common/link_timing.hpp"

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

// The options of every socket that connects to a hub (an agent's DEALER, a
// hub's uplink, a proxy's upstream): liveness and reconnect timing from
// `timing` (common/link_timing.hpp), and ZMQ_IMMEDIATE, so nothing is queued
// for a connection that is not up (the sender's core retries on its own
// schedule; old beats must not pile up and burst on reconnect) and the
// socket is writable exactly while a connection is established (LinkWatch).
// Call before connect().
inline void configure_link(zmq::socket_t& socket, const LinkTiming& timing) {
  const auto ms = [](std::chrono::milliseconds d) { return static_cast<int>(d.count()); };
  socket.set(zmq::sockopt::linger, 0);
  socket.set(zmq::sockopt::immediate, 1);
  socket.set(zmq::sockopt::heartbeat_ivl, ms(timing.heartbeat_interval));
  socket.set(zmq::sockopt::heartbeat_timeout, ms(timing.heartbeat_timeout));
  socket.set(zmq::sockopt::heartbeat_ttl, ms(timing.heartbeat_ttl));
  socket.set(zmq::sockopt::handshake_ivl, ms(timing.handshake_timeout));
  socket.set(zmq::sockopt::connect_timeout, ms(timing.connect_timeout));
  socket.set(zmq::sockopt::reconnect_ivl, ms(timing.reconnect_interval));
  socket.set(zmq::sockopt::reconnect_ivl_max, ms(timing.reconnect_interval_max));
}

// Whether a socket set up by configure_link has a connection, as the socket
// itself says: with ZMQ_IMMEDIATE it is writable exactly while one is up.
// The adapter calls update() after every poll pass, and polls for
// poll_events(): while the link is down that includes ZMQ_POLLOUT, so the
// poll wakes the moment ZeroMQ has reconnected. update() says when the link
// came back, which the adapter tells its core (AgentCore::on_link_up).
// Starts "up": only a return after a seen loss counts.
class LinkWatch {
 public:
  short poll_events() const { return static_cast<short>(ZMQ_POLLIN | (up_ ? 0 : ZMQ_POLLOUT)); }

  // True when the link is up again after update() last saw it down.
  bool update(zmq::socket_t& socket) {
    const bool writable = (socket.get(zmq::sockopt::events) & ZMQ_POLLOUT) != 0;
    const bool came_up = writable && !up_;
    up_ = writable;
    return came_up;
  }
  bool up() const { return up_; }

 private:
  bool up_ = true;
};

// The watches of several sockets polled as items[0 .. n): asks each item for
// what its watch needs, and after the poll returns the indexes of the links
// that came back.
struct LinkWatches {
  std::vector<LinkWatch> watches;

  explicit LinkWatches(std::size_t n) : watches(n) {}
  void set_poll_events(zmq::pollitem_t* items) const {
    for (std::size_t i = 0; i < watches.size(); ++i)
      items[i].events = watches[i].poll_events();
  }
  std::vector<std::size_t> links_back(std::vector<zmq::socket_t>& sockets) {
    std::vector<std::size_t> back;
    for (std::size_t i = 0; i < watches.size(); ++i)
      if (watches[i].update(sockets[i])) back.push_back(i);
    return back;
  }
};

}  // namespace cascade
