// cascade_dns_bench: the agent's DNS interface under load (issue 13 §3).
// An in-process hub and an agent Client holding one service of --instances
// instances, cached and fresh; the Client's DNS server (agent/dns/) on
// 127.0.0.1; --senders threads, each a UDP socket with one query in flight,
// ask for the service for --seconds. Every reply is checked (id, NOERROR,
// the expected number of answers, TC as the size demands). Prints queries
// per second and round-trip percentiles; docs/dns.md shows a run.
//
// Closed loop: a sender sends its next query when the reply came, so the
// figures are the server's throughput at --senders concurrent askers and the
// latency each of them sees, client time included (all on one machine).

#include <sys/socket.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "cascade/agent/client.hpp"
#include "cascade/agent/dns/dns_server.hpp"
#include "cascade/agent/dns/dns_wire.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/in_process_hub.hpp"

namespace {

using namespace cascade;
using SteadyClock = std::chrono::steady_clock;

struct Options {
  std::size_t instances = 10;
  std::size_t senders = 4;
  double seconds = 5;
  std::string type = "A";
};

constexpr const char* kUsage =
    R"(cascade_dns_bench: UDP queries for a cached service to the agent's DNS server (loopback)

  --instances N   instances of the service (default 10)
  --senders K     sender threads, one UDP socket and one query in flight each (default 4)
  --seconds S     measured seconds, at most 10 (default 5)
  --type T        A, SRV or TXT (default A)
  --quick         smoke test: --seconds 0.3 --senders 2
)";

Options parse_options(int argc, char** argv) {
  auto o = bench::parse_flags<Options>(argc, argv, kUsage, [](bench::Flags& f, Options& opts) {
    f.add({{"--instances", &opts.instances},
           {"--senders", &opts.senders},
           {"--seconds", &opts.seconds}});
    f.on_value("--type", [&opts](const std::string&, const std::string& v) { opts.type = v; });
    f.first("--quick", [&opts] {
      opts.seconds = 0.3;
      opts.senders = 2;
    });
  });
  if (o.seconds > 10) throw std::invalid_argument("--seconds must be at most 10");
  if (o.type != "A" && o.type != "SRV" && o.type != "TXT")
    throw std::invalid_argument("--type must be A, SRV or TXT");
  return o;
}

// One query, encoded by libldns, as dig and current resolvers send it: with
// EDNS0 advertising 1232 bytes.
std::vector<std::uint8_t> query_wire(const std::string& name, const std::string& type,
                                     std::uint16_t id) {
  ldns_pkt* raw = nullptr;
  if (ldns_pkt_query_new_frm_str(&raw, name.c_str(), ldns_get_rr_type_by_name(type.c_str()),
                                 LDNS_RR_CLASS_IN, LDNS_RD) != LDNS_STATUS_OK)
    throw std::runtime_error("cannot build a query for " + name);
  agent::dns::PacketPtr query(raw);
  ldns_pkt_set_id(query.get(), id);
  ldns_pkt_set_edns_udp_size(query.get(), agent::dns::kEdnsUdpLimit);
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  if (ldns_pkt2wire(&data, query.get(), &size) != LDNS_STATUS_OK)
    throw std::runtime_error("cannot encode a query");
  std::vector<std::uint8_t> wire(data, data + size);
  std::free(data);
  return wire;
}

struct SenderResult {
  std::vector<double> latencies_us;
  std::size_t timeouts = 0;
  std::size_t bad_replies = 0;
};

// What a reply must be: our id, NOERROR, every answer, or some with TC set
// (the additional section goes first, so a cut reply may hold them all).
bool reply_ok(const std::uint8_t* reply, std::size_t size, std::uint16_t id, std::size_t expected) {
  if (size < LDNS_HEADER_SIZE || LDNS_ID_WIRE(reply) != id ||
      LDNS_RCODE_WIRE(reply) != LDNS_RCODE_NOERROR)
    return false;
  const std::size_t answers = LDNS_ANCOUNT(reply);
  return LDNS_TC_WIRE(reply) != 0 ? answers > 0 && answers <= expected : answers == expected;
}

