// Cascade's instances as Consul's answers describe them, and Consul's index
// as a cascade version (agent/api/consul_json.hpp).

#include "cascade/agent/api/consul_json.hpp"

#include <gtest/gtest.h>

#include "cascade/agent/api/consul_registration.hpp"

namespace cascade::agent::api {
namespace {

constexpr std::uint64_t kVersion = (std::uint64_t{1} << 40) + 7;
const AgentIdentity kAgent{"agent-a", "dc1", "10.9.9.9"};

proto::Instance registered(std::string_view body, CheckStatus status = CheckStatus::kPassing) {
  auto parsed = consul_service_from_json(body, kAgent);
  EXPECT_TRUE(std::holds_alternative<ConsulService>(parsed)) << body;
  return registration_of(std::get<ConsulService>(parsed), status, kAgent).instance;
}

Resolution resolution_of(std::vector<proto::Instance> instances, std::uint64_t version = kVersion) {
  Resolution r;
  r.service = {"web", "default"};
  r.version = version;
  r.instances = std::move(instances);
  return r;
}

proto::Instance native(std::string id, std::string address, std::string zone = "") {
  proto::Instance in;
  in.id = std::move(id);
  in.address = std::move(address);
  in.zone = std::move(zone);
  return in;
}

TEST(ConsulIndex, IsTheVersionAndOneForAServiceNoHubKnows) {
  EXPECT_EQ(consul_index(0), 1u) << "Consul's indexes start at 1";
  EXPECT_EQ(consul_index(kVersion), kVersion);
  EXPECT_EQ(version_of_index(1), 0u) << "a client that saw no such service waits for one";
  EXPECT_EQ(version_of_index(kVersion), kVersion);
  for (const std::uint64_t version : {std::uint64_t{0}, kVersion})
    EXPECT_EQ(version_of_index(consul_index(version)), version);
}

TEST(ConsulInstanceView, GivesBackWhatAConsulRegistrationSaid) {
  const auto in = consul_instance(
      "web", registered(R"({"Name": "web", "ID": "web-1", "Address": "10.0.0.5", "Port": 8080,
                            "Tags": ["v1", "blue"], "Meta": {"version": "1.2"}})"));
  EXPECT_EQ(in.service, "web");
  EXPECT_EQ(in.id, "web-1");
  EXPECT_EQ(in.host, "10.0.0.5");
  EXPECT_EQ(in.port, 8080);
  EXPECT_EQ(in.tags, (std::vector<std::string>{"v1", "blue"}));
  EXPECT_EQ(in.meta, (std::map<std::string, std::string>{{"version", "1.2"}}))
      << "the consul- keys stay inside";
  EXPECT_EQ(in.node, "agent-a");
  EXPECT_EQ(in.datacenter, "dc1");
  EXPECT_EQ(in.status(), CheckStatus::kPassing);
}

TEST(ConsulInstanceView, ANativeInstanceIsItsOwnNodeInTheDefaultDatacenter) {
  auto instance = native("orders-1", "10.0.0.8:9000");
  instance.metadata = {{"version", "3"}};
  const auto in = consul_instance("orders", instance);
  EXPECT_EQ(in.node, "10.0.0.8");
  EXPECT_EQ(in.host, "10.0.0.8");
  EXPECT_EQ(in.port, 9000);
  EXPECT_TRUE(in.tags.empty());
  EXPECT_EQ(in.meta, instance.metadata);
  EXPECT_EQ(in.datacenter, "cascade");
}

TEST(ConsulInstanceView, StatusAndHubVerdictsBecomeCheckStatuses) {
  auto down = native("a", "10.0.0.1:80");
  down.status = proto::InstanceStatus::kDown;
  EXPECT_EQ(consul_instance("web", down).service_status, CheckStatus::kCritical);
  EXPECT_EQ(consul_instance("web", down).service_output, "status DOWN");

  auto out = native("a", "10.0.0.1:80");
  out.status = proto::InstanceStatus::kOutOfService;
  EXPECT_EQ(consul_instance("web", out).status(), CheckStatus::kCritical);

  auto isolated = native("a", "10.0.0.1:80");
  isolated.health = proto::Health::kIsolated;
  isolated.health_reason = "isolated: 5 reports from 2 callers";
  EXPECT_EQ(consul_instance("web", isolated).service_status, CheckStatus::kCritical);
  EXPECT_EQ(consul_instance("web", isolated).service_output, isolated.health_reason);

  auto unconfirmed = native("a", "10.0.0.1:80");
  unconfirmed.health = proto::Health::kUnconfirmed;
  const auto held = consul_instance("web", unconfirmed);
  EXPECT_EQ(held.node_status, CheckStatus::kWarning) << "the node's lease, not the instance";
  EXPECT_EQ(held.service_status, CheckStatus::kPassing);
  EXPECT_EQ(held.status(), CheckStatus::kWarning);

  const auto warned = consul_instance(
      "web", registered(R"({"Name": "web", "Check": {"TTL": "5s"}})", CheckStatus::kWarning));
  EXPECT_EQ(warned.service_status, CheckStatus::kWarning);
}

TEST(ConsulHealthJson, AnEntryHasTheNodeTheServiceAndTwoChecks) {
  const auto json =
      health_json(resolution_of({registered(R"({"Name": "web", "ID": "web-1", "Address": "10.0.0.5",
                                    "Port": 8080, "Tags": ["v1"], "Check": {"TTL": "5s"}})")}),
                  {});
  // As Consul's /v1/health/service answers, with the version as every index.
  const auto expected = Json::parse(R"([{
    "Node": {"ID": "", "Node": "agent-a", "Address": "10.0.0.5", "Datacenter": "dc1",
             "TaggedAddresses": {"lan": "10.0.0.5", "wan": "10.0.0.5"},
             "Meta": {"cascade-tier": "0", "cascade-health": "ok"},
             "CreateIndex": 1099511627783, "ModifyIndex": 1099511627783},
    "Service": {"ID": "web-1", "Service": "web", "Tags": ["v1"], "Address": "10.0.0.5",
                "Meta": {}, "Port": 8080, "Weights": {"Passing": 100, "Warning": 100},
                "EnableTagOverride": false, "Datacenter": "dc1",
                "CreateIndex": 1099511627783, "ModifyIndex": 1099511627783},
    "Checks": [
      {"Node": "agent-a", "CheckID": "serfHealth", "Name": "Serf Health Status",
       "Status": "passing", "Notes": "", "Output": "Agent alive and reachable", "ServiceID": "",
       "ServiceName": "", "ServiceTags": [], "Type": "",
       "CreateIndex": 1099511627783, "ModifyIndex": 1099511627783},
      {"Node": "agent-a", "CheckID": "service:web-1", "Name": "Service 'web' check",
       "Status": "passing", "Notes": "", "Output": "TTL checks passing", "ServiceID": "web-1",
       "ServiceName": "web", "ServiceTags": ["v1"], "Type": "ttl",
       "CreateIndex": 1099511627783, "ModifyIndex": 1099511627783}]}])");
  EXPECT_EQ(json, expected) << json.dump(2);
}

TEST(ConsulHealthJson, FiltersOnPassingTagAndDatacenter) {
  auto down = native("down", "10.0.0.1:80", "dc1");
  down.status = proto::InstanceStatus::kDown;
  const auto r =
      resolution_of({registered(R"({"Name": "web", "ID": "blue", "Tags": ["blue"]})"),
                     registered(R"({"Name": "web", "ID": "warn", "Check": {"TTL": "5s"}})",
                                CheckStatus::kWarning),
                     down, native("far", "10.2.0.1:80", "dc2")});
  auto ids = [&](const ConsulFilter& filter) {
    std::vector<std::string> list;
    for (const auto& entry : health_json(r, filter))
      list.push_back(entry["Service"]["ID"]);
    return list;
  };
  EXPECT_EQ(ids({}), (std::vector<std::string>{"blue", "warn", "down", "far"}));
  EXPECT_EQ(ids({.passing = true}), (std::vector<std::string>{"blue", "far"}))
      << "warning is not passing, as in Consul";
  EXPECT_EQ(ids({.tag = "blue"}), std::vector<std::string>{"blue"});
  EXPECT_EQ(ids({.datacenter = "dc2"}), std::vector<std::string>{"far"});
  EXPECT_EQ(ids({.datacenter = "dc1"}), (std::vector<std::string>{"blue", "warn", "down"}));
}

TEST(ConsulHealthJson, AServiceNoHubKnowsIsAnEmptyList) {
  EXPECT_EQ(health_json(resolution_of({}, 0), {}), Json::array());
}

TEST(ConsulCatalogJson, AnEntryIsFlat) {
  const auto json = catalog_service_json(
      resolution_of({registered(R"({"Name": "web", "ID": "web-1", "Address": "10.0.0.5",
                                    "Port": 8080, "Tags": ["v1"], "Meta": {"k": "v"}})")}),
      {});
  // As Consul's /v1/catalog/service answers.
  const auto expected = Json::parse(R"([{
    "ID": "", "Node": "agent-a", "Address": "10.0.0.5", "Datacenter": "dc1",
    "TaggedAddresses": {"lan": "10.0.0.5", "wan": "10.0.0.5"},
    "NodeMeta": {"cascade-tier": "0", "cascade-health": "ok"},
    "ServiceKind": "", "ServiceID": "web-1", "ServiceName": "web", "ServiceTags": ["v1"],
    "ServiceAddress": "10.0.0.5", "ServiceWeights": {"Passing": 100, "Warning": 100},
    "ServiceMeta": {"k": "v"}, "ServicePort": 8080, "ServiceEnableTagOverride": false,
    "CreateIndex": 1099511627783, "ModifyIndex": 1099511627783}])");
  EXPECT_EQ(json, expected) << json.dump(2);
}

TEST(ConsulAddresses, SplitIntoHostAndPort) {
  using Split = std::pair<std::string, std::uint16_t>;
  EXPECT_EQ(split_host_port("10.0.0.5:8080"), (Split{"10.0.0.5", 8080}));
  EXPECT_EQ(split_host_port("[fd00::5]:80"), (Split{"fd00::5", 80}));
  EXPECT_EQ(split_host_port("web.internal:443"), (Split{"web.internal", 443}));
  EXPECT_EQ(split_host_port("fd00::5"), (Split{"fd00::5", 0}));
  EXPECT_EQ(split_host_port("http://web/health"), (Split{"http://web/health", 0}));
  EXPECT_EQ(split_host_port("web:99999"), (Split{"web:99999", 0}));
}

}  // namespace
}  // namespace cascade::agent::api
