// Failures at start and on the operator's side: bad flags (exit 2 with a clear
// message), a port in use and an unusable data directory (exit 1 naming the
// cause), and cascadectl against a hub that is not there (exit 3).

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"

namespace cascade::integration {
namespace {

using ::testing::HasSubstr;

class IntegrationStartup : public ClusterTest {};

struct BadFlags {
  std::vector<std::string> flags;
  std::string message;  // a part of what stderr must say
};

TEST_F(IntegrationStartup, HubRejectsBadFlagsWithExitCode2AndSaysWhy) {
  const std::vector<BadFlags> cases = {
      {{"--no-such-flag"}, "--no-such-flag"},
      {{"--beat-interval-ms", "5"}, "--beat-interval-ms must be between 10 and 3600000"},
      {{"--beat-interval-ms", "soon"}, "--beat-interval-ms"},
      {{"--beat-interval-ms", "200", "--lease-ms", "100"}, "--lease-ms must be at least"},
      {{"--listen", "http://127.0.0.1:7400"}, "--listen must be a ZeroMQ endpoint"},
      {{"--tier", "0"}, "--tier must be between 1 and 16"},
      {{"--max-frame-bytes", "100"}, "--max-frame-bytes must be at least 1024"},
      {{"--flush-interval-ms", "0"}, "--flush-interval-ms"},
      {{"--log-level", "loud"}, "--log-level"},
      {{"--log-format", "xml"}, "--log-format: 'xml' is neither text nor json"},
      {{"--metrics", "0.0.0.0:9464"}, "--metrics-allow"},
  };
  for (const auto& c : cases) {
    const auto data = fresh_path("data");
    std::vector<std::string> args = {"--data", data.string()};
    if (std::find(c.flags.begin(), c.flags.end(), "--listen") == c.flags.end())
      args.insert(args.end(), {"--listen", "tcp://127.0.0.1:*"});
    args.insert(args.end(), c.flags.begin(), c.flags.end());
    auto& hub = spawn(CASCADE_HUB_PATH, args, "bad-flags");
    SCOPED_TRACE(hub.command_line());
    const auto exit = hub.wait_for(kPatience);
    ASSERT_TRUE(exit) << "still running with bad flags";
    EXPECT_TRUE(exit->exited_with(2)) << exit->describe();
    EXPECT_THAT(hub.err(), HasSubstr(c.message));
    EXPECT_FALSE(std::filesystem::exists(data / "hub.endpoint"));
  }
}

TEST_F(IntegrationStartup, AgentRejectsBadFlagsWithExitCode2AndSaysWhy) {
  const std::string hub = "tcp://127.0.0.1:7400";  // never contacted
  const std::vector<BadFlags> cases = {
      {{"--register", "orders=10.0.0.1:8080"}, "at least one --hub is required"},
      {{"--hub", "http://127.0.0.1:7400"}, "--hub must be a ZeroMQ endpoint"},
      {{"--hub", hub, "--register", "orders"}, "--register orders:"},
      {{"--hub", hub, "--register", "orders=10.0.0.1:8080,weight=heavy"}, "weight must be"},
      {{"--hub", hub, "--misses-before-failover", "0"}, "--misses-before-failover must be"},
      {{"--hub", hub, "--beat-interval-ms", "1"}, "--beat-interval-ms must be between"},
      {{"--hub", hub, "--log-format", "yaml"}, "--log-format: 'yaml' is neither text nor json"},
  };
  for (const auto& c : cases) {
    auto& agent = spawn(CASCADE_AGENT_PATH, c.flags, "bad-agent-flags");
    SCOPED_TRACE(agent.command_line());
    const auto exit = agent.wait_for(kPatience);
    ASSERT_TRUE(exit) << "still running with bad flags";
    EXPECT_TRUE(exit->exited_with(2)) << exit->describe();
    EXPECT_THAT(agent.err(), HasSubstr(c.message));
  }
}

TEST_F(IntegrationStartup, HubExitsWithCode1WhenItsPortIsInUse) {
  const auto running = start_hub();
  HubOptions second;
  second.id = "hub-2";
  second.listen = running.endpoint;
  auto& hub = spawn_hub(second);
  const auto exit = hub.wait_for(kPatience);
  ASSERT_TRUE(exit) << "a second hub on a taken port is still running";
  EXPECT_TRUE(exit->exited_with(1)) << exit->describe();
  EXPECT_THAT(hub.err(), HasSubstr("cannot listen on " + running.endpoint));

  HubProbe probe(running.endpoint);
  const auto status = probe.status(kPatience);
  ASSERT_TRUE(status) << "the first hub stopped serving";
  EXPECT_EQ(status->hub_id, "hub-1");
}

TEST_F(IntegrationStartup, HubExitsWithCode1NamingADataDirUnderARegularFile) {
  const auto file = dir() / "a-regular-file";
  std::ofstream(file) << "not a directory\n";
  HubOptions options;
  options.data = file / "hub-data";  // cannot be created, even by root
  auto& hub = spawn_hub(options);
  const auto exit = hub.wait_for(kPatience);
  ASSERT_TRUE(exit) << "the hub runs without a usable data directory";
  EXPECT_TRUE(exit->exited_with(1)) << exit->describe();
  EXPECT_THAT(hub.err(), HasSubstr(options.data.string()));
}

TEST_F(IntegrationStartup, CascadectlExitsWith3WhenNoHubListens) {
  const RefusingPort nobody;
  for (const auto& command :
       std::vector<std::vector<std::string>>{{"status"}, {"services"}, {"resolve", "orders"}}) {
    std::vector<std::string> args = {"--hub", nobody.endpoint(), "--timeout-ms", "300"};
    args.insert(args.end(), command.begin(), command.end());
    const auto result = ctl(args);
    SCOPED_TRACE(command.front());
    EXPECT_TRUE(result.status.exited_with(3)) << result.status.describe() << "\n" << result.err;
    EXPECT_THAT(result.err, HasSubstr("unreachable"));
    EXPECT_TRUE(result.out.empty()) << result.out;
  }
}

TEST_F(IntegrationStartup, CascadectlExitsWith3AfterTheHubWasKilled) {
  const auto hub = start_hub();
  ASSERT_TRUE(ctl({"--hub", hub.endpoint, "--timeout-ms", "2000", "status"}).status.exited_with(0));
  hub.process->kill_and_wait();
  const auto result = ctl({"--hub", hub.endpoint, "--timeout-ms", "300", "--json", "status"});
  EXPECT_TRUE(result.status.exited_with(3)) << result.status.describe() << "\n" << result.err;
  EXPECT_THAT(result.err, HasSubstr("unreachable"));
}

}  // namespace
}  // namespace cascade::integration
