#pragma once
// One HTTP/1.1 connection of the server: reads and parses its requests
// (Boost.Beast's parser), hands each whole request to the host, and writes
// the answer. An internal piece of Server (server.cpp); its event loop
// (event_loop.hpp) owns it.
//
// Why it is built this way: a parked request (a watch) is answered by the
// thread that calls its Responder, with one sendmsg() of the head and the
// body on the socket, which stays in its loop's epoll set all along. Waking
// ten thousand watches is then ten thousand sends from one thread, the least
// the kernel allows, with no hand-over to the loop and no epoll_ctl. The loop
// is involved again only when the client sent more meanwhile, or the answer
// did not fit in the socket's buffer.
//
// Thread-safety: one mutex per connection. The loop thread holds it while it
// reads and parses, and releases it around the Handler; answer() takes it
// from any thread. A connection has one request in flight at a time
// (pipelined requests wait in the read buffer until the one before is
// answered), and each request has a number: a Responder answers only its own.

#include <sys/types.h>

#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "cascade/common/net_address.hpp"
#include "cascade/http/exchange.hpp"

namespace cascade::http {

struct ServerCounters;
class EventLoop;

using SteadyTime = std::chrono::steady_clock::time_point;

struct ConnectionLimits {
  std::size_t max_body_bytes = 64 * 1024;
  std::uint32_t max_header_bytes = 8 * 1024;  // request line and headers
  // Closed when it sends nothing for this long between requests (a parked
  // request is timed by its own wait, not by this).
  std::chrono::milliseconds idle_timeout{60'000};
  // After a last answer ("Connection: close", a refused request) the client's
  // remaining input is read and dropped for up to this long before the close,
  // so that a close with unread input (a reset) cannot destroy the answer.
  std::chrono::milliseconds linger_timeout{2'000};
};

// What a connection asks of its server.
class ConnectionHost {
 public:
  virtual ~ConnectionHost() = default;
  // At the end of a request's head: an answer that must not reach the
  // Handler (refused, shutting down), or nullopt to go on.
  virtual std::optional<Response> screen(Request& head) = 0;
  // The whole request: the Handler's answer, or nullopt when parked on `later`.
  virtual Reply dispatch(const Request& request, const ResponderPtr& later) = 0;
  // Bad input from `peer` (malformed, over a limit): logged, rate-limited.
  virtual void bad_input(const SocketAddress& peer, std::string_view what) = 0;
  virtual void closed() = 0;
};

class Connection : public std::enable_shared_from_this<Connection> {
 public:
  // Takes `fd` (non-blocking, connected), closed with the connection.
  Connection(int fd, SocketAddress peer, ConnectionHost& host, EventLoop& loop,
             ServerCounters& counters, const ConnectionLimits& limits);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  int fd() const { return fd_; }

  // On the loop thread: epoll reported `events` (EPOLLIN, EPOLLOUT, ...).
  // True when the connection is closed after them.
  bool on_events(std::uint32_t events, SteadyTime now);
  // On the loop thread: an answer given elsewhere left input to parse. True
  // when the connection is closed after it.
  bool resume(SteadyTime now);
  // On the loop thread: closes it if it has been idle (or lingering) too
  // long. True when it is closed.
  bool close_if_expired(SteadyTime now);
  // On the loop thread, when the server stops: a parked request is answered
  // `response`. True while it still has output to write.
  bool shed(const Response& response);
  void close();

  // Any thread: the answer to request number `request` (its Responder's).
  void answer(std::uint64_t request, Response response);
  void answer(std::uint64_t request, const std::shared_ptr<const SharedResponse>& response);

 private:
  enum class State {
    kReading,    // between requests, or reading one
    kHandling,   // the Handler has the request (on the loop thread)
    kParked,     // waiting for its Responder
    kWriting,    // an answer partly written, the rest when the socket takes it
    kLingering,  // the last answer written; dropping input until the client closes
    kClosed,
  };
  using Lock = std::unique_lock<std::mutex>;
  using Parser = boost::beast::http::request_parser<boost::beast::http::string_body>;
  enum class Parsed { kNeedMore, kRequest, kRefused };

  void pump(Lock& lock, SteadyTime now);
  void serve_buffered(Lock& lock);
  Parsed parse(std::optional<Response>& refusal);
  std::optional<Response> parse_error(const boost::system::error_code& error);
  std::optional<Response> on_head();
  void handle(Lock& lock, Request request, bool keep_alive);
  template <typename Keep, typename Send>
  void answer_with(std::uint64_t request, Keep keep, Send send_now);
  void send(const Response& response, bool keep_alive);
  void send(const SharedResponse& response, bool keep_alive);
  void write(std::string_view head, std::string_view body, int status, bool keep_alive);
  void flush();
  void finish_answer();
  void unpark();
  void close_locked();
  bool needs_loop() const;

  std::mutex mu_;
  int fd_;
  const SocketAddress peer_;
  ConnectionHost& host_;
  EventLoop& loop_;
  ServerCounters& counters_;
  const ConnectionLimits& limits_;
  State state_ = State::kReading;
  std::string in_;                // read, not parsed yet
  std::string out_;               // an answer's rest, waiting for the socket
  bool unread_ = false;           // stopped reading before the socket ran dry
  bool keep_alive_ = true;        // of the answer being written or awaited
  std::optional<Parser> parser_;  // of the request being read
  bool head_seen_ = false;
  Request request_;  // filled at the head, completed with the body
  std::uint64_t request_number_ = 0;
  std::optional<Response> early_;  // answered while the Handler still ran
  SteadyTime last_activity_;
};

}  // namespace cascade::http
