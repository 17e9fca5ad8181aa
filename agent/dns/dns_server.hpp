#pragma once
// DnsServer: cascade-agent's DNS interface on the network. One thread polls
// the UDP socket, the TCP listener (the same port) and the TCP connections;
// it parses each query, looks the service up without ever blocking
// (DnsLookup: Client::resolve_async in the daemon, a fake in tests) and sends
// what DnsResponder replies (agent/dns/dns_responder.hpp).
//
// Lookups: an answer at hand (a fresh cached list) comes back inside the
// lookup call and is sent at once; otherwise the Client's I/O thread posts
// it to a LookupMailbox when the hub answers, and this thread sends it. At
// most max_pending_lookups wait at a time; beyond that a query is answered
// SERVFAIL at once (counted), so a flood of names nobody knows cannot grow
// the server's memory.
//
// UDP: a reply larger than 512 bytes (or than the query's EDNS0 size, up to
// 1232) is cut and has TC set; the asker retries over TCP. TCP: two-octet
// length prefixes, several queries per connection, replies as they are
// ready; a connection without traffic for tcp_idle_timeout (and no lookup in
// flight) is closed; past max_tcp_connections a new one is closed at once.
// Bad packets are counted and logged (rate-limited) and never stop the server.
//
// Thread-safety: the constructor, stop() and the destructor from one thread;
// local_address() and counters() from any.

#include <poll.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <thread>
#include <utility>
#include <variant>
#include <vector>

#include "cascade/agent/async_resolves.hpp"
#include "cascade/agent/dns/dns_counters.hpp"
#include "cascade/agent/dns/dns_responder.hpp"
#include "cascade/agent/dns/lookup_mailbox.hpp"
#include "cascade/agent/dns/tcp_framing.hpp"
#include "cascade/agent/dns/unique_fd.hpp"
#include "cascade/agent/local_interfaces.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/net_address.hpp"

namespace cascade::agent {
class Client;
}  // namespace cascade::agent

namespace cascade::agent::dns {

// Looks a service up without blocking: calls `done` once, on any thread,
// with the registry's answer (nullopt: no hub answered, nothing cached).
using DnsLookup = std::function<void(const proto::ServiceKey&, ResolveCallback done)>;

struct DnsServerConfig {
  SocketAddress listen{};                      // UDP and TCP; port 0: a free one
  std::size_t max_tcp_connections = 64;        // open at once; more are closed at once
  Duration tcp_idle_timeout{10'000};           // a connection without traffic this long is closed
  std::size_t max_tcp_queries_in_flight = 16;  // per connection; reading pauses beyond
  std::size_t max_pending_lookups = 4096;      // waiting on the hub; more: SERVFAIL at once
};

class DnsServer {
 public:
  // Binds UDP and TCP on config.listen and starts the thread. Throws
  // std::system_error when a socket cannot be bound (the port is taken).
  DnsServer(DnsServerConfig config, DnsResponder responder, DnsLookup lookup, const Clock& clock);
  ~DnsServer();
  DnsServer(const DnsServer&) = delete;
  DnsServer& operator=(const DnsServer&) = delete;

  // Stops the thread and closes every socket; lookups still under way are
  // dropped when they finish. Idempotent.
  void stop();
  // The address bound, with the port the kernel chose for port 0.
  const SocketAddress& local_address() const { return local_; }
  std::vector<std::pair<std::string, std::uint64_t>> counters() const { return counters_.list(); }
  const DnsCounters& counts() const { return counters_; }

 private:
  struct UdpPeer {
    SocketAddress address;
  };
  using Origin = std::variant<UdpPeer, std::uint64_t>;  // a UDP peer or a TCP connection's id
  struct PendingLookup {
    Origin origin;
    DnsQuestion question;
    DnsName name;
  };
  struct TcpConnection {
    UniqueFd fd;
    TcpFraming framing;
    std::size_t in_flight = 0;  // queries read, not answered yet
    SocketAddress peer;
    MonoTime idle_deadline{};
    bool peer_closed = false;  // the peer sent FIN: answer what was asked, then close
    bool broken = false;       // a read or write failed: close now
  };

  // What one poll() watches: the mailbox, the UDP socket and the listener,
  // then the connections that are asked something, in this order.
  static constexpr std::size_t kFixedFds = 3;
  struct PollSet {
    std::vector<pollfd> fds;
    std::vector<std::uint64_t> connections;  // of fds[kFixedFds + i]
  };

  void bind_sockets();
  void run();
  void poll_once(PollSet& set);
  void read_udp();
  void accept_tcp(MonoTime now);
  void read_tcp(TcpConnection& connection, MonoTime now);
  // Handles the whole messages `connection` has buffered, as far as its
  // in-flight cap allows; then answers the lookups that finished. Repeated
  // until nothing moves (an answer frees room for the next buffered query).
  void serve();
  void serve_buffered(std::uint64_t id, TcpConnection& connection);
  std::size_t deliver_lookups();
  bool wants_to_read(const TcpConnection& connection) const;
  void flush_tcp(TcpConnection& connection, MonoTime now);
  void sweep_tcp(MonoTime now);
  void handle(std::span<const std::uint8_t> bytes, Origin origin);
  void reject(const BadQuery& bad, const Origin& origin);
  void answer(const PendingLookup& pending, const std::optional<Resolution>& lookup);
  // Sends `wire` to `origin`; empty: no reply, but a TCP query is done.
  void send(const Origin& origin, std::span<const std::uint8_t> wire);
  void count_reply(const DnsReply& reply);
  // One replies_* counter per RCODE (`answers` tells NOERROR from NODATA).
  void count_rcode(unsigned rcode, std::size_t answers);
  std::string describe(const Origin& origin) const;
  std::optional<Duration> poll_timeout(MonoTime now) const;

  const DnsServerConfig config_;
  DnsResponder responder_;  // server thread only
  DnsLookup lookup_;
  const Clock& clock_;
  std::shared_ptr<LookupMailbox> mailbox_;
  DnsCounters counters_;
  SocketAddress local_;
  UniqueFd udp_;
  UniqueFd listener_;

  // Server thread only.
  std::vector<std::uint8_t> datagram_;  // receive buffer
  std::map<std::uint64_t, TcpConnection> connections_;
  std::uint64_t next_connection_ = 1;
  std::map<std::uint64_t, PendingLookup> pending_;
  std::uint64_t next_ticket_ = 1;
  RateLimit bad_input_log_{5, Duration{10'000}};
  RateLimit socket_error_log_{5, Duration{10'000}};

  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts after everything it uses
};

// The daemon's DNS interface (cascade-agent --dns): a server on
// options.listen answering from `client` (resolve_async), on the system clock.
std::unique_ptr<DnsServer> start_dns_server(const DnsOptions& options, Client& client);

}  // namespace cascade::agent::dns