SenderResult send_for(const SocketAddress& server, const std::vector<std::uint8_t>& query,
                      std::uint16_t id, std::size_t expected, SteadyClock::time_point until) {
  SenderResult result;
  const int fd = ::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
  if (fd < 0) throw std::runtime_error("socket failed");
  timeval timeout{1, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  if (::connect(fd, server.get(), server.length) != 0) throw std::runtime_error("connect failed");
  std::vector<std::uint8_t> reply(65535);
  while (SteadyClock::now() < until) {
    const auto sent_at = SteadyClock::now();
    if (::send(fd, query.data(), query.size(), 0) < 0) throw std::runtime_error("send failed");
    const auto n = ::recv(fd, reply.data(), reply.size(), 0);
    const auto took = SteadyClock::now() - sent_at;
    if (n < 0) {
      ++result.timeouts;
      continue;
    }
    if (!reply_ok(reply.data(), static_cast<std::size_t>(n), id, expected)) ++result.bad_replies;
    result.latencies_us.push_back(std::chrono::duration<double, std::micro>(took).count());
  }
  ::close(fd);
  return result;
}

int run(const Options& o) {
  bench::TempDir dir("cascade-dns-bench");
  bench::InProcessHub hub(bench::loopback_hub_config("dns-bench-hub", 1, dir.path()));
  agent::ClientOptions client_options;
  client_options.node_id = "dns-bench-agent";
  client_options.hubs = {hub.endpoint()};
  agent::Client client(client_options);
  const proto::ServiceKey key{"orders", std::string(proto::kDefaultGroup)};
  for (std::size_t i = 0; i < o.instances; ++i) {
    proto::Registration r;
    r.service = key;
    r.instance.id = "orders-" + std::to_string(i);
    r.instance.address = bench::address(i + 1, 8080);
    client.register_instance(r);
  }
  // Cached and fresh before the clock starts: every query is answered from memory.
  const auto ready_by = SteadyClock::now() + std::chrono::seconds(10);
  for (;;) {
    const auto r = client.resolve(key);
    if (r && r->instances.size() == o.instances) break;
    if (SteadyClock::now() > ready_by) throw std::runtime_error("the hub never listed the service");
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  agent::DnsOptions dns_options;
  dns_options.listen = std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:0"));
  auto server = agent::dns::start_dns_server(dns_options, client);

  std::printf(
      "cascade_dns_bench: %s orders.service.cascade (%zu instances, cached), "
      "%zu UDP senders, %.1f s\n",
      o.type.c_str(), o.instances, o.senders, o.seconds);
  std::printf("machine: %s, load average %s\n", bench::cpu_model().c_str(),
              bench::load_average().c_str());

  const auto start = SteadyClock::now();
  const auto until = start + std::chrono::duration_cast<SteadyClock::duration>(
                                 std::chrono::duration<double>(o.seconds));
  std::vector<SenderResult> results(o.senders);
  std::vector<std::thread> senders;
  for (std::size_t s = 0; s < o.senders; ++s) {
    const auto id = static_cast<std::uint16_t>(1000 + s);
    senders.emplace_back([&, s, id] {
      results[s] =
          send_for(server->local_address(), query_wire("orders.service.cascade.", o.type, id), id,
                   o.instances, until);
    });
  }
  for (auto& t : senders)
    t.join();
  const double elapsed = bench::seconds_since(start);

  std::vector<double> all;
  std::size_t timeouts = 0, bad = 0;
  for (auto& r : results) {
    all.insert(all.end(), r.latencies_us.begin(), r.latencies_us.end());
    timeouts += r.timeouts;
    bad += r.bad_replies;
  }
  const auto p = bench::percentiles(all);
  std::printf(
      "queries %zu in %.2f s: %s queries/s; round trip p50 %.0f us, p99 %.0f us, max %.0f "
      "us; timeouts %zu, bad replies %zu\n",
      p.count, elapsed, bench::si(static_cast<double>(p.count) / elapsed).c_str(), p.p50, p.p99,
      p.max, timeouts, bad);
  std::string counters;
  for (const auto& [name, value] : server->counters())
    if (value != 0) counters += " " + name + "=" + std::to_string(value);
  std::printf("server counters:%s\n", counters.c_str());
  server->stop();
  client.shutdown();
  return p.count > 0 && bad == 0 && timeouts == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  return cascade::bench::bench_main<Options>(argc, argv, "cascade_dns_bench", "dns-bench",
                                             parse_options, run);
}
