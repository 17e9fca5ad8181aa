#include "cascade/hub/connection_monitor.hpp"

#include <malloc.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include <algorithm>
#include <cstring>
#include <zmq_addon.hpp>

namespace cascade::hub {

namespace {

// Files a hub needs besides its connections: SQLite, ZeroMQ's mailboxes and
// epoll, upstream sockets, logs.
constexpr std::size_t kReservedFds = 128;

// After this many connections closed since the most open, the memory they
// held goes back to the system (glibc keeps freed heap otherwise).
constexpr std::size_t kTrimAfterClosed = 1024;

constexpr int kMonitoredEvents = ZMQ_EVENT_ACCEPTED | ZMQ_EVENT_ACCEPT_FAILED |
                                 ZMQ_EVENT_DISCONNECTED | ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL |
                                 ZMQ_EVENT_HANDSHAKE_FAILED_AUTH;

// Raises the soft open-file limit towards what `wanted` connections need (up
// to the hard limit) and returns the soft limit in force.
std::uint64_t open_file_limit(std::size_t wanted) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0) return RLIM_INFINITY;
  const rlim_t need = wanted == 0 ? limit.rlim_max : static_cast<rlim_t>(wanted + kReservedFds);
  if (limit.rlim_cur < need && limit.rlim_cur < limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = std::min(need, limit.rlim_max);
    if (::setrlimit(RLIMIT_NOFILE, &raised) == 0) limit = raised;
  }
  return limit.rlim_cur;
}

ConnectionGuardConfig fitted(ConnectionGuardConfig config, const std::string& name) {
  const auto files = open_file_limit(config.max_connections);
  const auto limit = effective_connection_limit(config.max_connections, files, kReservedFds);
  if (limit != config.max_connections)
    spdlog::warn("{}: the open-file limit ({}) allows {} connections, not {}: raise LimitNOFILE",
                 name, files, limit, config.max_connections);
  config.max_connections = limit;
  return config;
}

std::string monitor_endpoint(const zmq::socket_t& socket) {
  return fmt::format("inproc://cascade-connections-{}", static_cast<const void*>(socket.handle()));
}

}  // namespace

// What a decoded frame says about its connection: nothing when it held no
// valid message; trusted for a proxy's batch or a lower-tier hub's beat. An
// empty batch is an agent's keepalive on a standby connection (protocol
// section 3.12): activity, not trust.
std::optional<PeerKind> peer_kind(const proto::DecodedFrame& decoded,
                                  const access::Principal* key) {
  if (decoded.batched && decoded.items.empty()) return PeerKind::kAgent;
  const bool trustworthy =
      key == nullptr || key->role == access::Role::kHub || key->role == access::Role::kProxy;
  std::optional<PeerKind> kind;
  for (const auto& item : decoded.items) {
    const auto* message = std::get_if<proto::Message>(&item);
    if (message == nullptr) continue;
    const auto* beat = std::get_if<proto::UpBeat>(message);
    const bool claims_trust = decoded.batched || (beat != nullptr && beat->sender_tier > 0);
    if (claims_trust && trustworthy) return PeerKind::kTrusted;
    kind = PeerKind::kAgent;
  }
  return kind;
}

void apply_listen_options(zmq::socket_t& socket, const ListenConfig& config) {
  socket.set(zmq::sockopt::backlog, config.backlog);
  socket.set(zmq::sockopt::handshake_ivl, static_cast<int>(config.handshake_timeout.count()));
}

ConnectionMonitor::ConnectionMonitor(zmq::socket_t& socket, zmq::context_t& context,
                                     const ListenConfig& config, std::string name)
    : socket_(socket),
      events_(context, zmq::socket_type::pair),
      guard_(fitted(config.guard, name)),
      name_(std::move(name)) {
  const auto endpoint = monitor_endpoint(socket);
  if (zmq_socket_monitor(socket.handle(), endpoint.c_str(), kMonitoredEvents) != 0)
    throw zmq::error_t();
  events_.set(zmq::sockopt::rcvhwm, 0);  // unbounded: never block libzmq's I/O thread
  events_.set(zmq::sockopt::linger, 0);
  events_.connect(endpoint);
  spdlog::info(
      "{}: at most {} connections, idle timeout {} ms, handshake timeout {} ms, "
      "listen backlog {}",
      name_, guard_.config().max_connections, guard_.config().idle_timeout.count(),
      config.handshake_timeout.count(), config.backlog);
}

