#pragma once
// Tells a CurveZMQ client that the server refused its key. Without this, a
// refused handshake looks like a hub that never answers: libzmq only reports
// it as a socket-monitor event (ZMQ_EVENT_HANDSHAKE_FAILED_AUTH), which
// this class listens for on an inproc PAIR of the socket's context.
//
// Threading: the thread that owns the watched socket.

#include <cstdint>
#include <string>
#include <zmq.hpp>

namespace cascade {

class HandshakeMonitor {
 public:
  // Starts monitoring `socket` (before or after its connect). `context` is
  // the socket's.
  HandshakeMonitor(zmq::context_t& context, zmq::socket_t& socket);
  ~HandshakeMonitor();
  HandshakeMonitor(const HandshakeMonitor&) = delete;
  HandshakeMonitor& operator=(const HandshakeMonitor&) = delete;

  // For a poll: readable when an event is waiting.
  zmq::pollitem_t poll_item() { return {monitor_.handle(), 0, ZMQ_POLLIN, 0}; }

  // Reads every waiting event; returns how many were refusals by the server
  // (its ZAP handler answered 4xx: the key is not authorised there).
  std::uint64_t take_refusals();
  std::uint64_t refusals() const { return refusals_; }

 private:
  zmq::socket_t& socket_;
  zmq::socket_t monitor_;
  std::uint64_t refusals_ = 0;
};

}  // namespace cascade
