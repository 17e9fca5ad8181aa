// Consul's service registrations read into ConsulServices, and the cascade
// registrations they become (agent/api/consul_registration.hpp).

#include "cascade/agent/api/consul_registration.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cascade::agent::api {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

const AgentIdentity kAgent{"agent-a", "dc1", "10.9.9.9"};

ConsulService parse(std::string_view body) {
  auto parsed = consul_service_from_json(body, kAgent);
  if (auto* error = std::get_if<BodyError>(&parsed)) {
    ADD_FAILURE() << "refused: " << error->message << "\n" << body;
    return {};
  }
  return std::get<ConsulService>(parsed);
}

std::string refusal(std::string_view body) {
  auto parsed = consul_service_from_json(body, kAgent);
  if (auto* error = std::get_if<BodyError>(&parsed)) return error->message;
  ADD_FAILURE() << "accepted: " << body;
  return {};
}

TEST(ConsulRegistrationFromJson, PythonConsulsLowerCaseBodyWithATtlCheck) {
  // What python-consul 0.7.1 sends for
  // agent.service.register('web', service_id='web-1', address='10.0.0.5', port=8080,
  //                        tags=['v1'], check=consul.Check.ttl('10s'))
  const auto s = parse(
      R"({"name": "web", "id": "web-1", "address": "10.0.0.5", "port": 8080, "tags": ["v1"],
          "check": {"ttl": "10s"}})");
  EXPECT_EQ(s.name, "web");
  EXPECT_EQ(s.id, "web-1");
  EXPECT_EQ(s.host, "10.0.0.5");
  EXPECT_EQ(s.port, 8080);
  EXPECT_EQ(s.tags, std::vector<std::string>{"v1"});
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_EQ(s.checks[0].id, "service:web-1") << "Consul's name for a service's single check";
  EXPECT_EQ(s.checks[0].name, "Service 'web' check");
  EXPECT_EQ(s.checks[0].ttl, 10s);
  EXPECT_EQ(s.checks[0].initial, std::nullopt) << "critical until reported";
}

TEST(ConsulRegistrationFromJson, GoApisBodyWithFieldsCascadeIgnores) {
  // As github.com/hashicorp/consul/api marshals an AgentServiceRegistration.
  const auto s = parse(R"({
      "Kind": "", "ID": "pay-7", "Name": "pay", "Tags": ["a", "b"], "Port": 9000,
      "Address": "10.0.0.7", "TaggedAddresses": {"lan": {"Address": "10.0.0.7", "Port": 9000}},
      "EnableTagOverride": true, "Meta": {"version": "2.1"},
      "Weights": {"Passing": 10, "Warning": 1},
      "Check": {"CheckID": "pay-alive", "Name": "alive", "TTL": "1m30s", "Status": "passing",
                "Notes": "report every minute", "DeregisterCriticalServiceAfter": "90m",
                "Interval": "", "Timeout": ""},
      "Checks": null, "Proxy": null, "Connect": null, "Namespace": ""})");
  EXPECT_EQ(s.id, "pay-7");
  EXPECT_EQ(s.meta, (std::map<std::string, std::string>{{"version", "2.1"}}));
  EXPECT_EQ(s.passing_weight, 10u);
  EXPECT_EQ(s.warning_weight, 1u);
  ASSERT_EQ(s.checks.size(), 1u);
  const auto& check = s.checks[0];
  EXPECT_EQ(check.id, "pay-alive");
  EXPECT_EQ(check.name, "alive");
  EXPECT_EQ(check.notes, "report every minute");
  EXPECT_EQ(check.ttl, 90s);
  EXPECT_EQ(check.initial, CheckStatus::kPassing);
  EXPECT_EQ(check.deregister_after, std::chrono::minutes(90));
}

TEST(ConsulRegistrationFromJson, SnakeCaseAliasesAreTheSameFields) {
  const auto s = parse(
      R"({"name": "web", "enable_tag_override": true,
          "check": {"ttl": "5s", "deregister_critical_service_after": "1m", "tls_skip_verify": true}})");
  ASSERT_EQ(s.checks.size(), 1u);
  EXPECT_EQ(s.checks[0].deregister_after, std::chrono::minutes(1));
}

