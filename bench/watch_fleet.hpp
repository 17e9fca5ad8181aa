#pragma once
// Long-poll watchers of an HTTP API on 127.0.0.1, on raw non-blocking
// sockets driven by one thread over one epoll set (cascade_http_api_bench).
// Each connection writes the GET it is given and reads one response: the
// status line, the headers (Content-Length, X-Cascade-Index) and a body of
// Content-Length bytes, timed when its last byte is read. Connections are
// kept alive: the next round's request goes out on the same one (one the
// server closed is made again). A watcher costs this process a socket and
// its buffer, no curl handle, so ten thousand of them fit in one thread.
//
// Loopback only: the peer is always 127.0.0.1. Not thread-safe.

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace cascade::bench {

class WatchFleet {
 public:
  using SteadyClock = std::chrono::steady_clock;

  struct Answer {
    int status = 0;                // HTTP status; 0: none in time, -1: the connection closed first
    std::uint64_t index = 0;       // its X-Cascade-Index header (0: none)
    bool has_marker = false;       // the body holds the marker collect() looked for
    SteadyClock::time_point at{};  // when its last byte was read
  };

  // No connection is made yet.
  WatchFleet(std::uint16_t port, std::size_t watchers);
  // Closes every connection abortively (RST): no TIME_WAIT is left to hold
  // the loopback's ephemeral ports against the next run.
  ~WatchFleet();
  WatchFleet(const WatchFleet&) = delete;
  WatchFleet& operator=(const WatchFleet&) = delete;

  // Writes `request` on every connection, making those not made yet, `batch`
  // at a time; after each batch calls paced(n) with the number written so
  // far (where the caller waits for the server to accept them, so that its
  // listen queue never overflows). Throws std::runtime_error when a
  // connection fails, a connection has something to read before its request
  // went out, or a batch takes longer than `patience`.
  void send_all(const std::string& request, std::size_t batch,
                const std::function<void(std::size_t)>& paced, std::chrono::milliseconds patience);

  // Connections that have something to read right now (answered, or closed):
  // 0 while every watch is parked.
  std::size_t readable_now();

  // Reads until every connection has its response or `patience` ends. One
  // Answer per connection, in connection order.
  std::vector<Answer> collect(std::string_view marker, std::chrono::milliseconds patience);

 private:
  struct Conn {
    int fd = -1;
    std::size_t written = 0;  // bytes of the request written
    std::string in;           // what was read of the response
  };
  void open(std::uint32_t i);
  void close_conn(Conn& c);
  // Writes what is left of the request; true when it is all out.
  bool write_rest(Conn& c, const std::string& request);
  void watch_for(std::uint32_t i, std::uint32_t events);
  // True when `c.in` holds a whole response, then parsed into `a`.
  static bool parse(const std::string& in, std::string_view marker, Answer& a);

  std::uint16_t port_;
  int epoll_ = -1;
  std::vector<Conn> conns_;
};

}  // namespace cascade::bench
