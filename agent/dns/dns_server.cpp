#include "cascade/agent/dns/dns_server.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <random>
#include <system_error>

#include "cascade/agent/client.hpp"
#include "cascade/agent/dns/dns_wire.hpp"

namespace cascade::agent::dns {

namespace {

// Datagrams read per wake-up, so that TCP connections get their turn.
constexpr std::size_t kUdpBatch = 64;
constexpr std::size_t kTcpReadChunk = 16 * 1024;
// A peer that sends faster than it reads: its connection stops being read
// while this much is buffered in either direction.
constexpr std::size_t kMaxTcpBuffered = 128 * 1024;
// With port 0, the kernel picks a UDP port that TCP may already use: retry.
constexpr int kBindAttempts = 16;

std::system_error os_error(const std::string& what) {
  return std::system_error(errno, std::generic_category(), what);
}

UniqueFd open_socket(int family, int type) {
  UniqueFd fd(::socket(family, type | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
  if (!fd) throw os_error("DNS: socket");
  return fd;
}

SocketAddress bound_address(int fd) {
  sockaddr_storage storage{};
  socklen_t length = sizeof storage;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&storage), &length) != 0)
    throw os_error("DNS: getsockname");
  return SocketAddress::from(reinterpret_cast<const sockaddr*>(&storage), length);
}

bool would_block(int error) {
  return error == EAGAIN || error == EWOULDBLOCK;
}

}  // namespace

DnsServer::DnsServer(DnsServerConfig config, DnsResponder responder, DnsLookup lookup,
                     const Clock& clock)
    : config_(std::move(config)),
      responder_(std::move(responder)),
      lookup_(std::move(lookup)),
      clock_(clock),
      mailbox_(std::make_shared<LookupMailbox>()),
      datagram_(65535) {
  bind_sockets();
  thread_ = std::thread([this] { run(); });
}

DnsServer::~DnsServer() {
  stop();
}

void DnsServer::stop() {
  if (!thread_.joinable()) return;
  stop_.store(true);
  mailbox_->wake();
  thread_.join();
  mailbox_->close();
  connections_.clear();
  pending_.clear();
  udp_.reset();
  listener_.reset();
  std::string summary;
  for (const auto& [name, value] : counters_.list())
    if (value != 0) summary += " " + name + "=" + std::to_string(value);
  spdlog::info("dns: stopped;{}", summary.empty() ? " no queries" : summary);
}

void DnsServer::bind_sockets() {
  const auto& listen = config_.listen;
  for (int attempt = 1;; ++attempt) {
    udp_ = open_socket(listen.family(), SOCK_DGRAM);
    if (::bind(udp_.get(), listen.get(), listen.length) != 0)
      throw os_error("DNS: cannot bind UDP " + listen.to_string());
    local_ = bound_address(udp_.get());
    listener_ = open_socket(listen.family(), SOCK_STREAM);
    const int one = 1;
    ::setsockopt(listener_.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(listener_.get(), local_.get(), local_.length) == 0) break;
    if (errno != EADDRINUSE || listen.port() != 0 || attempt == kBindAttempts)
      throw os_error("DNS: cannot bind TCP " + local_.to_string());
  }
  if (::listen(listener_.get(), 128) != 0) throw os_error("DNS: listen " + local_.to_string());
}

void DnsServer::run() {
  mailbox_->adopt();
  PollSet set;
  while (!stop_.load()) {
    try {
      poll_once(set);
    } catch (const std::exception& e) {
      // Out of memory or a failed poll: the query at hand is lost, the server goes on.
      std::uint64_t suppressed = 0;
      if (socket_error_log_.allow(clock_.now(), suppressed))
        spdlog::error("dns: {} [{} more]", e.what(), suppressed);
    }
  }
}

