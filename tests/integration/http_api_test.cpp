// cascade-agent's native HTTP API (schemas/http-api.md) against real hubs
// and agents, through libcurl: sidecars that register and look up for
// applications, watches, picks, failure reports, errors and their codes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <csignal>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "cascade/tests/common/curl_client.hpp"
#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"

namespace cascade::integration {
namespace {

using ::testing::HasSubstr;
using testing::http;
using testing::http_all;
using testing::http_get;
using testing::HttpCall;
using testing::HttpResult;
using Json = nlohmann::json;

// An agent with its HTTP API on a free loopback port.
struct ApiAgent {
  Process* process = nullptr;
  std::string base;  // "http://127.0.0.1:PORT"
  std::string url(const std::string& path) const { return base + path; }
};

Json json_of(const HttpResult& r) {
  return Json::parse(r.body, nullptr, false);
}

std::string code_of(const HttpResult& r) {
  const auto json = json_of(r);
  return json.is_object() && json.contains("error") ? json["error"].value("code", "") : "";
}

class IntegrationHttpApi : public ClusterTest {
 protected:
  // An agent started with no --register and no --use: a sidecar.
  ApiAgent start_api_agent(const std::string& id, const std::string& hub_endpoint,
                           std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"--hub", hub_endpoint, "--id", id, "--http", "127.0.0.1:0"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto& agent = start_agent(id, args);
    const auto line = wait_for_stdout_line(agent, "http listening on ");
    EXPECT_TRUE(line) << "no 'http listening on' line from " << id;
    if (!line) return {&agent, ""};
    return {&agent, "http://" + line->substr(line->rfind(' ') + 1)};
  }

  static HttpResult put_instance(const ApiAgent& agent, const Json& body) {
    return http({"PUT", agent.url("/api/v1/instances"), body.dump()});
  }

  // Polls GET /api/v1/services/NAME on `agent` until `pred` holds for its JSON.
  static bool wait_for_service(const ApiAgent& agent, const std::string& name,
                               const std::function<bool(const Json&)>& pred) {
    return poll_until(
        [&] {
          const auto r = http_get(agent.url("/api/v1/services/" + name));
          return r.status == 200 && pred(json_of(r));
        },
        kPatience, Millis{50});
  }

  static std::size_t instances_of(const Json& service) { return service["instances"].size(); }

  // Registers each instance of `orders` (fields beside the service) through
  // `provider`, and waits until `consumer` lists them all.
  static void register_orders(const ApiAgent& provider, const ApiAgent& consumer,
                              const std::vector<Json>& instances) {
    for (auto fields : instances) {
      fields["service"] = "orders";
      const auto put = put_instance(provider, fields);
      ASSERT_EQ(put.status, 200) << put.body;
    }
    ASSERT_TRUE(wait_for_service(
        consumer, "orders", [&](const Json& s) { return instances_of(s) == instances.size(); }))
        << "the consumer never listed all " << instances.size() << " instances";
  }
};

TEST_F(IntegrationHttpApi, ASidecarRegistersForItsApplicationAndAnotherAgentResolvesIt) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  const auto put = put_instance(provider, {{"service", "orders"},
                                           {"id", "orders-1"},
                                           {"address", "10.0.0.1:8080"},
                                           {"weight", 30},
                                           {"zone", "eu-1a"},
                                           {"metadata", {{"build", "abc123"}}}});
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(json_of(put)["registered"]["id"], "orders-1");

  ASSERT_TRUE(
      wait_for_service(consumer, "orders", [](const Json& s) { return instances_of(s) == 1; }));
  const auto resolved = http_get(consumer.url("/api/v1/services/orders"));
  const auto service = json_of(resolved);
  EXPECT_EQ(service["service"], "orders");
  EXPECT_EQ(service["group"], "default");
  EXPECT_EQ(service["source"], "hub");
  EXPECT_EQ(service["stale"], false);
  EXPECT_EQ(resolved.headers.at("x-cascade-index"),
            std::to_string(service["version"].get<std::uint64_t>()));
  const auto& instance = service["instances"][0];
  EXPECT_EQ(instance["id"], "orders-1");
  EXPECT_EQ(instance["address"], "10.0.0.1:8080");
  EXPECT_EQ(instance["status"], "UP");
  EXPECT_EQ(instance["weight"], 30);
  EXPECT_EQ(instance["zone"], "eu-1a");
  EXPECT_EQ(instance["tier"], 0);
  EXPECT_EQ(instance["health"], "ok");
  EXPECT_EQ(instance["metadata"]["build"], "abc123");

