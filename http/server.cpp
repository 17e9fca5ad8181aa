#include "cascade/http/server.hpp"

#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <spdlog/spdlog.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <thread>

#include "cascade/common/log.hpp"
#include "cascade/http/connection.hpp"
#include "cascade/http/event_loop.hpp"

namespace cascade::http {

namespace {

// How long a stopping server lets parked requests take their 503.
constexpr std::chrono::milliseconds kDrainTimeout{2000};
constexpr int kListenBacklog = 4096;

// A peer address read only as far as its family's size: what the kernel (or
// a library) hands over may be just that long.
SocketAddress peer_address(const sockaddr* peer) {
  const socklen_t length = peer->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  return SocketAddress::from(peer, length);
}

// A non-blocking listening socket on `address`; -1 with errno set when not.
int open_listener(const SocketAddress& address) {
  const int fd = ::socket(address.family(), SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  const int one = 1;
  ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
  if (::bind(fd, address.get(), address.length) != 0 || ::listen(fd, kListenBacklog) != 0) {
    const int error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

}  // namespace

bool peer_allowed(const sockaddr* peer, const std::vector<Cidr>& allow) {
  if (peer_address(peer).is_loopback()) return true;
  return std::any_of(allow.begin(), allow.end(),
                     [&](const Cidr& range) { return range.contains(peer); });
}

struct Server::Impl final : ConnectionHost {
  ServerConfig config;
  Handler& handler;
  ServerCounters counters;
  ConnectionLimits limits;
  SocketAddress bound;
  int listener = -1;
  std::vector<std::unique_ptr<EventLoop>> loops;
  std::vector<std::thread> threads;
  std::size_t next_loop = 0;  // on the accepting loop's thread
  std::atomic<bool> stopping{false};
  SharedRateLimit log_limit{10, std::chrono::seconds(10)};

  Impl(ServerConfig c, Handler& h) : config(std::move(c)), handler(h) {
    limits.max_body_bytes = config.max_body_bytes;
    limits.idle_timeout = config.idle_timeout;
  }

  // Logged at most 10 times in 10 s, with the count suppressed.
  bool may_log() {
    std::uint64_t suppressed = 0;
    const bool allowed = log_limit.allow(suppressed);
    if (allowed && suppressed > 0)
      spdlog::warn("{}: {} similar messages suppressed", config.name, suppressed);
    return allowed;
  }

  std::optional<Response> screen(Request& request) override {
    ++counters.requests;
    if (stopping) return Response::error(503, "shutting_down", "the server is stopping");
    if (!config.tokens) return std::nullopt;
    const auto token =
        presented_token(request.header("authorization"), request.header("x-consul-token"),
                        request.arg("token").value_or(""));
    if (token.empty() && !config.tokens->needs_token(request)) return std::nullopt;
    if (auto name = config.tokens->name_of(token)) {
      request.token_name = std::move(*name);
      return std::nullopt;
    }
    ++counters.unauthorized;
    const auto why =
        token.empty() ? "this request needs a bearer token" : "the bearer token is not valid";
    if (may_log())
      spdlog::warn("{}: {} {} from {} refused (401): {}", config.name, request.method, request.path,
                   request.peer.host(), why);
    auto refused = Response::error(401, "unauthorized", why);
    refused.headers.emplace_back("WWW-Authenticate", "Bearer");
    return refused;
  }

  Reply dispatch(const Request& request, const ResponderPtr& later) override {
    if (stopping) return Response::error(503, "shutting_down", "the server is stopping");
    try {
      return handler.handle(request, later);
    } catch (const std::exception& e) {
      ++counters.handler_errors;
      if (may_log())
        spdlog::error("{}: {} {} failed: {}", config.name, request.method, request.path, e.what());
      return Response::error(500, "internal", e.what());
    }
  }

  void bad_input(const SocketAddress& peer, std::string_view what) override {
    if (may_log()) spdlog::warn("{}: {} from {}", config.name, what, peer.to_string());
  }

  void closed() override { --counters.connections; }

  // On the first loop's thread: every waiting connection accepted and handed
  // to a loop in turn. False when out of descriptors (the loop pauses).
  bool accept_waiting() {
    for (;;) {
      sockaddr_storage storage{};
      socklen_t length = sizeof(storage);
      const int fd = ::accept4(listener, reinterpret_cast<sockaddr*>(&storage), &length,
                               SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (fd < 0) {
        if (errno == EINTR || errno == ECONNABORTED) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return true;
        if (may_log()) spdlog::warn("{}: accept: {}", config.name, std::strerror(errno));
        return errno != EMFILE && errno != ENFILE && errno != ENOBUFS && errno != ENOMEM;
      }
      const auto* peer = reinterpret_cast<const sockaddr*>(&storage);
      if (admit(fd, peer)) hand_over(fd, SocketAddress::from(peer, length));
    }
  }

  bool admit(int fd, const sockaddr* peer) {
    if (!peer_allowed(peer, config.allow)) {
      ++counters.peers_refused;
      if (may_log())
        spdlog::warn("{}: refused a connection from {} (not loopback, not in --http-allow)",
                     config.name, peer_address(peer).host());
      ::close(fd);
      return false;
    }
    if (counters.connections >= static_cast<std::int64_t>(config.max_connections)) {
      ++counters.over_connection_limit;
      if (may_log())
        spdlog::warn("{}: {} connections open, the limit: closed a new one", config.name,
                     config.max_connections);
      ::close(fd);
      return false;
    }
    return true;
  }

  void hand_over(int fd, SocketAddress peer) {
    const int one = 1;
    ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    ++counters.accepted;
    ++counters.connections;
    auto& loop = *loops[next_loop++ % loops.size()];
    loop.adopt(std::make_shared<Connection>(fd, std::move(peer), *this, loop, counters, limits));
  }

  void start() {
    listener = open_listener(config.listen);
    if (listener < 0)
      throw std::runtime_error(config.name + ": cannot listen on " + config.listen.to_string() +
                               ": " + std::strerror(errno));
    bound = config.listen;
    socklen_t length = sizeof(bound.storage);
    ::getsockname(listener, reinterpret_cast<sockaddr*>(&bound.storage), &length);
    bound.length = length;
    for (unsigned i = 0; i < std::max(1u, config.threads); ++i)
      loops.push_back(std::make_unique<EventLoop>());
    loops.front()->listen(listener, [this] { return accept_waiting(); });
    for (std::size_t i = 0; i < loops.size(); ++i)
      threads.emplace_back([this, i] {
        // Named for top -H and the benchmarks' per-thread figures (15 characters at most).
        const auto name = (config.name + "-loop-" + std::to_string(i)).substr(0, 15);
        pthread_setname_np(pthread_self(), name.c_str());
        loops[i]->run();
      });
  }

  // The accepting loop first, so that no connection is handed to a loop
  // that has stopped.
  void stop() {
    stopping = true;
    const auto shed = Response::error(503, "shutting_down", "the server is stopping");
    for (std::size_t i = 0; i < loops.size(); ++i) {
      loops[i]->stop(shed, kDrainTimeout);
      if (i == 0) threads[0].join();
    }
    for (std::size_t i = 1; i < threads.size(); ++i)
      threads[i].join();
    if (listener >= 0) ::close(listener);
  }
};

Server::Server(ServerConfig config, Handler& handler)
    : impl_(std::make_unique<Impl>(std::move(config), handler)) {
  impl_->start();
}

Server::~Server() {
  impl_->stop();
}

const SocketAddress& Server::local_address() const {
  return impl_->bound;
}

const ServerCounters& Server::counters() const {
  return impl_->counters;
}

}  // namespace cascade::http