void DnsServer::poll_once(PollSet& set) {
  auto& fds = set.fds;
  fds.assign({{mailbox_->fd(), POLLIN, 0}, {udp_.get(), POLLIN, 0}, {listener_.get(), POLLIN, 0}});
  set.connections.clear();
  for (const auto& [id, connection] : connections_) {
    const short events = static_cast<short>((wants_to_read(connection) ? POLLIN : 0) |
                                            (connection.framing.unsent().empty() ? 0 : POLLOUT));
    // Nothing asked of a connection: not polled, or its hang-up would wake us in a loop.
    if (events == 0) continue;
    fds.push_back({connection.fd.get(), events, 0});
    set.connections.push_back(id);
  }
  const auto timeout = poll_timeout(clock_.now());
  const int ready =
      ::poll(fds.data(), fds.size(), timeout ? static_cast<int>(timeout->count()) : -1);
  if (ready < 0 && errno != EINTR) throw os_error("poll");
  if (stop_.load()) return;
  const auto now = clock_.now();
  if (fds[0].revents != 0) mailbox_->clear_wake();
  if (fds[1].revents != 0) read_udp();
  if (fds[2].revents != 0) accept_tcp(now);
  for (std::size_t i = 0; i < set.connections.size(); ++i) {
    const auto revents = fds[kFixedFds + i].revents;
    auto& connection = connections_.at(set.connections[i]);
    if ((revents & (POLLIN | POLLHUP | POLLERR)) != 0) read_tcp(connection, now);
    if ((revents & POLLOUT) != 0) flush_tcp(connection, now);
  }
  serve();
  sweep_tcp(now);
}

void DnsServer::read_udp() {
  for (std::size_t i = 0; i < kUdpBatch; ++i) {
    sockaddr_storage from{};
    socklen_t length = sizeof from;
    const auto n = ::recvfrom(udp_.get(), datagram_.data(), datagram_.size(), 0,
                              reinterpret_cast<sockaddr*>(&from), &length);
    if (n < 0) {
      if (!would_block(errno) && errno != EINTR) {
        std::uint64_t suppressed = 0;
        if (socket_error_log_.allow(clock_.now(), suppressed))
          spdlog::warn("dns: UDP receive failed: {} [{} more]", std::strerror(errno), suppressed);
      }
      return;
    }
    bump(counters_.queries_udp);
    handle({datagram_.data(), static_cast<std::size_t>(n)},
           UdpPeer{SocketAddress::from(reinterpret_cast<const sockaddr*>(&from), length)});
  }
}

void DnsServer::accept_tcp(MonoTime now) {
  for (;;) {
    sockaddr_storage from{};
    socklen_t length = sizeof from;
    UniqueFd fd(::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&from), &length,
                          SOCK_NONBLOCK | SOCK_CLOEXEC));
    if (!fd) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      if (!would_block(errno)) {
        std::uint64_t suppressed = 0;
        if (socket_error_log_.allow(now, suppressed))
          spdlog::warn("dns: TCP accept failed: {} [{} more]", std::strerror(errno), suppressed);
      }
      return;
    }
    if (connections_.size() >= config_.max_tcp_connections) {
      bump(counters_.tcp_refused);
      continue;  // closed by `fd`
    }
    bump(counters_.tcp_accepted);
    TcpConnection connection;
    connection.fd = std::move(fd);
    connection.peer = SocketAddress::from(reinterpret_cast<const sockaddr*>(&from), length);
    connection.idle_deadline = now + config_.tcp_idle_timeout;
    connections_.emplace(next_connection_++, std::move(connection));
  }
}

bool DnsServer::wants_to_read(const TcpConnection& connection) const {
  return !connection.peer_closed && !connection.broken &&
         connection.in_flight < config_.max_tcp_queries_in_flight &&
         connection.framing.buffered() < kMaxTcpBuffered &&
         connection.framing.unsent().size() < kMaxTcpBuffered;
}

void DnsServer::read_tcp(TcpConnection& connection, MonoTime now) {
  std::uint8_t chunk[kTcpReadChunk];
  const auto n = ::recv(connection.fd.get(), chunk, sizeof chunk, 0);
  if (n > 0) {
    connection.framing.received({chunk, static_cast<std::size_t>(n)});
    connection.idle_deadline = now + config_.tcp_idle_timeout;
  } else if (n == 0) {
    connection.peer_closed = true;
  } else if (!would_block(errno) && errno != EINTR) {
    connection.broken = true;
  }
}

