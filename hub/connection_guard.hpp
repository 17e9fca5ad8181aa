#pragma once
// Bounds what connections that never say anything useful can cost a hub.
//
// A ZeroMQ ROUTER accepts every TCP connection and keeps it (an fd, buffers,
// a pipe) for as long as the peer keeps it open; libzmq 4.3 has no per-peer
// disconnect. This class decides which connections to close; the I/O shell
// (hub/connection_monitor.hpp) learns of connections from the socket monitor
// (by fd), tells this class which fd each valid message came from, and closes
// what it is told to with shutdown(2), after which libzmq drops the
// connection itself. Connections that never finish the ZeroMQ handshake are
// libzmq's business (ZMQ_HANDSHAKE_IVL); this class sees them come and go.
//
// Why these rules:
// - Connection limit: a connection accepted while `max_connections` are open
//   is closed at once. The limit keeps the hub below its open-file limit
//   (libzmq spins on a listener that cannot accept) and bounds the memory
//   idle connections hold (about 26 KiB each).
// - Idle timeout: a connection with no valid message for `idle_timeout`
//   (counted from its accept or its last valid message) is closed. An agent
//   beats every interval, so a default of several leases never closes a
//   working agent; a standby connection (an agent's DEALER to a hub it does
//   not beat to) is closed and ZeroMQ reconnects it, at a cost of one
//   handshake per idle timeout.
// - Trusted peers are never closed for idleness: a lower-tier hub's uplink
//   (an UpBeat with a sender tier) or a proxy (batch frames) may be quiet
//   while its own agents are, and cutting it would cut all of them.
// - Cap on mass closes: at most `max_idle_closes_per_tick` idle connections
//   are closed per tick, oldest deadline first; the cap holding some back is
//   counted. A hub that stalled must not close its whole fleet in one pass
//   (the shell also defers ticks while its receive queue is not drained).
//
// Sans-IO: time comes in as `now`; fds are opaque numbers here. An fd is
// reused by the kernel after a close, so the shell must report events in the
// order libzmq emitted them (closed before the next accepted on that fd).
// Thread-safety: none; one owning thread drives it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/hub/lease_queue.hpp"

namespace cascade::hub {

struct ConnectionGuardConfig {
  std::size_t max_connections = 65'536;        // open connections; 0 = no limit
  Duration idle_timeout{30'000};               // no valid message for this long: closed; 0 = never
  std::size_t max_idle_closes_per_tick = 256;  // idle closes per tick; the rest wait a tick
};

// "" when usable, else what is wrong.
std::string check_connection_guard_config(const ConnectionGuardConfig& config);

// The connection limit a process can hold with `open_file_limit` fds: the
// configured one, lowered to leave `reserve` fds for everything else.
std::size_t effective_connection_limit(std::size_t configured, std::uint64_t open_file_limit,
                                       std::size_t reserve);

// Connection counters, declared once (listed in the hub's status).
#define CASCADE_CONNECTION_COUNTERS(X)                                                  \
  X(connections_accepted)    /* connections the listener accepted */                    \
  X(connections_refused)     /* ... closed at once: the connection limit was reached */ \
  X(connections_idle_closed) /* closed: no valid message within the idle timeout */     \
  X(idle_closes_deferred)    /* ticks at which the per-tick cap held closes back */     \
  X(connections_closed)      /* connections that ended, whoever closed them */          \
  X(handshakes_failed)       /* ZeroMQ handshakes that failed or timed out */

struct ConnectionCounters {
#define CASCADE_DECLARE_COUNTER(name) std::uint64_t name = 0;
  CASCADE_CONNECTION_COUNTERS(CASCADE_DECLARE_COUNTER)
#undef CASCADE_DECLARE_COUNTER
  std::vector<std::pair<std::string, std::uint64_t>> list() const;
};

// What a valid message says about the connection it came on.
enum class PeerKind {
  kAgent,    // an agent or a tool: must keep talking
  kTrusted,  // a lower-tier hub's uplink or a proxy: never closed for idleness
};

class ConnectionGuard {
 public:
  explicit ConnectionGuard(ConnectionGuardConfig config) : config_(config) {}

  // A connection was accepted on `fd`. False: over the limit, close it now
  // (counted; it is not tracked). An fd already tracked is taken as a new
  // connection (the close of the old one was missed).
  bool accepted(int fd, MonoTime now);
  // A valid message came on `fd`; unknown fds are ignored.
  void valid_message(int fd, MonoTime now, PeerKind kind);
  // The connection on `fd` ended; unknown fds are ignored.
  void closed(int fd);
  // The connections to close now for idleness, oldest deadline first, at
  // most the per-tick cap. They are forgotten here: their closed() is ignored.
  std::vector<int> tick(MonoTime now);
  // A ZeroMQ handshake failed or timed out (its close follows).
  void note_handshake_failed() { ++counters_.handshakes_failed; }

  std::optional<MonoTime> next_deadline() const { return idle_.next_deadline(); }
  std::size_t open() const { return connections_.size(); }
  std::size_t trusted() const { return trusted_; }
  const ConnectionCounters& counters() const { return counters_; }
  const ConnectionGuardConfig& config() const { return config_; }

 private:
  // Queued for idleness unless trusted or without an idle timeout.
  struct Connection : LeaseHook {
    explicit Connection(int on_fd) : fd(on_fd) {}
    int fd;
    bool trusted = false;
  };

  void forget(std::unordered_map<int, Connection>::iterator it);

  ConnectionGuardConfig config_;
  std::unordered_map<int, Connection> connections_;
  LeaseQueue<Connection> idle_;
  std::size_t trusted_ = 0;
  ConnectionCounters counters_;
};

}  // namespace cascade::hub
