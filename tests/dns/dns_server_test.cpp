// The DNS server on real loopback sockets with a fake registry lookup:
// UDP and TCP, lookups finished on another thread, the limits it enforces
// and bad packets (agent/dns/dns_server.hpp).
#include "cascade/agent/dns/dns_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <set>

#include "cascade/agent/dns/dns_wire.hpp"
#include "cascade/tests/dns/dns_messages.hpp"

namespace cascade::agent::dns {
namespace {

using test_support::parse_reply;
using test_support::query_wire;
using test_support::rdata_of;
using Bytes = std::vector<std::uint8_t>;

constexpr auto kPatience = std::chrono::seconds(10);  // a deadline, never waited out when passing

// The registry as the server sees it: answers at once (as the Client does for
// a fresh list), or, deferred, keeps the callbacks for the test to answer from
// its own thread (as the Client's I/O thread does when a hub answers).
class FakeRegistry {
 public:
  void add(const std::string& service, std::vector<std::string> addresses) {
    Resolution r;
    r.service = {service, "default"};
    r.version = 1;
    for (std::size_t i = 0; i < addresses.size(); ++i) {
      proto::Instance in;
      in.id = service + "-" + std::to_string(i);
      in.address = addresses[i];
      r.instances.push_back(in);
    }
    std::lock_guard lock(mu_);
    services_[service] = r;
  }
  void defer() {
    std::lock_guard lock(mu_);
    deferred_ = true;
  }
  void lookup(const proto::ServiceKey& key, ResolveCallback done) {
    std::unique_lock lock(mu_);
    if (deferred_) {
      waiting_.push_back(std::move(done));
      cv_.notify_all();
      return;
    }
    auto it = services_.find(key.name);
    Resolution unknown;
    unknown.service = key;
    const auto answer = it == services_.end() ? unknown : it->second;
    lock.unlock();
    done(answer);
  }
  // The callbacks of `count` deferred lookups, once they are there.
  std::vector<ResolveCallback> take_waiting(std::size_t count) {
    std::unique_lock lock(mu_);
    EXPECT_TRUE(cv_.wait_for(lock, kPatience, [&] { return waiting_.size() >= count; }));
    return std::exchange(waiting_, {});
  }
  Resolution listed(const std::string& service) {
    std::lock_guard lock(mu_);
    return services_.at(service);
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::map<std::string, Resolution> services_;
  bool deferred_ = false;
  std::vector<ResolveCallback> waiting_;
};

// The server's clock, moved by the test: time passes only when told to. Read
// by the server's thread while the test moves it, hence atomic. The server
// notices a move when something wakes its poll (a query, see poke()).
class SteppedClock final : public Clock {
 public:
  MonoTime now() const override { return mono_from_ms(ms_.load()); }
  WallMs wall_ms() const override { return 1'700'000'000'000 + ms_.load(); }
  void advance(Duration d) { ms_ += d.count(); }