  // The provider's agent holds it under its own node id, as its status says.
  const auto status = json_of(http_get(provider.url("/api/v1/status")));
  EXPECT_EQ(status["node_id"], "provider");
  EXPECT_EQ(status["state"], "connected");
  EXPECT_GT(status["lease_ms"], 0);
  EXPECT_GT(status["beat_interval_ms"], 0);
  ASSERT_EQ(status["registered"].size(), 1u);
  EXPECT_EQ(status["registered"][0]["address"], "10.0.0.1:8080");
  const auto listed = json_of(http_get(provider.url("/api/v1/instances")));
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_EQ(listed[0]["id"], "orders-1");
  // The consumer's status says what it uses.
  const auto uses = json_of(http_get(consumer.url("/api/v1/status")))["uses"];
  ASSERT_EQ(uses.size(), 1u);
  EXPECT_EQ(uses[0]["service"], "orders");
}

TEST_F(IntegrationHttpApi, SeveralInstancesPerAgentAndADeregistrationReachesTheOtherAgent) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  register_orders(
      provider, consumer,
      {{{"address", "10.0.0.1:80"}}, {{"address", "10.0.0.2:80"}}, {{"address", "10.0.0.3:80"}}});
  const auto removed = http({"DELETE", provider.url("/api/v1/instances/orders/10.0.0.2:80")});
  ASSERT_EQ(removed.status, 200) << removed.body;
  ASSERT_TRUE(
      wait_for_service(consumer, "orders", [](const Json& s) { return instances_of(s) == 2; }));
  const auto again = http({"DELETE", provider.url("/api/v1/instances/orders/10.0.0.2:80")});
  EXPECT_EQ(again.status, 404);
  EXPECT_EQ(code_of(again), "not_registered");
}

TEST_F(IntegrationHttpApi, TheAgentsGracefulStopTakesWhatApplicationsRegisteredAlong) {
  const auto hub = start_hub();
  auto provider = start_api_agent("provider", hub.endpoint);
  ASSERT_EQ(put_instance(provider, {{"service", "orders"}, {"address", "10.0.0.1:80"}}).status,
            200);
  HubProbe probe(hub.endpoint);
  ASSERT_TRUE(wait_until_listed(probe, "orders", "10.0.0.1:80"));
  provider.process->signal(SIGTERM);
  const auto ended = provider.process->wait_for(kPatience);
  ASSERT_TRUE(ended && ended->exited_with(0));
  // Deregistered (acknowledged) before the agent exited, not left to expire.
  EXPECT_FALSE(is_listed(probe, "orders", "10.0.0.1:80"));
}

