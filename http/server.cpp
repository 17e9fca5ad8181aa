#include "cascade/http/server.hpp"

#include <microhttpd.h>
#include <spdlog/spdlog.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdarg>
#include <cstdio>
#include <mutex>
#include <stdexcept>
#include <thread>
#include <unordered_map>

#include "cascade/common/log.hpp"

namespace cascade::http {

namespace {

// libmicrohttpd's per-connection memory (see Server::Server).
constexpr std::size_t kConnectionMemoryBytes = 8 * 1024;
// How long a stopping server lets parked requests take their 503.
constexpr std::chrono::milliseconds kDrainTimeout{2000};

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

// A peer address as libmicrohttpd hands it over, read only as far as its
// family's size: the library keeps just that (16 bytes for IPv4), so reading
// a whole sockaddr_storage (128) runs past the allocation, and faults when it
// ends a heap page (seen with thousands of connections).
SocketAddress peer_address(const sockaddr* peer) {
  const socklen_t length = peer->sa_family == AF_INET6 ? sizeof(sockaddr_in6) : sizeof(sockaddr_in);
  return SocketAddress::from(peer, length);
}

}  // namespace

bool peer_allowed(const sockaddr* peer, const std::vector<Cidr>& allow) {
  if (peer_address(peer).is_loopback()) return true;
  return std::any_of(allow.begin(), allow.end(),
                     [&](const Cidr& range) { return range.contains(peer); });
}

// A request parked until its Responder is answered. Holds the connection
// only while it is suspended; after completion it answers nothing.
class PendingResponse final : public Responder {
 public:
  explicit PendingResponse(MHD_Connection* connection) : connection_(connection) {}
  void respond(Response response) override;
  // On the server thread, after the Handler returned nothing: parks the
  // connection unless the answer came meanwhile (then returned, to queue now).
  std::optional<Response> park_or_take();
  // On the server thread, when the connection was resumed.
  std::optional<Response> take();
  void close() {
    std::lock_guard lock(mu_);
    closed_ = true;
  }

 private:
  MHD_Connection* connection_;
  std::mutex mu_;
  std::optional<Response> ready_;
  bool answered_ = false;
  bool suspended_ = false;
  bool closed_ = false;
};

// One request's state between libmicrohttpd's calls (its con_cls).
struct Exchange {
  Request request;
  bool too_large = false;
  bool handled = false;  // the Handler has seen it
  bool parked = false;   // counted in ServerCounters::parked
  std::shared_ptr<PendingResponse> pending;
};

struct Server::Impl {
  ServerConfig config;
  Handler& handler;
  ServerCounters counters;
  SocketAddress bound;
  MHD_Daemon* daemon = nullptr;
  SharedRateLimit log_limit{10, std::chrono::seconds(10)};
  // Bad input is logged at most 10 times in 10 s, with the count suppressed.
  bool may_log() {
    std::uint64_t suppressed = 0;
    const bool allowed = log_limit.allow(suppressed);
    if (allowed && suppressed > 0)
      spdlog::warn("{}: {} similar messages suppressed", config.name, suppressed);
    return allowed;
  }
  std::atomic<bool> stopping{false};
  std::mutex live_mu;
  std::unordered_map<PendingResponse*, std::weak_ptr<PendingResponse>> live;

  Impl(ServerConfig c, Handler& h) : config(std::move(c)), handler(h) {}

  bool peer_allowed(const sockaddr* peer) const { return http::peer_allowed(peer, config.allow); }

  MHD_Result queue(MHD_Connection* connection, const Response& response) {
    auto* mhd = MHD_create_response_from_buffer(
        response.body.size(), const_cast<char*>(response.body.data()), MHD_RESPMEM_MUST_COPY);
    if (mhd == nullptr) return MHD_NO;
    MHD_add_response_header(mhd, "Content-Type", response.content_type.c_str());
    for (const auto& [name, value] : response.headers)
      MHD_add_response_header(mhd, name.c_str(), value.c_str());
    const auto queued = MHD_queue_response(connection, static_cast<unsigned>(response.status), mhd);
    MHD_destroy_response(mhd);
    count(response.status);
    return queued;
  }

