#pragma once
// The HTTP server of cascade's HTTP interfaces, around a Handler: a few
// event-loop threads (epoll, edge-triggered) serve every connection, and
// Boost.Beast's parser reads the requests. A request that must wait (a
// watch, a first lookup) is parked, holding no thread, until its Responder is
// answered from any thread, which then writes the answer itself with one
// send. So ten thousand parked watches cost ten thousand sockets and a
// little memory, not ten thousand threads, and waking them costs about one
// send each (connection.hpp says how).
//
// Before a request reaches the Handler the server checks who sent it: peers
// outside loopback and the allowed ranges are not even accepted; with
// tokens, a request that carries a wrong token, or none where the tokens'
// rule asks for one (http/request_tokens.hpp), is answered 401. Bodies
// over the limit are refused (413) without reaching the Handler, as are
// malformed requests (400) and heads over 8 KiB (431).
//
// Thread-safety: the Handler is called on the server's threads, several at
// once with threads > 1; Responders may be answered from any thread.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/net_address.hpp"
#include "cascade/http/exchange.hpp"
#include "cascade/http/request_tokens.hpp"

namespace cascade::http {

struct ServerConfig {
  SocketAddress listen;
  std::vector<Cidr> allow;  // peers accepted besides loopback ones
  // When set, the requests its rule names need one of its tokens, and a
  // request's token (if any) is checked; shared with whoever reloads them.
  std::shared_ptr<const RequestTokens> tokens;
  std::size_t max_connections = 16384;
  std::size_t max_body_bytes = 64 * 1024;
  unsigned threads = 2;
  // A connection that sends nothing for this long is closed; a parked
  // request is not timed out by it, only by its own wait.
  std::chrono::seconds idle_timeout{60};
  std::string name = "http";  // in log lines
};

// Counted by the server threads, read from anywhere.
struct ServerCounters {
  std::atomic<std::uint64_t> accepted{0};  // connections, since the start
  std::atomic<std::uint64_t> requests{0};
  std::atomic<std::uint64_t> responses_2xx{0};
  std::atomic<std::uint64_t> responses_4xx{0};
  std::atomic<std::uint64_t> responses_5xx{0};
  std::atomic<std::uint64_t> peers_refused{0};          // not loopback, not in an allowed range
  std::atomic<std::uint64_t> unauthorized{0};           // no token or a wrong one (401)
  std::atomic<std::uint64_t> bodies_too_large{0};       // 413
  std::atomic<std::uint64_t> bad_requests{0};           // malformed (400), heads too large (431)
  std::atomic<std::uint64_t> over_connection_limit{0};  // accepted and closed at once
  std::atomic<std::uint64_t> handler_errors{0};         // the Handler threw (500)
  std::atomic<std::uint64_t> answered_later{0};         // through a Responder after parking
  std::atomic<std::int64_t> parked{0};                  // waiting for their Responders right now
  std::atomic<std::int64_t> connections{0};             // open right now
};

// Whether a peer may connect: loopback always, others when in a range of `allow`.
bool peer_allowed(const sockaddr* peer, const std::vector<Cidr>& allow);

class Server {
 public:
  // Listening when constructed. Throws std::runtime_error when it cannot
  // (address in use, no permission), naming the address.
  Server(ServerConfig config, Handler& handler);
  // Answers every parked request 503 ("shutting_down"), then stops.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // The address bound (with the real port when the config asked for port 0).
  const SocketAddress& local_address() const;
  const ServerCounters& counters() const;

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace cascade::http