 private:
  std::atomic<std::int64_t> ms_{1'000'000};
};

UniqueFd client_socket(int type) {
  UniqueFd fd(::socket(AF_INET, type | SOCK_CLOEXEC, 0));
  timeval timeout{static_cast<time_t>(kPatience.count()), 0};
  ::setsockopt(fd.get(), SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  return fd;
}

class DnsServerTest : public ::testing::Test {
 protected:
  void start(DnsServerConfig config = {}) {
    config.listen = std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:0"));
    server_ = std::make_unique<DnsServer>(
        config, DnsResponder("cascade", 1, 1),
        [this](const proto::ServiceKey& key, ResolveCallback done) {
          registry_.lookup(key, std::move(done));
        },
        clock_);
  }

  std::uint64_t counter(const std::string& name) const {
    for (const auto& [counter_name, value] : server_->counters())
      if (counter_name == name) return value;
    ADD_FAILURE() << "no counter " << name;
    return 0;
  }

  void send_udp(const UniqueFd& fd, const Bytes& bytes) {
    const auto& to = server_->local_address();
    ASSERT_EQ(::sendto(fd.get(), bytes.data(), bytes.size(), 0, to.get(), to.length),
              static_cast<ssize_t>(bytes.size()));
  }
  Bytes receive_udp(const UniqueFd& fd) {
    Bytes buffer(65535);
    const auto n = ::recv(fd.get(), buffer.data(), buffer.size(), 0);
    buffer.resize(n > 0 ? static_cast<std::size_t>(n) : 0);
    return buffer;
  }
  Bytes ask_udp(const Bytes& query) {
    const auto fd = client_socket(SOCK_DGRAM);
    send_udp(fd, query);
    return receive_udp(fd);
  }

  UniqueFd connect_tcp() {
    auto fd = client_socket(SOCK_STREAM);
    const auto& to = server_->local_address();
    EXPECT_EQ(::connect(fd.get(), to.get(), to.length), 0);
    return fd;
  }
  void send_framed(const UniqueFd& fd, const std::vector<Bytes>& messages) {
    TcpFraming framing;
    for (const auto& m : messages)
      framing.queue(m);
    const auto bytes = framing.unsent();
    ASSERT_EQ(::send(fd.get(), bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // The next reply on `fd`; nullopt when the server closed the connection.
  std::optional<Bytes> read_framed(const UniqueFd& fd) {
    for (;;) {
      if (auto message = reading_.next_message()) return message;
      std::uint8_t chunk[4096];
      const auto n = ::recv(fd.get(), chunk, sizeof chunk, 0);
      if (n <= 0) return std::nullopt;
      reading_.received({chunk, static_cast<std::size_t>(n)});
    }
  }

  // Makes the server run a round of its loop: a query it answers without a
  // lookup. The round's idle sweep follows the reply, and so comes before
  // anything the server reads from the test next.
  void poke() {
    auto reply = parse_reply(ask_udp(query_wire("www.example.com.", LDNS_RR_TYPE_A)));
    ASSERT_TRUE(reply);
    ASSERT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_REFUSED);
  }
  // A query over `fd` answered: the connection is open and served.
  void expect_served(const UniqueFd& fd) {
    send_framed(fd, {query_wire("orders.service.cascade.", LDNS_RR_TYPE_A)});
    EXPECT_TRUE(read_framed(fd)) << "closed";
  }

  SteppedClock clock_;
  FakeRegistry registry_;
  TcpFraming reading_;
  std::unique_ptr<DnsServer> server_;  // last: stopped before the rest goes
};

TEST_F(DnsServerTest, UdpQueryIsAnsweredFromTheLookup) {
  registry_.add("orders", {"10.0.0.1:8080"});
  start();
  EXPECT_EQ(server_->local_address().host(), "127.0.0.1");
  EXPECT_NE(server_->local_address().port(), 0) << "the port the kernel chose";
  auto reply = parse_reply(ask_udp(query_wire("orders.service.cascade.", LDNS_RR_TYPE_A)));
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_id(reply.get()), 4242);
  EXPECT_EQ(rdata_of(*reply), std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(counter("queries_udp"), 1u);
  EXPECT_EQ(counter("lookups"), 1u);
  EXPECT_EQ(counter("replies_noerror"), 1u);
}

TEST_F(DnsServerTest, LookupFinishedOnAnotherThreadIsAnswered) {
  registry_.add("orders", {"10.0.0.1:8080"});
  registry_.defer();
  start();
  const auto fd = client_socket(SOCK_DGRAM);
  send_udp(fd, query_wire("orders.service.cascade.", LDNS_RR_TYPE_A));
  auto waiting = registry_.take_waiting(1);
  ASSERT_EQ(waiting.size(), 1u);
  waiting[0](registry_.listed("orders"));  // this thread, as the Client's I/O thread would
  auto reply = parse_reply(receive_udp(fd));
  ASSERT_TRUE(reply);
  EXPECT_EQ(rdata_of(*reply), std::vector<std::string>{"10.0.0.1"});
}

TEST_F(DnsServerTest, NamesNeedingNoLookupAreAnsweredWithoutOne) {
  start();
  auto refused = parse_reply(ask_udp(query_wire("www.example.com.", LDNS_RR_TYPE_A)));
  ASSERT_TRUE(refused);
  EXPECT_EQ(ldns_pkt_get_rcode(refused.get()), LDNS_RCODE_REFUSED);
  auto unknown = parse_reply(ask_udp(query_wire("nosuch.service.cascade.", LDNS_RR_TYPE_A)));
  ASSERT_TRUE(unknown);
  EXPECT_EQ(ldns_pkt_get_rcode(unknown.get()), LDNS_RCODE_NXDOMAIN);
  EXPECT_EQ(counter("lookups"), 1u) << "only the service name was looked up";
  EXPECT_EQ(counter("replies_refused"), 1u);
  EXPECT_EQ(counter("replies_nxdomain"), 1u);
}

TEST_F(DnsServerTest, TcpConnectionCarriesManyPipelinedQueries) {
  registry_.add("orders", {"10.0.0.1:8080"});
  start({.max_tcp_queries_in_flight = 4});
  const auto fd = connect_tcp();
  std::vector<Bytes> queries;
  for (std::uint16_t id = 1; id <= 50; ++id)
    queries.push_back(query_wire("orders.service.cascade.", LDNS_RR_TYPE_A, {.id = id}));
  send_framed(fd, queries);  // one write: more than the in-flight cap at once
  std::set<std::uint16_t> ids;
  for (int i = 0; i < 50; ++i) {
    const auto message = read_framed(fd);
    ASSERT_TRUE(message) << "closed after " << i << " replies";
    auto reply = parse_reply(*message);
    ASSERT_TRUE(reply);
    EXPECT_EQ(rdata_of(*reply), std::vector<std::string>{"10.0.0.1"});
    ids.insert(ldns_pkt_id(reply.get()));
  }
  EXPECT_EQ(ids.size(), 50u);
  EXPECT_EQ(counter("queries_tcp"), 50u);
}

TEST_F(DnsServerTest, ReplyCutOverUdpComesWholeOverTcp) {
  std::vector<std::string> addresses;
  for (int i = 1; i <= 60; ++i)
    addresses.push_back("10.0.1." + std::to_string(i) + ":8080");
  registry_.add("big", addresses);
  start();
  const auto query = query_wire("big.service.cascade.", LDNS_RR_TYPE_A);
  const auto udp_wire = ask_udp(query);
  EXPECT_LE(udp_wire.size(), kPlainUdpLimit);
  auto udp = parse_reply(udp_wire);
  ASSERT_TRUE(udp);
  EXPECT_TRUE(ldns_pkt_tc(udp.get()));
  const auto fd = connect_tcp();
  send_framed(fd, {query});
  const auto tcp_wire = read_framed(fd);
  ASSERT_TRUE(tcp_wire);
  auto tcp = parse_reply(*tcp_wire);
  ASSERT_TRUE(tcp);
  EXPECT_FALSE(ldns_pkt_tc(tcp.get()));
  EXPECT_EQ(rdata_of(*tcp).size(), 60u);
  EXPECT_EQ(counter("replies_truncated"), 1u);
}

TEST_F(DnsServerTest, ConnectionsOverTheCapAreClosedAtOnce) {
  registry_.add("orders", {"10.0.0.1:8080"});
  start({.max_tcp_connections = 1});
  const auto first = connect_tcp();
  send_framed(first, {query_wire("orders.service.cascade.", LDNS_RR_TYPE_A)});
  ASSERT_TRUE(read_framed(first)) << "the first connection is served";
  const auto second = connect_tcp();
  std::uint8_t byte = 0;
  EXPECT_EQ(::recv(second.get(), &byte, 1, 0), 0) << "the second is closed without a word";
  EXPECT_EQ(counter("tcp_refused"), 1u);
  send_framed(first, {query_wire("orders.service.cascade.", LDNS_RR_TYPE_A)});
  EXPECT_TRUE(read_framed(first)) << "the first one still is";
}

TEST_F(DnsServerTest, IdleConnectionIsClosedAfterTheIdleTimeout) {
  registry_.add("orders", {"10.0.0.1:8080"});
  start({.tcp_idle_timeout = Duration{10'000}});
  const auto fd = connect_tcp();
  expect_served(fd);  // accepted, and the last traffic was at the clock's current time
  clock_.advance(Duration{9'999});
  poke();
  expect_served(fd);
  clock_.advance(Duration{10'000});
  poke();
  std::uint8_t byte = 0;
  EXPECT_EQ(::recv(fd.get(), &byte, 1, 0), 0) << "closed by the server";
  EXPECT_EQ(counter("tcp_idle_closed"), 1u);
}

TEST_F(DnsServerTest, ConnectionWaitingOnALookupIsNotIdle) {
  registry_.add("orders", {"10.0.0.1:8080"});
  start({.tcp_idle_timeout = Duration{10'000}});
  const auto fd = connect_tcp();
  registry_.defer();
  send_framed(fd, {query_wire("orders.service.cascade.", LDNS_RR_TYPE_A)});
  auto waiting = registry_.take_waiting(1);
  clock_.advance(Duration{60'000});  // the hub is slow: far past the idle timeout
  poke();
  waiting[0](registry_.listed("orders"));
  const auto reply = read_framed(fd);
  ASSERT_TRUE(reply) << "closed while its query waited on the hub";
  EXPECT_EQ(rdata_of(*parse_reply(*reply)), std::vector<std::string>{"10.0.0.1"});
  EXPECT_EQ(counter("tcp_idle_closed"), 0u);
}

TEST_F(DnsServerTest, BadPacketsAreCountedAndAnsweredWhereAReplyIsPossible) {
  registry_.add("orders", {"10.0.0.1:8080"});
  start();
  const auto fd = client_socket(SOCK_DGRAM);
  send_udp(fd, Bytes{0x12, 0x34, 0x01});  // a runt: no reply
  send_udp(fd, Bytes{0xAB, 0xCD, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xFF});
  auto formerr = parse_reply(receive_udp(fd));
  ASSERT_TRUE(formerr);
  EXPECT_EQ(ldns_pkt_id(formerr.get()), 0xABCD);
  EXPECT_EQ(ldns_pkt_get_rcode(formerr.get()), LDNS_RCODE_FORMERR);
  send_udp(fd, query_wire("orders.service.cascade.", LDNS_RR_TYPE_A));
  auto good = parse_reply(receive_udp(fd));
  ASSERT_TRUE(good);
  EXPECT_EQ(rdata_of(*good), std::vector<std::string>{"10.0.0.1"}) << "still serving";
  EXPECT_EQ(counter("bad_queries"), 2u);
  EXPECT_EQ(counter("dropped"), 1u);
  EXPECT_EQ(counter("replies_formerr"), 1u);
}

TEST_F(DnsServerTest, GarbageOverTcpIsAnsweredAndTheConnectionKeepsServing) {
  registry_.add("orders", {"10.0.0.1:8080"});
  start();
  const auto fd = connect_tcp();
  send_framed(fd,
              {Bytes{}, Bytes(40, 0x00), query_wire("orders.service.cascade.", LDNS_RR_TYPE_A)});
  const auto first = read_framed(fd);
  ASSERT_TRUE(first);
  auto formerr = parse_reply(*first);
  ASSERT_TRUE(formerr);
  EXPECT_EQ(ldns_pkt_get_rcode(formerr.get()), LDNS_RCODE_FORMERR);
  const auto second = read_framed(fd);
  ASSERT_TRUE(second);
  EXPECT_EQ(rdata_of(*parse_reply(*second)), std::vector<std::string>{"10.0.0.1"});
}

TEST_F(DnsServerTest, QueriesBeyondThePendingLookupCapAreServfailAtOnce) {
  registry_.defer();
  start({.max_pending_lookups = 1});
  const auto fd = client_socket(SOCK_DGRAM);
  send_udp(fd, query_wire("orders.service.cascade.", LDNS_RR_TYPE_A, {.id = 1}));
  auto waiting = registry_.take_waiting(1);
  send_udp(fd, query_wire("orders.service.cascade.", LDNS_RR_TYPE_A, {.id = 2}));
  auto overflow = parse_reply(receive_udp(fd));
  ASSERT_TRUE(overflow);
  EXPECT_EQ(ldns_pkt_id(overflow.get()), 2);
  EXPECT_EQ(ldns_pkt_get_rcode(overflow.get()), LDNS_RCODE_SERVFAIL);
  EXPECT_EQ(counter("lookups_overflow"), 1u);
  waiting[0](std::nullopt);  // no hub answered
  auto first = parse_reply(receive_udp(fd));
  ASSERT_TRUE(first);
  EXPECT_EQ(ldns_pkt_id(first.get()), 1);
  EXPECT_EQ(ldns_pkt_get_rcode(first.get()), LDNS_RCODE_SERVFAIL);
}

TEST_F(DnsServerTest, LookupFinishingAfterTheServerStoppedIsDropped) {
  registry_.defer();
  start();
  const auto fd = client_socket(SOCK_DGRAM);
  send_udp(fd, query_wire("orders.service.cascade.", LDNS_RR_TYPE_A));
  auto waiting = registry_.take_waiting(1);
  server_->stop();
  server_.reset();
  waiting[0](std::nullopt);  // must find nothing to write into
}

TEST_F(DnsServerTest, PortTakenIsAnErrorThatNamesIt) {
  start();
  DnsServerConfig taken;
  taken.listen = server_->local_address();
  try {
    DnsServer second(
        taken, DnsResponder("cascade", 1, 1), [](const auto&, auto) {}, clock_);
    ADD_FAILURE() << "bound a port already bound";
  } catch (const std::system_error& e) {
    EXPECT_NE(std::string(e.what()).find(server_->local_address().to_string()), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace cascade::agent::dns
