// Providers register through the agent daemon, consumers and cascadectl see
// them with every field; an agent whose first hub is dead registers at the next.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"

namespace cascade::integration {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class IntegrationRegistration : public ClusterTest {};

const nlohmann::json* instance_at(const nlohmann::json& resolved, const std::string& address) {
  for (const auto& in : resolved.at("instances"))
    if (in.at("address") == address) return &in;
  return nullptr;
}

TEST_F(IntegrationRegistration, TwoProvidersAreResolvedWithTheirWeightZoneAndMetadata) {
  const auto hub = start_hub();
  HubProbe probe(hub.endpoint);
  start_provider(hub.endpoint, "provider-a", "orders=10.0.0.1:8080,weight=30,zone=eu-1a");
  ASSERT_TRUE(poll_until(
      [&] {
        const auto r = probe.query("orders", 1s);
        return r && r->instances.size() == 1;
      },
      kPatience));

  // A consumer started now resolves the first provider at once...
  auto& consumer =
      start_agent("consumer", {"--hub", hub.endpoint, "--id", "consumer", "--use", "orders"});
  const auto resolved = wait_for_stdout_line(consumer, "resolved orders");
  ASSERT_TRUE(resolved) << "no 'resolved' line from the consumer";
  EXPECT_THAT(*resolved, HasSubstr("(1 instances"));
  EXPECT_THAT(*resolved, HasSubstr("10.0.0.1:8080[UP]"));
  EXPECT_THAT(*resolved, ::testing::Not(HasSubstr("STALE")));

  // ...and is told when the second one arrives, without asking again.
  start_provider(hub.endpoint, "provider-b",
                 "orders=10.0.0.2:8080,weight=70,zone=eu-1b,meta.build=abc123");
  const auto changed = wait_for_stdout_line(consumer, "(2 instances");
  ASSERT_TRUE(changed) << "the consumer never saw the second provider";
  EXPECT_THAT(*changed, StartsWith("changed orders"));
  EXPECT_THAT(*changed, HasSubstr("10.0.0.1:8080[UP]"));
  EXPECT_THAT(*changed, HasSubstr("10.0.0.2:8080[UP]"));

  const auto ctl_result = ctl({"--hub", hub.endpoint, "--json", "resolve", "orders"});
  ASSERT_TRUE(ctl_result.status.exited_with(0)) << ctl_result.status.describe() << "\n"
                                                << ctl_result.err;
  const auto json = nlohmann::json::parse(ctl_result.out);
  EXPECT_EQ(json.at("service"), "orders");
  EXPECT_EQ(json.at("group"), "default");
  EXPECT_EQ(json.at("hub"), "hub-1");
  EXPECT_GT(json.at("version").get<std::uint64_t>(), 0u);
  ASSERT_EQ(json.at("instances").size(), 2u) << json.dump(2);

  const auto* a = instance_at(json, "10.0.0.1:8080");
  ASSERT_NE(a, nullptr) << json.dump(2);
  EXPECT_EQ(a->at("id"), "10.0.0.1:8080");
  EXPECT_EQ(a->at("status"), "UP");
  EXPECT_EQ(a->at("weight"), 30);
  EXPECT_EQ(a->at("zone"), "eu-1a");
  EXPECT_TRUE(a->at("metadata").empty());

  const auto* b = instance_at(json, "10.0.0.2:8080");
  ASSERT_NE(b, nullptr) << json.dump(2);
  EXPECT_EQ(b->at("id"), "10.0.0.2:8080");
  EXPECT_EQ(b->at("status"), "UP");
  EXPECT_EQ(b->at("weight"), 70);
  EXPECT_EQ(b->at("zone"), "eu-1b");
  EXPECT_EQ(b->at("metadata"), nlohmann::json({{"build", "abc123"}}));

  const auto unknown = ctl({"--hub", hub.endpoint, "--json", "resolve", "no-such-service"});
  EXPECT_TRUE(unknown.status.exited_with(1)) << unknown.status.describe() << "\n" << unknown.err;
}

TEST_F(IntegrationRegistration, AgentWhoseFirstHubIsDeadRegistersAtTheSecond) {
  const RefusingPort dead_hub;
  const auto hub = start_hub();
  HubProbe probe(hub.endpoint);
  start_agent("provider", {"--hub", dead_hub.endpoint(), "--hub", hub.endpoint, "--id", "provider",
                           "--misses-before-failover", "2", "--register", "orders=10.0.0.1:8080"});

  // Two missed beats and a backoff of about 500 ms: about a second.
  ASSERT_TRUE(wait_until_listed(probe, "orders", "10.0.0.1:8080"))
      << "the agent never registered at its second hub";
  const auto status = probe.status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_EQ(status->nodes, 1u);
  EXPECT_EQ(status->instances, 1u);
}

TEST_F(IntegrationRegistration, FreshConsumerResolvesWithoutWaitingOutTheQueryTimeout) {
  const auto hub = start_hub();
  HubProbe probe(hub.endpoint);
  start_provider(hub.endpoint, "provider", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_listed(probe, "orders", "10.0.0.1:8080"));

  // The hub is up and knows the answer: the first lookup is one round trip,
  // and the query timeout is only for a hub that does not answer.
  constexpr Millis kQueryTimeout{5000};
  const auto started_at = SteadyClock::now();
  auto& consumer =
      start_agent("consumer", {"--hub", hub.endpoint, "--id", "consumer", "--use", "orders",
                               "--query-timeout-ms", std::to_string(kQueryTimeout.count())});
  const auto resolved = wait_for_stdout_line(consumer, "resolved orders");
  const auto took = elapsed_since(started_at);
  ASSERT_TRUE(resolved);
  EXPECT_THAT(*resolved, HasSubstr("10.0.0.1:8080[UP]"));
  EXPECT_LT(took, kQueryTimeout / 2)
      << "the first resolve of a fresh agent waited for its query timeout ("
      << kQueryTimeout.count() << " ms) although the hub was up";
}

TEST_F(IntegrationRegistration, AgentWithOneMissBeforeFailoverStaysOnItsHealthyFirstHub) {
  const auto first = start_hub();
  HubOptions other;
  other.id = "hub-2";
  const auto second = start_hub(other);
  HubProbe first_probe(first.endpoint);
  HubProbe second_probe(second.endpoint);
  start_agent("provider", {"--hub", first.endpoint, "--hub", second.endpoint, "--id", "provider",
                           "--misses-before-failover", "1", "--register", "orders=10.0.0.1:8080"});
  const auto registered_at = [&](HubProbe& probe) {
    return is_listed(probe, "orders", "10.0.0.1:8080");
  };
  ASSERT_TRUE(poll_until([&] { return registered_at(first_probe) || registered_at(second_probe); },
                         kPatience));

  // The first hub answers every beat: there is never a missed beat to fail over on.
  EXPECT_TRUE(registered_at(first_probe)) << "registered at the second hub instead of the first";
  EXPECT_TRUE(holds_for(
      [&] {
        const auto s = second_probe.status(1s);
        return s && s->nodes == 0;
      },
      kLease + kBeat))
      << "the agent moved to the second hub although the first one answered";
}

TEST_F(IntegrationRegistration, ConsumerWritesEveryResolvedAndChangedLineWhole) {
  // stdout is the daemon's interface: one whole line per event, whichever
  // thread reports it. Many services, and a snapshot to write, give the
  // "resolved" (main thread) and "changed" (I/O thread) lines many chances to
  // cross.
  constexpr int kServices = 40;
  const auto hub = start_hub();
  HubProbe probe(hub.endpoint);
  std::vector<std::string> provider_args = {"--hub", hub.endpoint, "--id", "provider"};
  std::vector<std::string> consumer_args = {"--hub",
                                            hub.endpoint,
                                            "--id",
                                            "consumer",
                                            "--data",
                                            fresh_path("consumer-data").string(),
                                            "--query-timeout-ms",
                                            "500"};
  for (int i = 1; i <= kServices; ++i) {
    const auto name = "svc" + std::to_string(i);
    provider_args.insert(provider_args.end(),
                         {"--register", name + "=10.0.1." + std::to_string(i) + ":80"});
    consumer_args.insert(consumer_args.end(), {"--use", name});
  }
  start_agent("provider", provider_args);
  ASSERT_TRUE(poll_until(
      [&] {
        const auto s = probe.status(1s);
        return s && s->instances == kServices;
      },
      kPatience));

  auto& consumer = start_agent("consumer", consumer_args);
  ASSERT_TRUE(wait_for_stdout_line(consumer, "resolved svc" + std::to_string(kServices) + " "));
  const std::regex whole_line(
      R"(^(resolved|changed) svc[0-9]+ v[0-9]+ \(1 instances, age [0-9]+ ms\): 10\.0\.1\.[0-9]+:80\[UP\]$)");
  std::istringstream out(consumer.out());
  int resolved = 0;
  for (std::string line; std::getline(out, line);) {
    EXPECT_TRUE(std::regex_match(line, whole_line)) << "garbled line: '" << line << "'";
    if (line.starts_with("resolved ")) ++resolved;
  }
  EXPECT_EQ(resolved, kServices);
}

}  // namespace
}  // namespace cascade::integration
