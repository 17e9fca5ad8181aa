// The services registered through the Consul API and the registrations their
// checks make of them (agent/api/consul_services.hpp), with a recording sink
// and a FakeClock.

#include "cascade/agent/api/consul_services.hpp"

#include <gtest/gtest.h>

namespace cascade::agent::api {
namespace {

using namespace std::chrono_literals;

const AgentIdentity kAgent{"agent-a", "dc1", "10.9.9.9"};

ConsulService service(std::string_view body) {
  auto parsed = consul_service_from_json(body, kAgent);
  EXPECT_TRUE(std::holds_alternative<ConsulService>(parsed)) << body;
  return std::get<ConsulService>(parsed);
}

class ConsulServicesTest : public ::testing::Test {
 protected:
  ConsulServicesTest()
      : services_({[this](proto::Registration r) { puts_.push_back(std::move(r)); },
                   [this](const proto::ServiceKey& key, const std::string& id) {
                     removes_.push_back({key, id});
                   }},
                  kAgent) {}

  MonoTime now() const { return clock_.now(); }
  const proto::Instance& last() const { return puts_.back().instance; }

  FakeClock clock_;
  std::vector<proto::Registration> puts_;
  std::vector<proto::InstanceKey> removes_;
  ConsulServices services_;
};

constexpr std::string_view kWeb =
    R"({"Name": "web", "ID": "web-1", "Port": 80, "Weights": {"Passing": 10, "Warning": 3},
        "Check": {"TTL": "10s"}})";

TEST_F(ConsulServicesTest, AServiceWithATtlCheckRegistersDownUntilItsFirstPass) {
  ASSERT_EQ(services_.put(service(kWeb), now()), std::nullopt);
  ASSERT_EQ(puts_.size(), 1u);
  EXPECT_EQ(last().status, proto::InstanceStatus::kDown);
  EXPECT_EQ(last().address, "10.9.9.9:80");
  ASSERT_TRUE(services_.report("service:web-1", CheckStatus::kPassing, "", now()));
  ASSERT_EQ(puts_.size(), 2u);
  EXPECT_EQ(last().status, proto::InstanceStatus::kUp);
  EXPECT_EQ(last().weight, 10u);
}

TEST_F(ConsulServicesTest, RepeatedPassesRegisterNothingMore) {
  services_.put(service(kWeb), now());
  for (int i = 0; i < 5; ++i) {
    services_.report("service:web-1", CheckStatus::kPassing, "", now());
    clock_.advance(2s);
    services_.on_timer(now());
  }
  EXPECT_EQ(puts_.size(), 2u) << "DOWN at registration, UP at the first pass; then no change";
}

TEST_F(ConsulServicesTest, AWarningKeepsTheInstanceUpAtTheWarningWeight) {
  services_.put(service(kWeb), now());
  services_.report("service:web-1", CheckStatus::kWarning, "slow", now());
  EXPECT_EQ(last().status, proto::InstanceStatus::kUp);
  EXPECT_EQ(last().weight, 3u);
  EXPECT_EQ(last().metadata.at("consul-check"), "warning");
  services_.report("service:web-1", CheckStatus::kCritical, "broken", now());
  EXPECT_EQ(last().status, proto::InstanceStatus::kDown);
}

TEST_F(ConsulServicesTest, ATtlThatRunsOutMakesTheInstanceDownOnTheTimer) {
  services_.put(service(kWeb), now());
  services_.report("service:web-1", CheckStatus::kPassing, "", now());
  EXPECT_EQ(services_.next_deadline(), now() + 10s);
  clock_.advance(9s);
  services_.on_timer(now());
  EXPECT_EQ(last().status, proto::InstanceStatus::kUp);
  clock_.advance(1s);
  services_.on_timer(now());
  EXPECT_EQ(last().status, proto::InstanceStatus::kDown);
  EXPECT_EQ(services_.checks().at(0).check.output, "TTL expired");
  EXPECT_EQ(services_.find("web-1")->status, CheckStatus::kCritical);
}

TEST_F(ConsulServicesTest, AServiceCriticalForTooLongIsDeregistered) {
  services_.put(service(R"({"Name": "web", "ID": "web-1",
                            "Check": {"TTL": "10s", "DeregisterCriticalServiceAfter": "1m"}})"),
                now());
  clock_.advance(59s);
  services_.on_timer(now());
  EXPECT_TRUE(removes_.empty());
  clock_.advance(1s);
  services_.on_timer(now());
  ASSERT_EQ(removes_.size(), 1u);
  EXPECT_EQ(removes_[0], (proto::InstanceKey{{"web", "default"}, "web-1"}));
  EXPECT_EQ(services_.find("web-1"), std::nullopt);
  EXPECT_TRUE(services_.checks().empty());
  EXPECT_EQ(services_.next_deadline(), std::nullopt);
}

TEST_F(ConsulServicesTest, ACheckIdOfAnotherServiceIsRefused) {
  services_.put(service(R"({"Name": "web", "Check": {"TTL": "5s", "CheckID": "alive"}})"), now());
  const auto error = services_.put(
      service(R"({"Name": "api", "Check": {"TTL": "5s", "CheckID": "alive"}})"), now());
  ASSERT_TRUE(error);
  EXPECT_EQ(*error, "Invalid check: check ID 'alive' belongs to service 'web'");
  EXPECT_EQ(services_.find("api"), std::nullopt);
}

TEST_F(ConsulServicesTest, RegisteringAnIdUnderANewNameDeregistersTheOldInstance) {
  services_.put(service(R"({"Name": "web", "ID": "x"})"), now());
  services_.put(service(R"({"Name": "api", "ID": "x"})"), now());
  ASSERT_EQ(removes_.size(), 1u);
  EXPECT_EQ(removes_[0], (proto::InstanceKey{{"web", "default"}, "x"}));
  EXPECT_EQ(puts_.back().service.name, "api");
}

TEST_F(ConsulServicesTest, UnknownIdsAreSaidSo) {
  EXPECT_FALSE(services_.remove("nope"));
  EXPECT_FALSE(services_.report("service:nope", CheckStatus::kPassing, "", now()));
  EXPECT_TRUE(puts_.empty());
  EXPECT_TRUE(removes_.empty());
}

TEST_F(ConsulServicesTest, DeregisteringDropsTheChecks) {
  services_.put(service(kWeb), now());
  ASSERT_TRUE(services_.remove("web-1"));
  EXPECT_EQ(removes_.size(), 1u);
  EXPECT_FALSE(services_.report("service:web-1", CheckStatus::kPassing, "", now()));
}

}  // namespace
}  // namespace cascade::agent::api