TEST_F(IntegrationHttpApi, AWatchReturnsWhenTheServiceChangesAndNotBefore) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  register_orders(provider, consumer, {{{"address", "10.0.0.1:80"}}});
  const auto version =
      json_of(http_get(consumer.url("/api/v1/services/orders")))["version"].get<std::uint64_t>();
  const auto watch_url =
      consumer.url("/api/v1/services/orders?index=" + std::to_string(version) + "&wait=20s");

  // 200 watchers at once, on a server with two threads: parked, not queued.
  std::vector<HttpResult> woken;
  const auto start = SteadyClock::now();
  std::thread watchers([&] {
    woken = http_all(std::vector<HttpCall>(200, HttpCall{"GET", watch_url}));
  });
  std::this_thread::sleep_for(Millis{500});  // all parked: nothing has changed
  ASSERT_EQ(put_instance(provider, {{"service", "orders"}, {"address", "10.0.0.2:80"}}).status,
            200);
  watchers.join();
  EXPECT_LT(elapsed_since(start), Millis{10'000}) << "the watchers waited for their timeout";
  EXPECT_GE(elapsed_since(start), Millis{500}) << "the watchers returned before the change";
  for (const auto& r : woken) {
    ASSERT_EQ(r.status, 200) << r.error << r.body;
    const auto service = json_of(r);
    EXPECT_NE(service["version"], version);
    EXPECT_EQ(instances_of(service), 2u);
  }
  // An index the agent does not hold any more is answered at once.
  const auto at_once = http_get(watch_url);
  EXPECT_EQ(at_once.status, 200);
  EXPECT_EQ(instances_of(json_of(at_once)), 2u);
}

TEST_F(IntegrationHttpApi, ManyRequestsAndWatchesOfAServiceCostTheHubOneQuery) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  ASSERT_EQ(put_instance(provider, {{"service", "orders"}, {"address", "10.0.0.1:80"}}).status,
            200);
  HubProbe probe(hub.endpoint);
  ASSERT_TRUE(wait_until_listed(probe, "orders", "10.0.0.1:80"));
  auto queries = [&] {
    const auto status = probe.status(kPatience);
    return status ? counter(*status, "queries").value_or(0) : 0;
  };
  const auto before = queries();
  // 300 lookups of a service the consumer's agent has never seen, all at once...
  const auto answers = http_all(
      std::vector<HttpCall>(300, HttpCall{"GET", consumer.url("/api/v1/services/orders")}));
  for (const auto& r : answers)
    ASSERT_EQ(r.status, 200) << r.error << r.body;
  const auto version = json_of(answers.front())["version"].get<std::uint64_t>();
  // ...and 300 watches of it, parked past several beats.
  http_all(std::vector<HttpCall>(
      300, HttpCall{"GET", consumer.url("/api/v1/services/orders?index=" + std::to_string(version) +
                                        "&wait=1s")}));
  // One query each from the probe (wait_until_listed is done) and the consumer's agent;
  // the beats keep the list fresh after that.
  EXPECT_LE(queries() - before, 2u) << "the hub was asked once per request, not once per agent";
}

TEST_F(IntegrationHttpApi, AWatchWithNoChangeReturnsTheSameVersionWhenItsWaitEnds) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  ASSERT_EQ(put_instance(provider, {{"service", "orders"}, {"address", "10.0.0.1:80"}}).status,
            200);
  ASSERT_TRUE(
      wait_for_service(provider, "orders", [](const Json& s) { return instances_of(s) == 1; }));
  const auto version =
      json_of(http_get(provider.url("/api/v1/services/orders")))["version"].get<std::uint64_t>();
  const auto start = SteadyClock::now();
  const auto r = http_get(
      provider.url("/api/v1/services/orders?index=" + std::to_string(version) + "&wait=800ms"));
  const auto waited = elapsed_since(start);
  ASSERT_EQ(r.status, 200);
  EXPECT_EQ(json_of(r)["version"], version);
  EXPECT_GE(waited, Millis{800});
  EXPECT_LT(waited, Millis{800 + 800 / 16 + 2000});  // the jitter, and a loaded machine
}

TEST_F(IntegrationHttpApi, AWatchOfAServiceThatDoesNotExistYetReturnsWhenItAppears) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  EXPECT_EQ(code_of(http_get(consumer.url("/api/v1/services/payments"))), "unknown_service");
  HttpResult woken;
  std::thread watcher(
      [&] { woken = http_get(consumer.url("/api/v1/services/payments?index=0&wait=20s")); });
  std::this_thread::sleep_for(Millis{300});
  ASSERT_EQ(put_instance(provider, {{"service", "payments"}, {"address", "10.0.0.7:80"}}).status,
            200);
  watcher.join();
  ASSERT_EQ(woken.status, 200) << woken.body;
  EXPECT_EQ(instances_of(json_of(woken)), 1u);
}

