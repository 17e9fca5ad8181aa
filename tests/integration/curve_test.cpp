// Issue 12, transport: the real binaries with CurveZMQ keys. Who gets in, who
// is told no (and how clearly), reloads that add or remove keys without
// dropping anyone, keygen, and secure by default.
#include <gmock/gmock.h>
#include <sys/stat.h>

#include <csignal>

#include "cascade/common/curve_keys.hpp"
#include "cascade/tests/integration/keyed_cluster.hpp"

namespace cascade::integration {
namespace {

using ::testing::HasSubstr;

class IntegrationCurve : public KeyedClusterTest {
 protected:
  void SetUp() override {
    for (const char* name : {"hub", "agent-1", "agent-2", "ops", "reader"})
      keygen(name);
  }
};

TEST_F(IntegrationCurve, AgentRegistersThroughCurveHubAndAnotherKeyResolvesIt) {
  authorize({"agent-1 agent", "reader reader"});
  const auto hub = start_keyed_hub();
  start_keyed_provider(hub, "agent-1", "orders=10.0.0.1:8080");
  EXPECT_TRUE(wait_until_resolved(hub, "reader", "orders", "10.0.0.1:8080"));
  const auto status = ctl_as("reader", hub, {"status", "--json"});
  EXPECT_TRUE(status.status.exited_with(0)) << status.err;
  EXPECT_THAT(status.out, HasSubstr("\"security\": \"curve\""));
}

TEST_F(IntegrationCurve, UnknownKeyIsToldAtOnceAndCounted) {
  authorize({"reader reader"});
  const auto hub = start_keyed_hub();
  const auto start = SteadyClock::now();
  const auto refused = ctl_as("ops", hub, {"status", "--timeout-ms", "8000"});
  EXPECT_TRUE(refused.status.exited_with(kExitUnauthenticated)) << refused.status.describe();
  EXPECT_THAT(refused.err, HasSubstr("the hub refused this key (unauthenticated)"));
  EXPECT_LT(elapsed_since(start), Millis{5000});  // told, not timed out
  const auto status = ctl_as("reader", hub, {"status", "--json"});
  EXPECT_THAT(status.out, ::testing::ContainsRegex("\"zap_refused\": [1-9]"));
}

TEST_F(IntegrationCurve, AgentWithUnknownKeyLogsTheRefusal) {
  authorize({"reader reader"});
  const auto hub = start_keyed_hub();
  auto& agent = start_keyed_provider(hub, "agent-2", "orders=10.0.0.2:8080");
  EXPECT_TRUE(
      poll_until([&] { return agent.err().find("refused this agent's key") != std::string::npos; },
                 kPatience));
}

TEST_F(IntegrationCurve, ReloadKeysCommandLetsANewAgentInWithoutDroppingAnyone) {
  authorize({"agent-1 agent", "ops operator"});
  const auto hub = start_keyed_hub();
  start_keyed_provider(hub, "agent-1", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_resolved(hub, "ops", "orders", "10.0.0.1:8080"));
  auto& newcomer = start_keyed_provider(hub, "agent-2", "orders=10.0.0.2:8080");
  // Refused first: libzmq gives up on a refused handshake, the agent dials again.
  ASSERT_TRUE(poll_until(
      [&] { return newcomer.err().find("refused this agent's key") != std::string::npos; },
      kPatience));
  authorize({"agent-1 agent", "ops operator", "agent-2 agent"});
  const auto reload = ctl_as("ops", hub, {"reload-keys"});
  EXPECT_TRUE(reload.status.exited_with(0)) << reload.err;
  EXPECT_THAT(reload.out, HasSubstr("reloaded 3 authorised keys"));
  EXPECT_TRUE(wait_until_resolved(hub, "ops", "orders", "10.0.0.2:8080"));
  EXPECT_TRUE(wait_until_resolved(hub, "ops", "orders", "10.0.0.1:8080"));
  const auto status = ctl_as("ops", hub, {"status", "--json"});
  EXPECT_THAT(status.out, HasSubstr("\"unauthenticated\": 0"));
}

TEST_F(IntegrationCurve, SighupRemovingAKeyRefusesItWhileOthersKeepWorking) {
  authorize({"agent-1 agent", "ops operator", "reader reader"});
  const auto hub = start_keyed_hub();
  start_keyed_provider(hub, "agent-1", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_resolved(hub, "reader", "orders", "10.0.0.1:8080"));
  authorize({"agent-1 agent", "ops operator"});
  hub.process->signal(SIGHUP);
  EXPECT_TRUE(poll_until(
      [&] { return ctl_as("reader", hub, {"status"}).status.exited_with(kExitUnauthenticated); },
      kPatience, Millis{100}));
  EXPECT_TRUE(wait_until_resolved(hub, "ops", "orders", "10.0.0.1:8080"));
  EXPECT_TRUE(holds_for([&] { return hub.process->running(); }, Millis{300}));
}

TEST_F(IntegrationCurve, KeygenWritesAPairOnceAndNeverOverwrites) {
  const auto keys = dir() / "keys";
  std::filesystem::create_directory(keys);
  const auto made = ctl({"keygen", "node-7", "--dir", keys.string()});
  ASSERT_TRUE(made.status.exited_with(0)) << made.err;
  struct stat info {};
  ASSERT_EQ(::stat((keys / "node-7.key").c_str(), &info), 0);
  EXPECT_EQ(info.st_mode & 0777, 0600u);
  const auto pub = curve::read_public_key_file(keys / "node-7.pub");
  EXPECT_EQ(curve::read_secret_key_file(keys / "node-7.key").public_z85, pub);
  EXPECT_THAT(made.out, HasSubstr(pub + " node-7 ROLE"));
  const auto again = ctl({"keygen", "node-7", "--dir", keys.string()});
  EXPECT_TRUE(again.status.exited_with(1));
  EXPECT_THAT(again.err, HasSubstr("refusing to overwrite"));
  EXPECT_EQ(curve::read_public_key_file(keys / "node-7.pub"), pub);
}

TEST_F(IntegrationCurve, NetworkEndpointsWithoutKeysAreRefusedAtStart) {
  HubOptions options;
  options.listen = "tcp://0.0.0.0:0";
  auto& hub = spawn_hub(options);
  const auto hub_exit = hub.wait_for(kPatience);
  ASSERT_TRUE(hub_exit);
  EXPECT_TRUE(hub_exit->exited_with(2)) << hub_exit->describe();
  EXPECT_THAT(hub.err(), HasSubstr("refusing to run in plain text"));
  // The agent decides before it connects: nothing is sent to this address.
  auto& agent = start_agent("agent", {"--hub", "tcp://10.0.0.1:7400", "--register", "a=1.2.3.4:1"});
  const auto agent_exit = agent.wait_for(kPatience);
  ASSERT_TRUE(agent_exit);
  EXPECT_TRUE(agent_exit->exited_with(2)) << agent_exit->describe();
  EXPECT_THAT(agent.err(), HasSubstr("--insecure"));
}

TEST_F(IntegrationCurve, InsecureHubSaysSoInItsLogAndStatus) {
  HubOptions options;
  options.extra = {"--insecure"};
  const auto hub = start_hub(options);
  const auto status = ctl({"--hub", hub.endpoint, "status"});
  EXPECT_TRUE(status.status.exited_with(0)) << status.err;
  EXPECT_THAT(status.out, ::testing::ContainsRegex("security +insecure"));
  EXPECT_THAT(hub.process->err(), HasSubstr("--insecure"));
}

TEST_F(IntegrationCurve, PlaintextHubOnLoopbackSaysLoopback) {
  const auto hub = start_hub();
  const auto status = ctl({"--hub", hub.endpoint, "status", "--json"});
  EXPECT_THAT(status.out, HasSubstr("\"security\": \"loopback\""));
}

}  // namespace
}  // namespace cascade::integration