TEST(ConsulRegistrationFromJson, SeveralChecksAreNumberedAfterTheServiceId) {
  const auto s = parse(
      R"({"Name": "web", "ID": "web-1", "Check": {"TTL": "5s"},
          "Checks": [{"TTL": "6s"}, {"TTL": "7s", "CheckID": "mine"}]})");
  ASSERT_EQ(s.checks.size(), 3u);
  EXPECT_EQ(s.checks[0].id, "service:web-1:1");
  EXPECT_EQ(s.checks[1].id, "service:web-1:2");
  EXPECT_EQ(s.checks[2].id, "mine");
}

TEST(ConsulRegistrationFromJson, DefaultsAreTheNameAsIdTheAgentsHostAndCascadesWeight) {
  const auto s = parse(R"({"Name": "web", "Check": {}})");
  EXPECT_EQ(s.id, "web");
  EXPECT_EQ(s.host, "10.9.9.9");
  EXPECT_EQ(s.port, 0);
  EXPECT_EQ(s.passing_weight, kDefaultConsulWeight);
  EXPECT_EQ(s.warning_weight, kDefaultConsulWeight);
  EXPECT_TRUE(s.checks.empty()) << "an empty check is no check, as in Consul";
}

TEST(ConsulRegistrationFromJson, WeightsWithoutWarningWeighWarningsZeroAsConsulDoes) {
  const auto s = parse(R"({"Name": "web", "Weights": {"Passing": 5}})");
  EXPECT_EQ(s.passing_weight, 5u);
  EXPECT_EQ(s.warning_weight, 0u);
}

TEST(ConsulRegistrationFromJson, BadBodiesAreRefusedSayingWhy) {
  const std::pair<std::string_view, std::string_view> cases[] = {
      {R"({"Name": )", "the body is not valid JSON"},
      {R"(["web"])", "the body must be a JSON object"},
      {R"({"ID": "web-1"})", "Missing service name"},
      {R"({"Name": 7})", "field 'Name' must be a string"},
      {R"({"Name": "web", "Port": "80"})", "field 'Port' must be a whole number"},
      {R"({"Name": "web", "Port": 65536})", "field 'Port' must be at most 65535"},
      {R"({"Name": "web", "Tags": "v1"})", "field 'Tags' must be an array of strings"},
      {R"({"Name": "web", "Meta": {"a": 1}})", "field 'Meta' must be an object of string values"},
      {R"({"Name": "web", "Chek": {"TTL": "5s"}})", "unknown field 'Chek'"},
      {R"({"Name": "web", "Address": "0.0.0.0"})", "Invalid service address"},
      {R"({"Name": "web", "Weights": {"Passing": 0, "Warning": 1}})",
       "Invalid Weights: Passing must be greater than 0"},
      {R"({"Name": "web", "Meta": {"consul-tags": "x"}})", "the prefix 'consul-' is reserved"},
      {R"({"Name": "web", "Check": {"HTTP": "http://127.0.0.1/health", "Interval": "10s"}})",
       "in Check: field 'HTTP' asks for a check cascade cannot run"},
      {R"({"Name": "web", "Checks": [{"TTL": "5s"}, {"Args": ["/bin/true"]}]})",
       "in Checks[1]: field 'Args' asks for a check cascade cannot run"},
      {R"({"Name": "web", "Check": {"Name": "alive"}})", "in Check: a check needs a TTL"},
      {R"({"Name": "web", "Check": {"TTL": "0s"}})",
       "in Check: a check needs a TTL greater than 0"},
      {R"({"Name": "web", "Check": {"TTL": "ten seconds"}})",
       "in Check: field 'TTL' must be a duration"},
      {R"({"Name": "web", "Check": {"TTL": "5s", "Status": "ok"}})",
       "in Check: field 'Status' must be passing, warning or critical"},
      {R"({"Name": "web", "Checks": [{"TTL": "5s", "CheckID": "x"}, {"TTL": "5s", "CheckID": "x"}]})",
       "check ID 'x' is given twice"},
      {R"({"Name": "web\u0001"})", "Invalid service: service name has a control character"},
  };
  for (const auto& [body, reason] : cases)
    EXPECT_THAT(refusal(body), HasSubstr(std::string(reason))) << body;
}