void DnsServer::serve() {
  do {
    for (auto& [id, connection] : connections_)
      serve_buffered(id, connection);
  } while (deliver_lookups() > 0);
}

void DnsServer::serve_buffered(std::uint64_t id, TcpConnection& connection) {
  while (!connection.broken && connection.in_flight < config_.max_tcp_queries_in_flight) {
    auto message = connection.framing.next_message();
    if (!message) return;
    bump(counters_.queries_tcp);
    ++connection.in_flight;
    handle(*message, id);
  }
}

std::size_t DnsServer::deliver_lookups() {
  auto deliveries = mailbox_->take();
  for (auto& [ticket, lookup] : deliveries) {
    auto it = pending_.find(ticket);
    if (it == pending_.end()) continue;
    const auto pending = std::move(it->second);
    pending_.erase(it);
    answer(pending, lookup);
  }
  return deliveries.size();
}

void DnsServer::flush_tcp(TcpConnection& connection, MonoTime now) {
  while (!connection.broken && !connection.framing.unsent().empty()) {
    const auto unsent = connection.framing.unsent();
    const auto n = ::send(connection.fd.get(), unsent.data(), unsent.size(), MSG_NOSIGNAL);
    if (n > 0) {
      connection.framing.sent(static_cast<std::size_t>(n));
      connection.idle_deadline = now + config_.tcp_idle_timeout;
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      if (n < 0 && !would_block(errno)) connection.broken = true;
      return;
    }
  }
}

void DnsServer::sweep_tcp(MonoTime now) {
  std::erase_if(connections_, [&](const auto& entry) {
    const auto& connection = entry.second;
    const bool idle = connection.in_flight == 0 && now >= connection.idle_deadline;
    const bool finished =
        connection.peer_closed && connection.in_flight == 0 && connection.framing.unsent().empty();
    if (idle && !finished && !connection.broken) bump(counters_.tcp_idle_closed);
    return connection.broken || finished || idle;
  });
}

std::optional<Duration> DnsServer::poll_timeout(MonoTime now) const {
  std::optional<Duration> timeout;
  for (const auto& [id, connection] : connections_) {
    // One waiting on a lookup is not idle: the answer's arrival wakes the poll.
    if (connection.in_flight > 0) continue;
    const auto left = std::max(Duration{0}, connection.idle_deadline - now);
    if (!timeout || left < *timeout) timeout = left;
  }
  return timeout;
}

void DnsServer::handle(std::span<const std::uint8_t> bytes, Origin origin) {
  auto parsed = parse_query(bytes);
  if (const auto* bad = std::get_if<BadQuery>(&parsed)) {
    reject(*bad, origin);
    return;
  }
  auto& question = std::get<DnsQuestion>(parsed);
  auto name = responder_.zone().classify(question.name());
  const auto* service = std::get_if<ServiceName>(&name);
  if (service == nullptr) {
    answer({std::move(origin), std::move(question), std::move(name)}, std::nullopt);
    return;
  }
  if (pending_.size() >= config_.max_pending_lookups) {
    bump(counters_.lookups_overflow);
    answer({std::move(origin), std::move(question), std::move(name)}, std::nullopt);
    return;
  }
  const auto key = service->key;
  const auto ticket = next_ticket_++;
  pending_.emplace(ticket, PendingLookup{std::move(origin), std::move(question), std::move(name)});
  bump(counters_.lookups);
  try {
    lookup_(key, [mailbox = mailbox_, ticket](std::optional<Resolution> resolution) {
      mailbox->post(ticket, std::move(resolution));
    });
  } catch (const std::exception& e) {
    spdlog::error("dns: looking up {} failed: {}", key.name, e.what());
    mailbox_->post(ticket, std::nullopt);  // answered SERVFAIL
  }
}