TEST_F(IntegrationHttpApi, AWatchInOneDatacenterSeesAProviderOfAnotherComeAndGoThroughL2) {
  const auto l2 = start_hub({.id = "l2", .lease = Millis{1200}, .extra = {"--tier", "2"}});
  const auto dc1 = start_hub({.id = "dc1", .extra = {"--zone", "dc1", "--upstream", l2.endpoint}});
  const auto dc2 = start_hub({.id = "dc2", .extra = {"--zone", "dc2", "--upstream", l2.endpoint}});
  const auto provider = start_api_agent("provider-dc2", dc2.endpoint);
  const auto consumer = start_api_agent("consumer-dc1", dc1.endpoint);
  EXPECT_EQ(code_of(http_get(consumer.url("/api/v1/services/pay"))), "unknown_service");
  HttpResult appeared;
  std::thread watcher(
      [&] { appeared = http_get(consumer.url("/api/v1/services/pay?index=0&wait=20s")); });
  std::this_thread::sleep_for(Millis{300});
  ASSERT_EQ(
      put_instance(provider, {{"service", "pay"}, {"id", "pay-1"}, {"address", "10.2.0.1:80"}})
          .status,
      200);
  watcher.join();
  ASSERT_EQ(appeared.status, 200) << appeared.body;
  auto service = json_of(appeared);
  ASSERT_EQ(instances_of(service), 1u);
  EXPECT_EQ(service["instances"][0]["tier"], 2) << "served through the L2 tier";
  const auto version = service["version"].get<std::uint64_t>();

  HttpResult gone;
  std::thread second([&] {
    gone = http_get(
        consumer.url("/api/v1/services/pay?index=" + std::to_string(version) + "&wait=20s"));
  });
  std::this_thread::sleep_for(Millis{300});
  ASSERT_EQ(http({"DELETE", provider.url("/api/v1/instances/pay/pay-1")}).status, 200);
  second.join();
  ASSERT_EQ(gone.status, 200) << gone.body;
  EXPECT_EQ(instances_of(json_of(gone)), 0u);
}

TEST_F(IntegrationHttpApi, NoHubAndNothingCachedIs503AndACachedListServedStaleIs200) {
  auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  register_orders(provider, consumer, {{{"address", "10.0.0.1:80"}}});
  hub.process->kill_and_wait();
  // Three beats without a hub: the cached list is served, marked stale, with its age.
  ASSERT_TRUE(
      wait_for_service(consumer, "orders", [](const Json& s) { return s["stale"] == true; }));
  const auto stale = json_of(http_get(consumer.url("/api/v1/services/orders")));
  EXPECT_EQ(instances_of(stale), 1u);
  EXPECT_GE(stale["age_ms"], 3 * kBeat.count());
  const auto never_seen = http_get(consumer.url("/api/v1/services/payments"));
  EXPECT_EQ(never_seen.status, 503);
  EXPECT_EQ(code_of(never_seen), "no_hub");
}

TEST_F(IntegrationHttpApi, PickChoosesAnEligibleInstanceUnderThePolicyAndHonoursExclusions) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  register_orders(provider, consumer,
                  {{{"address", "10.0.0.1:80"}},
                   {{"address", "10.0.0.2:80"}},
                   {{"address", "10.0.0.3:80"}, {"status", "DOWN"}}});
  std::set<std::string> chosen;
  for (int i = 0; i < 6; ++i) {
    const auto r = http_get(consumer.url("/api/v1/services/orders/pick?policy=round_robin"));
    ASSERT_EQ(r.status, 200) << r.body;
    chosen.insert(json_of(r)["instance"]["address"]);
  }
  EXPECT_EQ(chosen, (std::set<std::string>{"10.0.0.1:80", "10.0.0.2:80"}));  // never the DOWN one
  const auto excluded =
      json_of(http_get(consumer.url("/api/v1/services/orders/pick?exclude=10.0.0.1:80")));
  EXPECT_EQ(excluded["instance"]["address"], "10.0.0.2:80");
  const auto none =
      http_get(consumer.url("/api/v1/services/orders/pick?exclude=10.0.0.1:80,10.0.0.2:80"));
  EXPECT_EQ(none.status, 503);
  EXPECT_EQ(code_of(none), "no_instance");
  const auto bad = http_get(consumer.url("/api/v1/services/orders/pick?policy=fastest"));
  EXPECT_EQ(bad.status, 400);
  EXPECT_THAT(bad.body, HasSubstr("round_robin"));
  EXPECT_EQ(http_get(consumer.url("/api/v1/services/payments/pick")).status, 404);
}

