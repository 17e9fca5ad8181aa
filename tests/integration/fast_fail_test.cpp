// Fast fail end to end, with the real hubs on loopback: a provider that hangs
// (its port accepts connections and never answers) makes two callers' calls
// time out; the agent library reports the timeouts to dc1's hub at once; the
// hub isolates the instance, pushes it to dc1's consumers, beats it up to L2,
// and L2 pushes it down to dc2, whose hub pushes it to its consumers. The
// consumers here are in-process agents (the library), so the test sees the
// moment the isolation arrives.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

#include "cascade/agent/client.hpp"
#include "cascade/tests/integration/cluster.hpp"

namespace cascade::integration {
namespace {

constexpr Millis kL2Lease{1200};
constexpr Millis kSchedulingMargin{300};  // a loaded 2-core machine, as in tiers_test
constexpr Millis kSameTierBound{100};     // the product's promise (docs/benchmarks.md)
constexpr Millis kCrossTierBound{250};

// A TCP provider on loopback: either answers every connection with "ok", or
// hangs (accepts, reads nothing, answers nothing) like a wedged process.
class TcpProvider {
 public:
  explicit TcpProvider(bool hang) : hang_(hang) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 64);
    socklen_t len = sizeof(addr);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    thread_ = std::thread([this] { serve(); });
  }
  ~TcpProvider() {
    stop_ = true;
    ::shutdown(fd_, SHUT_RDWR);
    ::close(fd_);
    thread_.join();
    for (int fd : held_)
      ::close(fd);
  }
  std::string address() const { return "127.0.0.1:" + std::to_string(port_); }

 private:
  void serve() {
    while (!stop_) {
      const int client = ::accept(fd_, nullptr, nullptr);
      if (client < 0) return;
      if (hang_) {
        held_.push_back(client);  // never answered
        continue;
      }
      [[maybe_unused]] auto n = ::write(client, "ok", 2);
      ::close(client);
    }
  }

  bool hang_;
  int fd_ = -1;
  int port_ = 0;
  std::atomic<bool> stop_{false};
  std::vector<int> held_;
  std::thread thread_;
};

// One call: connect, wait for the answer until the deadline.
agent::AttemptOutcome call_over_tcp(const proto::Instance& instance, MonoTime deadline) {
  const auto colon = instance.address.rfind(':');
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<std::uint16_t>(std::stoi(instance.address.substr(colon + 1))));
  ::inet_pton(AF_INET, instance.address.substr(0, colon).c_str(), &addr.sin_addr);
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    ::close(fd);
    return agent::AttemptOutcome::kConnectionError;
  }
  const auto left = deadline - SystemClock().now();
  timeval tv{};
  tv.tv_sec = std::max<std::int64_t>(0, left.count()) / 1000;
  tv.tv_usec = static_cast<suseconds_t>(std::max<std::int64_t>(1, left.count() % 1000) * 1000);
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
  char buf[2];
  const auto n = ::recv(fd, buf, sizeof(buf), 0);
  ::close(fd);
  return n > 0 ? agent::AttemptOutcome::kOk : agent::AttemptOutcome::kTimeout;
}

// An in-process consumer that notes when it first sees `address` isolated.
class Watcher {
 public:
  Watcher(const std::string& hub, const std::string& id, const std::string& address)
      : client_(options(hub, id)), address_(address) {
    client_.on_change([this](const agent::Resolution& r) {
      for (const auto& in : r.instances)
        if (in.address == address_ && in.health == proto::Health::kIsolated) {
          std::lock_guard lock(mu_);
          if (!seen_) seen_ = SteadyClock::now();
        }
    });
  }
  agent::Client& client() { return client_; }
  std::optional<SteadyClock::time_point> seen() {
    std::lock_guard lock(mu_);
    return seen_;
  }
  static agent::ClientOptions options(const std::string& hub, const std::string& id) {
    agent::ClientOptions o;
    o.node_id = id;
    o.hubs = {hub};
    o.beat_interval = kBeat;
    return o;
  }

 private:
  agent::Client client_;
  std::string address_;
  std::mutex mu_;
  std::optional<SteadyClock::time_point> seen_;
};

