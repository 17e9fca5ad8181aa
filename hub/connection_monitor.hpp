#pragma once
// The I/O side of a ConnectionGuard for one listening ROUTER socket (the hub's
// or a proxy's): learns of connections from libzmq's socket monitor, tells
// the guard which connection each valid message came on, and closes what the
// guard decides.
//
// How, with libzmq 4.3 (no per-peer disconnect on a ROUTER):
// - zmq_socket_monitor publishes ACCEPTED and DISCONNECTED events with the
//   connection's fd on an inproc PAIR this class reads (unbounded queue:
//   libzmq's I/O thread must never wait for us);
// - every frame libzmq's TCP/IPC engine delivers carries the fd it came on
//   (the message property ZMQ_SRCFD, deprecated but kept in 4.3);
// - shutdown(fd, SHUT_RDWR) makes the engine see the end of the stream; libzmq
//   then closes the connection and the fd itself (and a DEALER peer reconnects).
// The owner drains the events before it reads the socket's frames in each
// pass: libzmq emits a connection's ACCEPTED before any of its messages, and
// the close of an fd before its reuse, so the guard sees them in that order.
// A close decided in the microseconds between a drain and the shutdown may
// hit a new connection that reused the fd: it reconnects.
//
// Thread-safety: none; the thread that owns the monitored socket drives it.

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "cascade/common/access.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/log.hpp"
#include "cascade/hub/connection_guard.hpp"

namespace cascade::hub {

// What a listening ROUTER is told before it binds.
struct ListenConfig {
  int backlog = 4096;                // TCP listen queue; the kernel caps it at net.core.somaxconn
  Duration handshake_timeout{5000};  // a connection still in the ZeroMQ handshake is closed
  ConnectionGuardConfig guard;
};

// What a decoded frame says about its connection: nothing when it held no
// valid message; trusted for a proxy's batch or a lower-tier hub's beat. With
// keys (`key` not null), only a hub's or a proxy's key is trusted, whatever
// the frame claims.
std::optional<PeerKind> peer_kind(const proto::DecodedFrame& decoded,
                                  const access::Principal* key = nullptr);

// Sets the listen options of `socket` (before bind).
void apply_listen_options(zmq::socket_t& socket, const ListenConfig& config);

class ConnectionMonitor {
 public:
  // Starts monitoring `socket` (call before it binds). `name` labels log
  // lines. The limit is lowered to fit the process's open-file limit (raised
  // to what the limit needs, when the hard limit allows), with a warning.
  ConnectionMonitor(zmq::socket_t& socket, zmq::context_t& context, const ListenConfig& config,
                    std::string name);
  ~ConnectionMonitor();
  ConnectionMonitor(const ConnectionMonitor&) = delete;
  ConnectionMonitor& operator=(const ConnectionMonitor&) = delete;

  // For the owner's poll set: readable when events are queued.
  zmq::pollitem_t poll_item() { return {events_.handle(), 0, ZMQ_POLLIN, 0}; }
  // Applies every queued event; closes connections over the limit.
  void drain_events(MonoTime now);
  // `frame`, received from the monitored socket, held a valid message.
  void valid_message(zmq::message_t& frame, MonoTime now, PeerKind kind);
  // Closes the connections the guard finds idle.
  void tick(MonoTime now);

  // The counters, with the open and trusted connections, for a status reply.
  void append_counters(std::vector<std::pair<std::string, std::uint64_t>>& out) const;
  const ConnectionGuard& guard() const { return guard_; }

 private:
  void on_event(std::uint16_t event, std::uint32_t value, MonoTime now);
  void close_fd(int fd);

  zmq::socket_t& socket_;
  zmq::socket_t events_;
  ConnectionGuard guard_;
  std::string name_;
  std::size_t peak_open_ = 0;  // most connections open since memory was last trimmed
  RateLimit refused_log_{5, Duration{10'000}};
  RateLimit idle_log_{5, Duration{10'000}};
  RateLimit accept_failed_log_{5, Duration{10'000}};
};

}  // namespace cascade::hub