void DnsServer::reject(const BadQuery& bad, const Origin& origin) {
  bump(counters_.bad_queries);
  if (bad.reply.empty())
    bump(counters_.dropped);
  else
    count_rcode(bad.rcode, 0);
  std::uint64_t suppressed = 0;
  if (bad_input_log_.allow(clock_.now(), suppressed))
    spdlog::warn("dns: {} from {}: {} [{} more bad queries not logged]",
                 bad.reply.empty() ? "ignored a packet" : "answered an error to a query",
                 describe(origin), to_string(bad.problem), suppressed);
  send(origin, bad.reply);
}

void DnsServer::answer(const PendingLookup& pending, const std::optional<Resolution>& lookup) {
  const bool udp = std::holds_alternative<UdpPeer>(pending.origin);
  DnsReply reply;
  try {
    reply = responder_.respond(pending.question, pending.name, lookup,
                               udp ? pending.question.udp_limit() : kTcpLimit);
  } catch (const std::exception& e) {  // out of memory: no reply, the asker retries
    spdlog::error("dns: no reply for {}: {}", describe(pending.origin), e.what());
  }
  if (!reply.wire.empty()) count_reply(reply);
  send(pending.origin, reply.wire);
}

void DnsServer::count_reply(const DnsReply& reply) {
  count_rcode(reply.rcode, reply.answers);
  if (reply.truncated) bump(counters_.replies_truncated);
}

void DnsServer::count_rcode(unsigned rcode, std::size_t answers) {
  using Counter = std::atomic<std::uint64_t> DnsCounters::*;
  static constexpr std::pair<unsigned, Counter> kByRcode[] = {
      {LDNS_RCODE_FORMERR, &DnsCounters::replies_formerr},
      {LDNS_RCODE_SERVFAIL, &DnsCounters::replies_servfail},
      {LDNS_RCODE_NXDOMAIN, &DnsCounters::replies_nxdomain},
      {LDNS_RCODE_NOTIMPL, &DnsCounters::replies_notimp},
      {LDNS_RCODE_REFUSED, &DnsCounters::replies_refused},
      {kRcodeBadVers, &DnsCounters::replies_badvers},
  };
  if (rcode == LDNS_RCODE_NOERROR) {
    bump(answers > 0 ? counters_.replies_noerror : counters_.replies_nodata);
    return;
  }
  for (const auto& [code, counter] : kByRcode)
    if (code == rcode) bump(counters_.*counter);  // this server sends no other code
}

void DnsServer::send(const Origin& origin, std::span<const std::uint8_t> wire) {
  if (const auto* peer = std::get_if<UdpPeer>(&origin)) {
    if (wire.empty()) return;
    if (::sendto(udp_.get(), wire.data(), wire.size(), 0, peer->address.get(),
                 peer->address.length) < 0)
      bump(counters_.udp_send_errors);  // a full socket buffer: the asker retries
    return;
  }
  auto it = connections_.find(std::get<std::uint64_t>(origin));
  if (it == connections_.end()) return;  // closed while the lookup ran
  auto& connection = it->second;
  --connection.in_flight;
  if (wire.empty()) return;
  connection.framing.queue(wire);
  flush_tcp(connection, clock_.now());
}

std::string DnsServer::describe(const Origin& origin) const {
  if (const auto* peer = std::get_if<UdpPeer>(&origin)) return "udp " + peer->address.to_string();
  const auto it = connections_.find(std::get<std::uint64_t>(origin));
  return it == connections_.end() ? std::string("a closed tcp connection")
                                  : "tcp " + it->second.peer.to_string();
}

std::unique_ptr<DnsServer> start_dns_server(const DnsOptions& options, Client& client) {
  if (!options.listen) throw std::invalid_argument("DNS: no listen address");
  DnsServerConfig config;
  config.listen = *options.listen;
  static const SystemClock clock;  // stateless: outlives every server
  return std::make_unique<DnsServer>(
      config, DnsResponder(options.domain, options.ttl_seconds, std::random_device{}()),
      [&client](const proto::ServiceKey& key, ResolveCallback done) {
        client.resolve_async(key, std::move(done));
      },
      clock);
}

}  // namespace cascade::agent::dns