TEST_F(IntegrationHttpApi, FailureReportsThroughTheApiIsolateAnAddressAtTheHub) {
  const auto hub = start_hub();
  const auto provider = start_api_agent("provider", hub.endpoint);
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  register_orders(provider, consumer, {{{"address", "10.0.0.1:80"}}, {{"address", "10.0.0.2:80"}}});
  for (int i = 0; i < 5; ++i) {
    const auto r = http({"POST", consumer.url("/api/v1/services/orders/failures"),
                         Json{{"address", "10.0.0.1:80"}, {"kind", "timeout"}}.dump()});
    ASSERT_EQ(r.status, 202) << r.body;
  }
  ASSERT_TRUE(wait_for_service(consumer, "orders", [](const Json& s) {
    for (const auto& in : s["instances"])
      if (in["address"] == "10.0.0.1:80") return in["health"] == "isolated";
    return false;
  })) << "the hub never isolated the reported address";
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(
        json_of(http_get(consumer.url("/api/v1/services/orders/pick")))["instance"]["address"],
        "10.0.0.2:80");
}

TEST_F(IntegrationHttpApi, BadRequestsGetTheirCodesAndTheAgentServesOn) {
  const auto hub = start_hub();
  const auto agent = start_api_agent("agent", hub.endpoint);
  const auto instances = agent.url("/api/v1/instances");
  struct Case {
    HttpCall call;
    long status;
    std::string code;
  };
  const std::vector<Case> cases = {
      {{"PUT", instances, "{not json"}, 400, "invalid_json"},
      {{"PUT", instances, "[1,2]"}, 400, "invalid_json"},
      {{"PUT", instances, R"({"address":"10.0.0.1:80"})"}, 400, "missing_field"},
      {{"PUT", instances, R"({"service":"orders","address":"10.0.0.1:80","weigth":5})"},
       400,
       "unknown_field"},
      {{"PUT", instances, R"({"service":"orders","address":"10.0.0.1:80","weight":"heavy"})"},
       400,
       "invalid_field"},
      {{"PUT", instances, R"({"service":"orders","address":"10.0.0.1:80","status":"SLEEPY"})"},
       400,
       "invalid_field"},
      {{"PUT", instances, R"({"service":"","address":"10.0.0.1:80"})"}, 400, "invalid_field"},
      {{"PUT", instances, std::string(70 * 1024, ' ')}, 413, "body_too_large"},
      {{"DELETE", agent.url("/api/v1/services/orders")}, 405, "method_not_allowed"},
      {{"GET", agent.url("/api/v1/nothing")}, 404, "no_route"},
      {{"GET", agent.url("/api/v1/services/orders?index=abc")}, 400, "bad_request"},
      {{"GET", agent.url("/api/v1/services/orders?index=1&wait=forever")}, 400, "bad_request"},
      {{"GET", agent.url("/api/v1/services/orders?group=" + std::string(300, 'g'))},
       400,
       "bad_request"},
      {{"POST", agent.url("/api/v1/services/orders/failures"),
        R"({"address":"10.0.0.1:80","kind":"gremlins"})"},
       400,
       "invalid_field"},
  };
  for (const auto& c : cases) {
    const auto r = http(c.call);
    EXPECT_EQ(r.status, c.status) << c.call.method << " " << c.call.url << " "
                                  << c.call.body.substr(0, 60) << " -> " << r.body;
    EXPECT_EQ(code_of(r), c.code) << r.body;
  }
  EXPECT_TRUE(agent.process->running());
  EXPECT_EQ(http_get(agent.url("/api/v1/status")).status, 200);
}

