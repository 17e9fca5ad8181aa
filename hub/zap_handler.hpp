#pragma once
// The ZAP handler (ZeroMQ RFC 27) of a process's context: libzmq asks it, for
// every CurveZMQ handshake on a socket with a zap_domain, whether that
// client's public key may connect. An adapter: it only looks keys up in an
// AuthorizedKeys table; what a key may then do is decided by the cores.
//
// Accepted: status 200 with the client's public key (Z85) as the user id,
// which the server reads back from each message's "User-Id" property.
// Refused (unknown key, or a mechanism other than CURVE): status 400; the
// client never gets a message through, and is counted and logged
// (rate-limited) with its address.
//
// Threading: one thread of its own answers the requests. set_keys() and the
// counters may be called from any thread. The destructor stops the thread.
// One handler per zmq::context_t: it binds inproc://zeromq.zap.01.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/common/clock.hpp"
#include "cascade/common/log.hpp"
#include "cascade/hub/authorized_keys.hpp"

namespace cascade::hub {

class ZapHandler {
 public:
  // Binds the ZAP endpoint on `context` and starts answering. Throws
  // zmq::error_t (EADDRINUSE) when the context has a handler already.
  ZapHandler(zmq::context_t& context, std::shared_ptr<const AuthorizedKeys> keys);
  ~ZapHandler();
  ZapHandler(const ZapHandler&) = delete;
  ZapHandler& operator=(const ZapHandler&) = delete;

  // Handshakes from now on are checked against `keys`. Connections already
  // made stay (the server checks every message's key against its own table).
  void set_keys(std::shared_ptr<const AuthorizedKeys> keys);

  std::uint64_t accepted() const { return accepted_.load(std::memory_order_relaxed); }
  std::uint64_t refused() const { return refused_.load(std::memory_order_relaxed); }

 private:
  using Frames = std::vector<zmq::message_t>;
  void serve();
  Frames answer(const Frames& request);
  void log_refusal(std::string_view address, std::string_view why);

  zmq::socket_t socket_;    // REP on the ZAP endpoint
  zmq::socket_t stop_in_;   // PAIR: the destructor's wake-up ...
  zmq::socket_t stop_out_;  // ... and its sending end
  mutable std::mutex mu_;   // guards keys_
  std::shared_ptr<const AuthorizedKeys> keys_;
  std::atomic<std::uint64_t> accepted_{0};
  std::atomic<std::uint64_t> refused_{0};
  // The handler's thread only. Real time: only the log's pace depends on it.
  SystemClock clock_;
  RateLimit refusal_log_{10, Duration{10'000}};
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace cascade::hub
