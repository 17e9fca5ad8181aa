// Connections that never say anything useful: raw TCP connections that never
// start the ZeroMQ handshake, and ZeroMQ connections that never send a
// message. The hub closes them (handshake timeout, idle timeout) and refuses
// connections beyond its limit, while a real agent keeps beating through it
// all and stays registered. The hub's own open files show it.

#include <gtest/gtest.h>

#include <filesystem>
#include <memory>
#include <vector>
#include <zmq.hpp>

#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"
#include "cascade/tests/integration/raw_connection.hpp"

namespace cascade::integration {
namespace {

constexpr int kRawConnections = 100;
constexpr int kSilentZmqConnections = 100;
constexpr int kMaxConnections = 150;  // fewer than both floods together
constexpr Millis kHandshakeTimeout{300};
constexpr Millis kIdleTimeout{1000};  // over one lease (kLease), so agents are safe
// Open files of a hub besides its connections may move a little (SQLite's
// journal, ZeroMQ's reconnects of the probe); connections are what counts.
constexpr std::size_t kFdSlack = 8;

std::size_t open_files(pid_t pid) {
  const auto dir = std::filesystem::path("/proc") / std::to_string(pid) / "fd";
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator(dir))
    ++n;
  return n;
}

// DEALERs that connect and then say nothing, and never reconnect once the
// hub closes them (a client that leaked its sockets).
class SilentDealers {
 public:
  SilentDealers(const std::string& endpoint, int n) {
    for (int i = 0; i < n; ++i) {
      auto& s = sockets_.emplace_back(context_, zmq::socket_type::dealer);
      s.set(zmq::sockopt::linger, 0);
      s.set(zmq::sockopt::reconnect_ivl, -1);
      s.connect(endpoint);
    }
  }

 private:
  zmq::context_t context_{1};
  std::vector<zmq::socket_t> sockets_;
};

class IntegrationIdleConnections : public ClusterTest {
 protected:
  void SetUp() override {
    HubOptions options;
    options.extra = {"--handshake-timeout-ms", std::to_string(kHandshakeTimeout.count()),
                     "--idle-timeout-ms",      std::to_string(kIdleTimeout.count()),
                     "--max-connections",      std::to_string(kMaxConnections)};
    hub_ = start_hub(options);
    start_provider(hub_.endpoint, "agent-1", "orders=10.0.0.1:8080");
    probe_ = std::make_unique<HubProbe>(hub_.endpoint);
    ASSERT_TRUE(wait_until_listed(*probe_, "orders", "10.0.0.1:8080"));
  }

  std::uint64_t hub_counter(const std::string& name) {
    const auto status = probe_->status(kPatience);
    EXPECT_TRUE(status) << "the hub stopped answering status requests";
    return status ? counter(*status, name).value_or(0) : 0;
  }

  bool agent_listed() { return is_listed(*probe_, "orders", "10.0.0.1:8080"); }

  RunningHub hub_;
  std::unique_ptr<HubProbe> probe_;
};

TEST_F(IntegrationIdleConnections, SilentConnectionsAreClosedWhileAnAgentKeepsBeating) {
  const pid_t pid = hub_.process->pid();
  const auto baseline = open_files(pid);
  const auto beats_before = hub_counter("beats");

  std::vector<std::unique_ptr<RawConnection>> raw;
  for (int i = 0; i < kRawConnections; ++i)
    ASSERT_TRUE(
        raw.emplace_back(std::make_unique<RawConnection>(port_of(hub_.endpoint)))->connected());
  SilentDealers dealers(hub_.endpoint, kSilentZmqConnections);
  ASSERT_TRUE(
      poll_until([&] { return open_files(pid) >= baseline + kMaxConnections / 2; }, kPatience))
      << "the floods never reached the hub: " << open_files(pid) << " open files";

  // Raw connections go at the handshake timeout, silent DEALERs at the idle
  // timeout; the agent beats every kBeat meanwhile and must stay listed.
  EXPECT_TRUE(holds_for([&] { return agent_listed(); }, kIdleTimeout + kHandshakeTimeout));
  EXPECT_TRUE(poll_until([&] { return open_files(pid) <= baseline + kFdSlack; }, kIdleTimeout * 5))
      << "the hub still holds " << open_files(pid) << " open files (" << baseline
      << " before the floods)";

  EXPECT_TRUE(agent_listed());
  EXPECT_GT(hub_counter("beats"), beats_before);
  EXPECT_GE(hub_counter("handshakes_failed"), static_cast<std::uint64_t>(kRawConnections / 2));
  EXPECT_GE(hub_counter("connections_refused"), 1u);
  EXPECT_GE(hub_counter("connections_idle_closed"), 1u);
  EXPECT_NE(hub_.process->err().find("connection limit (150) reached"), std::string::npos);
  for (auto& connection : raw)  // the hub hung up on every one of them
    EXPECT_TRUE(connection->closed_by_peer_within(Millis{100}));
}

// An agent keeps a connection to every hub it lists and beats to one: the
// others are standby connections a failover needs. They carry a keepalive
// (an empty batch) every five beats, so a standby hub's idle timeout never
// closes them, while it still closes a DEALER that says nothing.
TEST_F(IntegrationIdleConnections, AnAgentsStandbyConnectionIsKeptAliveAndNeverClosedForIdleness) {
  HubOptions options;
  options.extra = {"--idle-timeout-ms", std::to_string(kIdleTimeout.count())};
  auto standby = start_hub(options);
  HubProbe standby_probe(standby.endpoint);
  const auto closed = [&] {
    const auto status = standby_probe.status(kPatience);
    return status ? counter(*status, "connections_idle_closed").value_or(0) : 0;
  };
  start_agent("two-hubs", {"--id", "two-hubs", "--hub", hub_.endpoint, "--hub", standby.endpoint,
                           "--register", "orders=10.0.0.2:8080"});
  ASSERT_TRUE(wait_until_listed(*probe_, "orders", "10.0.0.2:8080"));
  SilentDealers silent(standby.endpoint, 1);

  // The silent DEALER goes within the idle timeout; the agent's connection stays.
  EXPECT_TRUE(poll_until([&] { return closed() >= 1; }, kIdleTimeout * 5));
  EXPECT_TRUE(holds_for([&] { return closed() == 1; }, kIdleTimeout * 4))
      << "the standby hub closed the agent's connection for idleness";
}

}  // namespace
}  // namespace cascade::integration
