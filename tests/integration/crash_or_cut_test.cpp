// Crashed instances never linger behind eviction protection, while cut-off
// ones stay held (issue: "the promises 'zombies do not survive' and 'a
// partition does not empty the registry' conflict"). One real hub with
// eviction protection on, twelve real agents, each registering the address
// of "its" instance:
// - 4 live: a listening port; they keep beating;
// - 4 crashed: kill -9, and their instance's port closes with them (a
//   process that died), so a connect to it is refused;
// - 4 cut off: SIGSTOP (they stop beating), their instances at loopback
//   ports that never answer a SYN (a listener whose accept queue is full),
//   as behind a cut link. (Not a far address: a machine may have a route,
//   or a proxy, that answers for anything.)
// Twelve silent agents out of sixteen is far beyond eviction protection's
// share, so by counts alone most would be held. The hub's probes tell the
// crashed from the cut off: the crashed are gone within a lease and a few
// probes, the cut-off ones stay listed (unconfirmed) until they beat again.

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"

namespace cascade::integration {
namespace {

// A loopback port that listens for as long as the object lives: an instance.
// Close-on-exec, or every agent the test starts would hold the listener open.
class Instance {
 public:
  Instance() : Instance(256) {}
  ~Instance() { close(); }
  void close() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  const std::string& address() const { return address_; }

 protected:
  explicit Instance(int backlog) : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
    bind_and_listen(backlog);
  }

 private:
  void bind_and_listen(int backlog);
  int fd_;
  std::string address_;
};

// A port whose listener never accepts and whose queue is full: SYNs to it
// are dropped, so a connect gets no answer at all.
class SilentInstance : public Instance {
 public:
  SilentInstance() : Instance(0) {
    const auto port =
        static_cast<std::uint16_t>(std::stoi(address().substr(address().rfind(':') + 1)));
    for (int i = 0; i < 3; ++i) {  // a backlog of 0 queues one; the rest wait in SYN-SENT
      const int fd = ::socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
      sockaddr_in addr{};
      addr.sin_family = AF_INET;
      addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
      addr.sin_port = htons(port);
      [[maybe_unused]] int rc = ::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
      fillers_.push_back(fd);
    }
  }
  ~SilentInstance() {
    for (int fd : fillers_)
      ::close(fd);
  }

 private:
  std::vector<int> fillers_;
};

void Instance::bind_and_listen(int backlog) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof addr;
  ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
  ::listen(fd_, backlog);
  ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
  address_ = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
}

constexpr int kEach = 4;
constexpr Millis kProbeTimeout{300};

class IntegrationCrashOrCut : public ClusterTest {
 protected:
  Process& provider(const RunningHub& hub, const std::string& id, const std::string& address) {
    return start_agent(id, {"--hub", hub.endpoint, "--id", id, "--register", "orders=" + address});
  }
};

TEST_F(IntegrationCrashOrCut, CrashedInstancesGoWithinALeaseWhileCutOffOnesStayHeld) {
  HubOptions options;
  options.probe_held = true;  // every address registered here is on loopback
  options.extra = {"--eviction-protection", "on", "--probe-timeout-ms",
                   std::to_string(kProbeTimeout.count())};
  const auto hub = start_hub(options);
  HubProbe probe(hub.endpoint);

  std::vector<std::unique_ptr<Instance>> live_instances, crashed_instances, cut_instances;
  std::vector<Process*> crashed, cut;
  std::vector<std::string> crashed_addresses, cut_addresses, live_addresses;
  for (int i = 0; i < kEach; ++i) {
    live_instances.push_back(std::make_unique<Instance>());
    live_addresses.push_back(live_instances.back()->address());
    provider(hub, "live-" + std::to_string(i), live_addresses.back());
    crashed_instances.push_back(std::make_unique<Instance>());
    crashed_addresses.push_back(crashed_instances.back()->address());
    crashed.push_back(&provider(hub, "crashed-" + std::to_string(i), crashed_addresses.back()));
    cut_instances.push_back(std::make_unique<SilentInstance>());
    cut_addresses.push_back(cut_instances.back()->address());
    cut.push_back(&provider(hub, "cut-" + std::to_string(i), cut_addresses.back()));
  }
  for (const auto* list : {&live_addresses, &crashed_addresses, &cut_addresses})
    for (const auto& address : *list)
      ASSERT_TRUE(wait_until_listed(probe, "orders", address)) << address;

  // The rack is cut off first, then half a service crashes.
  for (auto* agent : cut)
    agent->signal(SIGSTOP);
  for (std::size_t i = 0; i < crashed.size(); ++i) {
    crashed[i]->kill_and_wait();
    crashed_instances[i]->close();
  }
  const auto crash = std::chrono::steady_clock::now();

  // Gone within a lease, a probe and a few scheduling margins.
  const Millis bound = kLease + kProbeTimeout + Millis{1500};
  const bool gone = poll_until(
      [&] {
        for (const auto& address : crashed_addresses)
          if (is_listed(probe, "orders", address)) return false;
        return true;
      },
      bound);
  const auto took = std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - crash);
  EXPECT_TRUE(gone) << "crashed instances still listed " << took.count() << " ms after the crash";
  std::cout << "[ measured ] crashed instances gone " << took.count() << " ms after the crash "
            << "(lease " << kLease.count() << " ms)\n";

  // The cut-off rack is still listed, held, several leases later.
  std::this_thread::sleep_for(kLease * 3);
  int cut_listed = 0;
  for (const auto& address : cut_addresses)
    cut_listed += is_listed(probe, "orders", address) ? 1 : 0;
  EXPECT_GE(cut_listed, kEach / 2) << "a partition must not empty the registry";
  for (const auto& address : live_addresses)
    EXPECT_TRUE(is_listed(probe, "orders", address)) << address;
  const auto status = probe.status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_GE(counter(*status, "nodes_confirmed_dead").value_or(0), 1u);
  EXPECT_GE(counter(*status, "probes_no_answer").value_or(0), 1u);
  for (auto* agent : cut)
    agent->signal(SIGCONT);
}

}  // namespace
}  // namespace cascade::integration