TEST(ConsulRegistrationFromJson, MetaAndTagsMustLeaveRoomForConsulsReservedKeys) {
  nlohmann::json body = {{"Name", "web"}, {"Meta", nlohmann::json::object()}};
  for (std::size_t i = 0; i < proto::kMaxMetadataEntries - kReservedMetadataEntries; ++i)
    body["Meta"]["k" + std::to_string(i)] = "v";
  parse(body.dump());
  body["Meta"]["one-more"] = "v";
  EXPECT_THAT(refusal(body.dump()), HasSubstr("Invalid Service Meta: at most 61 entries"));

  nlohmann::json tags = {{"Name", "web"}, {"Tags", std::vector<std::string>(100, "0123456789")}};
  EXPECT_THAT(refusal(tags.dump()), HasSubstr("Tags take 1301 bytes as JSON"));
}

TEST(ConsulRegistrationToCascade, AddressTagsNodeAndChecksGoWhereOtherAgentsFindThem) {
  const auto s = parse(
      R"({"Name": "web", "ID": "web-1", "Address": "10.0.0.5", "Port": 8080, "Tags": ["v1", "blue"],
          "Meta": {"version": "1.2"}, "Weights": {"Passing": 10, "Warning": 2},
          "Check": {"TTL": "10s"}})");
  const auto passing = registration_of(s, CheckStatus::kPassing, kAgent);
  EXPECT_EQ(passing.service, (proto::ServiceKey{"web", "default"}));
  EXPECT_EQ(passing.instance.id, "web-1");
  EXPECT_EQ(passing.instance.address, "10.0.0.5:8080");
  EXPECT_EQ(passing.instance.zone, "dc1");
  EXPECT_EQ(passing.instance.status, proto::InstanceStatus::kUp);
  EXPECT_EQ(passing.instance.weight, 10u);
  EXPECT_EQ(passing.instance.metadata,
            (std::map<std::string, std::string>{{"version", "1.2"},
                                                {"consul-tags", R"(["v1","blue"])"},
                                                {"consul-node", "agent-a"},
                                                {"consul-check", "passing"}}));

  const auto warning = registration_of(s, CheckStatus::kWarning, kAgent);
  EXPECT_EQ(warning.instance.status, proto::InstanceStatus::kUp);
  EXPECT_EQ(warning.instance.weight, 2u) << "Weights.Warning while a check warns";
  EXPECT_EQ(warning.instance.metadata.at("consul-check"), "warning");

  const auto critical = registration_of(s, CheckStatus::kCritical, kAgent);
  EXPECT_EQ(critical.instance.status, proto::InstanceStatus::kDown);
  EXPECT_EQ(critical.instance.metadata.at("consul-check"), "critical");
}

TEST(ConsulRegistrationToCascade, AServiceWithoutChecksOrTagsCarriesOnlyItsNode) {
  const auto r = registration_of(parse(R"({"Name": "web"})"), CheckStatus::kPassing, kAgent);
  EXPECT_EQ(r.instance.metadata, (std::map<std::string, std::string>{{"consul-node", "agent-a"}}));
  EXPECT_EQ(r.instance.address, "10.9.9.9:0");
}

TEST(ConsulRegistrationToCascade, AnIpv6AddressIsBracketed) {
  EXPECT_EQ(join_host_port("fd00::5", 80), "[fd00::5]:80");
  EXPECT_EQ(join_host_port("10.0.0.5", 80), "10.0.0.5:80");
  EXPECT_EQ(join_host_port("web.internal", 80), "web.internal:80");
}

}  // namespace
}  // namespace cascade::agent::api