  void count(int status) {
    if (status < 400)
      ++counters.responses_2xx;
    else if (status < 500)
      ++counters.responses_4xx;
    else
      ++counters.responses_5xx;
  }

  // The first call for a request: headers are in. Fills the Request and
  // answers at once what must not reach the Handler.
  std::optional<Response> begin(Exchange& exchange, MHD_Connection* connection, const char* url,
                                const char* method) {
    ++counters.requests;
    auto& request = exchange.request;
    request.method = method;
    request.path = url;
    MHD_get_connection_values(connection, MHD_GET_ARGUMENT_KIND, &collect, &request.query);
    MHD_get_connection_values(connection, MHD_HEADER_KIND, &collect_header, &request.headers);
    if (const auto* info = MHD_get_connection_info(connection, MHD_CONNECTION_INFO_CLIENT_ADDRESS))
      request.peer = peer_address(info->client_addr);
    if (stopping) return Response::error(503, "shutting_down", "the agent is stopping");
    if (config.tokens) {
      const auto token =
          presented_token(request.header("authorization"), request.header("x-consul-token"),
                          request.arg("token").value_or(""));
      const auto name = config.tokens->name_of(token);
      if (!name) {
        ++counters.unauthorized;
        auto refused = Response::error(
            401, "unauthorized",
            token.empty() ? "this API needs a bearer token" : "the bearer token is not valid");
        refused.headers.emplace_back("WWW-Authenticate", "Bearer");
        return refused;
      }
      request.token_name = *name;
    }
    // A declared length over the limit is refused before a byte of it is read.
    const auto length = request.header("content-length");
    std::uint64_t declared = 0;
    const auto [end, error] =
        std::from_chars(length.data(), length.data() + length.size(), declared);
    if (error == std::errc::result_out_of_range ||
        (error == std::errc() && declared > config.max_body_bytes))
      return too_large();
    return std::nullopt;
  }

  Response too_large() {
    ++counters.bodies_too_large;
    return Response::error(
        413, "body_too_large",
        "the request body is larger than " + std::to_string(config.max_body_bytes) + " bytes");
  }

  void upload(Exchange& exchange, const char* data, std::size_t size) {
    auto& body = exchange.request.body;
    if (exchange.too_large || body.size() + size > config.max_body_bytes) {
      exchange.too_large = true;
      body.clear();
      return;
    }
    body.append(data, size);
  }

  // The whole request is in: the Handler answers now or parks it.
  MHD_Result finish(Exchange& exchange, MHD_Connection* connection) {
    // Answered already, at the headers (401, 413, 503): libmicrohttpd may
    // still come back once the rest of the body has been read and discarded.
    if (exchange.handled && !exchange.pending) return MHD_YES;
    if (exchange.handled) {  // resumed: its Responder was answered
      unpark(exchange);
      ++counters.answered_later;
      auto response = exchange.pending->take();
      return queue(connection,
                   response ? *response : Response::error(500, "internal", "no response"));
    }
    exchange.handled = true;
    if (exchange.too_large) return queue(connection, too_large());
    exchange.pending = std::make_shared<PendingResponse>(connection);
    {
      std::lock_guard lock(live_mu);
      live.emplace(exchange.pending.get(), exchange.pending);
    }
    Reply reply = call_handler(exchange);
    if (!reply) reply = exchange.pending->park_or_take();
    if (!reply) {
      exchange.parked = true;
      ++counters.parked;
      return MHD_YES;
    }
    exchange.pending->close();
    return queue(connection, *reply);
  }