TEST_F(IntegrationHttpApi, WithADataDirectoryWhatApplicationsRegisteredSurvivesAnAgentRestart) {
  const auto hub = start_hub();
  const auto data = fresh_path("sidecar-data");
  const std::vector<std::string> keep = {"--data", data.string()};
  const auto consumer = start_api_agent("consumer", hub.endpoint);
  auto sidecar = start_api_agent("sidecar", hub.endpoint, keep);
  ASSERT_EQ(
      put_instance(sidecar, {{"service", "orders"}, {"id", "o-1"}, {"address", "10.0.0.1:80"}})
          .status,
      200);
  ASSERT_EQ(
      put_instance(sidecar, {{"service", "orders"}, {"id", "o-2"}, {"address", "10.0.0.2:80"}})
          .status,
      200);
  const Json consul = {{"ID", "billing-1"},
                       {"Name", "billing"},
                       {"Address", "10.0.1.1"},
                       {"Port", 9000},
                       {"Tags", {"v2"}}};
  ASSERT_EQ(http({"PUT", sidecar.url("/v1/agent/service/register"), consul.dump()}).status, 200);
  ASSERT_EQ(http({"DELETE", sidecar.url("/api/v1/instances/orders/o-2")}).status, 200);

  // A graceful stop takes them off the hub; the restart brings back what was
  // registered and not deregistered, before the API answers.
  sidecar.process->signal(SIGTERM);
  ASSERT_TRUE(sidecar.process->wait_for(kPatience));
  ASSERT_TRUE(wait_for_service(consumer, "orders", [](const Json& s) {
    return instances_of(s) == 0;
  })) << "the stopped sidecar's instance stayed";
  sidecar = start_api_agent("sidecar-again", hub.endpoint, keep);
  const auto listed = json_of(http_get(sidecar.url("/api/v1/instances")));
  ASSERT_EQ(listed.size(), 2u) << listed.dump();
  const auto services = json_of(http_get(sidecar.url("/v1/agent/services")));
  ASSERT_TRUE(services.contains("billing-1")) << services.dump();
  EXPECT_EQ(services["billing-1"]["Tags"], Json({"v2"}));
  EXPECT_TRUE(wait_for_service(consumer, "orders", [](const Json& s) {
    return instances_of(s) == 1 && s["instances"][0]["id"] == "o-1";
  })) << "the restored instance never reached the consumer";

  // Deregistered for good: not back after the next restart.
  ASSERT_EQ(http({"PUT", sidecar.url("/v1/agent/service/deregister/billing-1")}).status, 200);
  sidecar.process->signal(SIGTERM);
  ASSERT_TRUE(sidecar.process->wait_for(kPatience));
  sidecar = start_api_agent("sidecar-third", hub.endpoint, keep);
  EXPECT_FALSE(json_of(http_get(sidecar.url("/v1/agent/services"))).contains("billing-1"));
  EXPECT_EQ(json_of(http_get(sidecar.url("/api/v1/instances"))).size(), 1u);
}

TEST_F(IntegrationHttpApi, WithATokenFileEveryRequestNeedsAToken) {
  const auto hub = start_hub();
  const auto tokens = fresh_path("tokens");
  { std::ofstream(tokens) << "app 0123456789abcdef0123456789\n"; }
  ::chmod(tokens.c_str(), 0600);
  const auto agent = start_api_agent("agent", hub.endpoint, {"--http-token-file", tokens.string()});
  EXPECT_EQ(http_get(agent.url("/api/v1/status")).status, 401);
  const auto with_token = http({"GET",
                                agent.url("/api/v1/status"),
                                "",
                                {"Authorization: Bearer 0123456789abcdef0123456789"}});
  EXPECT_EQ(with_token.status, 200);
}

TEST_F(IntegrationHttpApi, AnApiOtherHostsCouldReachNeedsAllowedRangesAndTokens) {
  auto& agent = start_agent("agent", {"--hub", "tcp://127.0.0.1:1", "--http", "0.0.0.0:0"});
  const auto ended = agent.wait_for(kPatience);
  ASSERT_TRUE(ended && ended->exited_with(2));
  EXPECT_THAT(agent.err(), HasSubstr("--http-allow"));
  EXPECT_THAT(agent.err(), HasSubstr("--http-token-file"));
}

}  // namespace
}  // namespace cascade::integration