ConnectionMonitor::~ConnectionMonitor() {
  zmq_socket_monitor(socket_.handle(), nullptr, 0);
}

void ConnectionMonitor::drain_events(MonoTime now) {
  std::vector<zmq::message_t> frames;
  for (;;) {
    frames.clear();
    if (!zmq::recv_multipart(events_, std::back_inserter(frames), zmq::recv_flags::dontwait))
      return;
    // Version 1 events: [uint16 event, uint32 value (the fd)], [endpoint].
    if (frames.size() != 2 || frames[0].size() != 6) continue;
    std::uint16_t event = 0;
    std::uint32_t value = 0;
    std::memcpy(&event, frames[0].data(), sizeof event);
    std::memcpy(&value, static_cast<const char*>(frames[0].data()) + 2, sizeof value);
    on_event(event, value, now);
    peak_open_ = std::max(peak_open_, guard_.open());
    if (peak_open_ - guard_.open() >= kTrimAfterClosed) {
      malloc_trim(0);
      peak_open_ = guard_.open();
    }
  }
}

void ConnectionMonitor::on_event(std::uint16_t event, std::uint32_t value, MonoTime now) {
  const int fd = static_cast<int>(value);
  std::uint64_t suppressed = 0;
  switch (event) {
    case ZMQ_EVENT_ACCEPTED:
      if (guard_.accepted(fd, now)) return;
      close_fd(fd);
      if (refused_log_.allow(now, suppressed))
        spdlog::warn("{}: connection limit ({}) reached: closed a new connection [{} more]", name_,
                     guard_.config().max_connections, suppressed);
      return;
    case ZMQ_EVENT_DISCONNECTED:
      guard_.closed(fd);
      return;
    case ZMQ_EVENT_ACCEPT_FAILED:
      if (accept_failed_log_.allow(now, suppressed))
        spdlog::error("{}: cannot accept a connection: {} [{} more]", name_,
                      zmq_strerror(static_cast<int>(value)), suppressed);
      return;
    default:  // a handshake failed or timed out; its DISCONNECTED follows
      guard_.note_handshake_failed();
  }
}

void ConnectionMonitor::valid_message(zmq::message_t& frame, MonoTime now, PeerKind kind) {
  const int fd = zmq_msg_get(frame.handle(), ZMQ_SRCFD);  // -1: not from a stream (inproc)
  if (fd >= 0) guard_.valid_message(fd, now, kind);
}

void ConnectionMonitor::tick(MonoTime now) {
  const auto idle = guard_.tick(now);
  for (int fd : idle)
    close_fd(fd);
  std::uint64_t suppressed = 0;
  if (!idle.empty() && idle_log_.allow(now, suppressed))
    spdlog::info("{}: closed {} connections with no valid message in {} ms ({} open) [{} more]",
                 name_, idle.size(), guard_.config().idle_timeout.count(), guard_.open(),
                 suppressed);
}

void ConnectionMonitor::close_fd(int fd) {
  // libzmq owns the fd: it sees the end of the stream and closes it. An fd
  // that is no socket (any more) just fails here.
  ::shutdown(fd, SHUT_RDWR);
}

void ConnectionMonitor::append_counters(
    std::vector<std::pair<std::string, std::uint64_t>>& out) const {
  out.emplace_back("connections_open", guard_.open());
  out.emplace_back("connections_trusted", guard_.trusted());
  for (auto& counter : guard_.counters().list())
    out.push_back(std::move(counter));
}

}  // namespace cascade::hub