class IntegrationFastFail : public ClusterTest {};

TEST_F(IntegrationFastFail, HungProviderIsIsolatedAtEveryConsumerOfBothTiersWithinTheBound) {
  const auto l2 =
      start_hub({.id = "l2", .beat = kBeat, .lease = kL2Lease, .extra = {"--tier", "2"}});
  const auto dc1 = start_hub({.id = "dc1", .extra = {"--zone", "dc1", "--upstream", l2.endpoint}});
  const auto dc2 = start_hub({.id = "dc2", .extra = {"--zone", "dc2", "--upstream", l2.endpoint}});
  TcpProvider hung(/*hang=*/true);
  TcpProvider healthy(/*hang=*/false);
  start_provider(dc1.endpoint, "pay-hung", "pay=" + hung.address());
  start_provider(dc1.endpoint, "pay-ok", "pay=" + healthy.address());
  ASSERT_TRUE(wait_until_listed(dc1.endpoint, "pay", hung.address()));
  ASSERT_TRUE(wait_until_listed(dc1.endpoint, "pay", healthy.address()));

  const proto::ServiceKey pay{"pay", "default"};
  Watcher same_tier(dc1.endpoint, "watch-dc1", hung.address());
  Watcher other_tier(dc2.endpoint, "watch-dc2", hung.address());
  for (auto* w : {&same_tier, &other_tier}) {
    w->client().keep_fresh(pay);
    const bool both = poll_until(
        [&] {
          const auto r = w->client().resolve(pay);
          return r && r->instances.size() == 2;
        },
        kPatience);
    ASSERT_TRUE(both) << "each consumer holds both providers before the failure";
  }

  // Two callers (distinct reporters: the hub's quorum) call the hung address.
  agent::Client caller_a(Watcher::options(dc1.endpoint, "caller-a"));
  agent::Client caller_b(Watcher::options(dc1.endpoint, "caller-b"));
  std::atomic<std::int64_t> first_report_ns{0};
  const auto call_hung = [&](agent::Client& caller) {
    agent::CallOptions once;
    once.timeout = Millis{200};
    once.max_retries = 0;
    once.backup_after_percentile.reset();
    const auto only_hung = [&](const proto::Instance& in, MonoTime deadline) {
      if (in.address != hung.address()) return agent::AttemptOutcome::kOk;
      const auto outcome = call_over_tcp(in, deadline);
      std::int64_t none = 0;
      first_report_ns.compare_exchange_strong(none, SteadyClock::now().time_since_epoch().count());
      return outcome;
    };
    for (int i = 0; i < 4; ++i)  // round robin: at least two calls reach the hung address
      caller.call(pay, only_hung, once);
  };
  std::thread a([&] { call_hung(caller_a); });
  std::thread b([&] { call_hung(caller_b); });
  a.join();
  b.join();
  ASSERT_NE(first_report_ns.load(), 0) << "the hung provider was called";

  ASSERT_TRUE(poll_until([&] { return same_tier.seen() && other_tier.seen(); }, kPatience))
      << "both consumers see the isolation";
  const SteadyClock::time_point reported{SteadyClock::duration{first_report_ns.load()}};
  const auto same = std::chrono::duration_cast<Millis>(*same_tier.seen() - reported);
  const auto cross = std::chrono::duration_cast<Millis>(*other_tier.seen() - reported);
  std::cout << "isolation visible: same tier " << same.count() << " ms, other tier "
            << cross.count() << " ms after the first failed call\n";
  EXPECT_LE(same, kSameTierBound + kSchedulingMargin);
  EXPECT_LE(cross, kCrossTierBound + kSchedulingMargin);

  // Picks avoid it from now on; the hub still lists it (isolation is not death).
  for (int i = 0; i < 20; ++i) {
    const auto picked = same_tier.client().pick(pay);
    ASSERT_TRUE(picked);
    EXPECT_EQ(picked->address, healthy.address());
  }
  const auto all = ctl({"--hub", dc1.endpoint, "resolve", "pay", "--all"});
  EXPECT_NE(all.out.find("isolated"), std::string::npos) << all.out;
}

}  // namespace
}  // namespace cascade::integration