  Reply call_handler(Exchange& exchange) {
    if (stopping) return Response::error(503, "shutting_down", "the agent is stopping");
    try {
      return handler.handle(exchange.request, exchange.pending);
    } catch (const std::exception& e) {
      ++counters.handler_errors;
      if (may_log())
        spdlog::error("{}: {} {} failed: {}", config.name, exchange.request.method,
                      exchange.request.path, e.what());
      return Response::error(500, "internal", e.what());
    }
  }

  void unpark(Exchange& exchange) {
    if (exchange.parked) --counters.parked;
    exchange.parked = false;
  }

  // The request is over: answered, or its connection closed (a client that
  // reset while parked is closed once resumed, without the Handler).
  void completed(Exchange* exchange) {
    if (exchange == nullptr) return;
    unpark(*exchange);
    if (exchange->pending) {
      exchange->pending->close();
      std::lock_guard lock(live_mu);
      live.erase(exchange->pending.get());
    }
    delete exchange;
  }

  // Every parked request answered 503, and time for the answers to go out:
  // libmicrohttpd must not be stopped with suspended connections.
  void drain() {
    stopping = true;
    std::vector<std::shared_ptr<PendingResponse>> pending;
    {
      std::lock_guard lock(live_mu);
      for (auto& [raw, weak] : live)
        if (auto strong = weak.lock()) pending.push_back(std::move(strong));
    }
    for (auto& p : pending)
      p->respond(Response::error(503, "shutting_down", "the agent is stopping"));
    const auto deadline = std::chrono::steady_clock::now() + kDrainTimeout;
    while (counters.parked > 0 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }

  static MHD_Result collect(void* cls, MHD_ValueKind, const char* key, const char* value) {
    static_cast<std::map<std::string, std::string, std::less<>>*>(cls)->insert_or_assign(
        key, value == nullptr ? "" : value);
    return MHD_YES;
  }
  static MHD_Result collect_header(void* cls, MHD_ValueKind, const char* key, const char* value) {
    static_cast<std::map<std::string, std::string, std::less<>>*>(cls)->insert_or_assign(
        lower(key), value == nullptr ? "" : value);
    return MHD_YES;
  }
};

void PendingResponse::respond(Response response) {
  std::lock_guard lock(mu_);
  if (answered_ || closed_) return;
  answered_ = true;
  ready_ = std::move(response);
  if (suspended_) {
    suspended_ = false;
    MHD_resume_connection(connection_);
  }
}

std::optional<Response> PendingResponse::park_or_take() {
  std::lock_guard lock(mu_);
  if (ready_) return std::exchange(ready_, std::nullopt);
  MHD_suspend_connection(connection_);
  suspended_ = true;
  return std::nullopt;
}

std::optional<Response> PendingResponse::take() {
  std::lock_guard lock(mu_);
  closed_ = true;
  return std::exchange(ready_, std::nullopt);
}

namespace {

MHD_Result on_accept(void* cls, const sockaddr* peer, socklen_t) {
  auto& self = *static_cast<Server::Impl*>(cls);
  if (self.peer_allowed(peer)) return MHD_YES;
  ++self.counters.peers_refused;
  if (self.may_log())
    spdlog::warn("{}: refused a connection from {} (not loopback, not in --http-allow)",
                 self.config.name, peer_address(peer).host());
  return MHD_NO;
}

MHD_Result on_request(void* cls, MHD_Connection* connection, const char* url, const char* method,
                      const char*, const char* upload_data, std::size_t* upload_size,
                      void** con_cls) {
  auto& self = *static_cast<Server::Impl*>(cls);
  auto* exchange = static_cast<Exchange*>(*con_cls);
  if (exchange == nullptr) {
    exchange = new Exchange;
    *con_cls = exchange;
    if (auto early = self.begin(*exchange, connection, url, method)) {
      exchange->handled = true;
      return self.queue(connection, *early);
    }
    return MHD_YES;
  }
  if (*upload_size != 0) {
    self.upload(*exchange, upload_data, *upload_size);
    *upload_size = 0;
    return MHD_YES;
  }
  return self.finish(*exchange, connection);
}

void on_completed(void* cls, MHD_Connection*, void** con_cls, MHD_RequestTerminationCode) {
  static_cast<Server::Impl*>(cls)->completed(static_cast<Exchange*>(*con_cls));
  *con_cls = nullptr;
}

void on_log(void* cls, const char* format, va_list args) {
  auto& self = *static_cast<Server::Impl*>(cls);
  if (!self.may_log()) return;
  char text[512];
  std::vsnprintf(text, sizeof(text), format, args);
  std::string line(text);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
    line.pop_back();
  spdlog::warn("{}: {}", self.config.name, line);
}

}  // namespace

Server::Server(ServerConfig config, Handler& handler)
    : impl_(std::make_unique<Impl>(std::move(config), handler)) {
  auto& c = impl_->config;
  // Turbo: no shutdown() before close, optimistic reads; fewer system calls
  // per request, which is most of what a woken watch costs.
  unsigned flags =
      MHD_USE_EPOLL_INTERNAL_THREAD | MHD_ALLOW_SUSPEND_RESUME | MHD_USE_TURBO | MHD_USE_ERROR_LOG;
  if (c.listen.family() == AF_INET6) flags |= MHD_USE_IPv6;
  std::vector<MHD_OptionItem> options = {
      // First, so that every message of the daemon's goes through it.
      {MHD_OPTION_EXTERNAL_LOGGER, reinterpret_cast<intptr_t>(&on_log), impl_.get()},
      {MHD_OPTION_SOCK_ADDR, 0, const_cast<sockaddr*>(c.listen.get())},
      {MHD_OPTION_CONNECTION_LIMIT, static_cast<intptr_t>(c.max_connections), nullptr},
      // Each connection's buffer for its request line, headers and the
      // response's headers (bodies are ours). libmicrohttpd's 32 KiB default
      // is zeroed on every keep-alive request: 10,000 parked watches then
      // touch 360 MiB; 8 KiB holds any header this API needs.
      {MHD_OPTION_CONNECTION_MEMORY_LIMIT, static_cast<intptr_t>(kConnectionMemoryBytes), nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, static_cast<intptr_t>(c.idle_timeout.count()), nullptr},
      {MHD_OPTION_LISTEN_BACKLOG_SIZE, 4096, nullptr},
      {MHD_OPTION_NOTIFY_COMPLETED, reinterpret_cast<intptr_t>(&on_completed), impl_.get()},
  };
  if (c.threads > 1)
    options.push_back({MHD_OPTION_THREAD_POOL_SIZE, static_cast<intptr_t>(c.threads), nullptr});
  options.push_back({MHD_OPTION_END, 0, nullptr});
  impl_->daemon = MHD_start_daemon(flags, 0, &on_accept, impl_.get(), &on_request, impl_.get(),
                                   MHD_OPTION_ARRAY, options.data(), MHD_OPTION_END);
  if (impl_->daemon == nullptr)
    throw std::runtime_error(c.name + ": cannot listen on " + c.listen.to_string() +
                             " (address in use, or not an address of this host?)");
  impl_->bound = c.listen;
  if (const auto* info = MHD_get_daemon_info(impl_->daemon, MHD_DAEMON_INFO_BIND_PORT)) {
    auto* storage = reinterpret_cast<sockaddr*>(&impl_->bound.storage);
    const auto port = htons(info->port);
    if (storage->sa_family == AF_INET)
      reinterpret_cast<sockaddr_in*>(storage)->sin_port = port;
    else
      reinterpret_cast<sockaddr_in6*>(storage)->sin6_port = port;
  }
}

Server::~Server() {
  impl_->drain();
  MHD_stop_daemon(impl_->daemon);
}

const SocketAddress& Server::local_address() const {
  return impl_->bound;
}

const ServerCounters& Server::counters() const {
  return impl_->counters;
}

}  // namespace cascade::http
