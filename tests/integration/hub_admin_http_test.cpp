// cascade-hub --http (schemas/hub-http-api.md) with real processes: a hub
// with a token file and --metrics, an agent registering an instance, an
// operator marking it out of service over HTTP, cascadectl seeing the mark,
// the audit log naming the token, and a SIGHUP that puts a new token file in
// force.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cascade/tests/common/curl_client.hpp"
#include "cascade/tests/integration/cluster.hpp"

namespace cascade::integration {
namespace {

using ::testing::HasSubstr;
using testing::http;
using testing::http_get;
using testing::HttpResult;
using Json = nlohmann::json;

constexpr const char* kAlice = "alice-token-0123456789";
constexpr const char* kBob = "bob-token-9876543210ab";

Json json_of(const HttpResult& r) {
  return Json::parse(r.body, nullptr, false);
}

// Written aside and renamed: a hub reloading on SIGHUP never reads half a file.
void write_tokens(const std::filesystem::path& file, const std::string& lines) {
  const auto aside = file.string() + ".new";
  std::ofstream(aside, std::ios::trunc) << lines;
  std::filesystem::permissions(
      aside, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  std::filesystem::rename(aside, file);
}

class IntegrationHubAdminHttp : public ClusterTest {
 protected:
  // The hub with its admin API and metrics on free loopback ports.
  void start() {
    tokens = fresh_path("http-tokens");
    write_tokens(tokens, std::string("alice ") + kAlice + "\n");
    HubOptions options;
    options.extra = {"--http",        "127.0.0.1:0", "--http-token-file",
                     tokens.string(), "--metrics",   "127.0.0.1:0"};
    hub = start_hub(options);
    const auto line = wait_for_stdout_line(*hub.process, "http listening on ");
    ASSERT_TRUE(line) << "no 'http listening on' line from the hub";
    base = "http://" + line->substr(line->rfind(' ') + 1);
    const auto metrics = wait_for_stdout_line(*hub.process, "metrics listening on ");
    ASSERT_TRUE(metrics) << "no 'metrics listening on' line from the hub";
    metrics_url = "http://" + metrics->substr(metrics->rfind(' ') + 1) + "/metrics";
  }

  HttpResult command(const std::string& method, const std::string& path, const char* token) {
    return http({method, base + path, "", {std::string("Authorization: Bearer ") + token}});
  }

  std::filesystem::path tokens;
  RunningHub hub;
  std::string base;
  std::string metrics_url;
};

TEST_F(IntegrationHubAdminHttp, AnOperatorMarksAnAgentsInstanceOverHttpAndCascadectlSeesIt) {
  ASSERT_NO_FATAL_FAILURE(start());
  start_provider(hub.endpoint, "agent-1", "orders=10.0.0.1:8080");
  ASSERT_TRUE(poll_until(
      [&] {
        const auto services = json_of(http_get(base + "/api/v1/services"));
        return services.is_array() && services.size() == 1 && services[0]["instances"] == 1;
      },
      kPatience, Millis{50}))
      << http_get(base + "/api/v1/services").body;
  const auto service = json_of(http_get(base + "/api/v1/services/orders"));
  ASSERT_EQ(service["instances"].size(), 1u) << service.dump();
  const auto id = service["instances"][0]["id"].get<std::string>();
  EXPECT_EQ(service["instances"][0]["owner"], "agent-1");
  EXPECT_GT(service["instances"][0]["lease_ms"], 0);

  const auto path = "/api/v1/services/orders/instances/" + id + "/out-of-service";
  EXPECT_EQ(http({"POST", base + path}).status, 401);  // no token
  const auto marked = command("POST", path, kAlice);
  ASSERT_EQ(marked.status, 200) << marked.body;

  const auto resolved = ctl({"--hub", hub.endpoint, "resolve", "orders"});
  EXPECT_THAT(resolved.out, HasSubstr("OUT_OF_SERVICE")) << resolved.out << resolved.err;

  const auto records = json_of(http_get(base + "/api/v1/audit"))["records"];
  ASSERT_EQ(records.size(), 1u) << records.dump();
  EXPECT_EQ(records[0]["actor"], "http:alice");
  EXPECT_EQ(records[0]["op"], "mark_out_of_service");
  EXPECT_EQ(records[0]["instance_id"], id);
  EXPECT_EQ(records[0]["peer"], "127.0.0.1");

  // The same process serves its metrics.
  const auto scraped = http_get(metrics_url);
  EXPECT_EQ(scraped.status, 200);
  EXPECT_THAT(scraped.body, HasSubstr("cascade_hub_instances"));
  // With the admin API's own requests: the command and the reads above.
  EXPECT_THAT(scraped.body, HasSubstr("cascade_hub_http_responses_total{class=\"2xx\"} "));
  EXPECT_THAT(scraped.body, ::testing::ContainsRegex("\ncascade_hub_http_requests_total [1-9]"));
}

TEST_F(IntegrationHubAdminHttp, ASighupPutsAnEditedTokenFileInForce) {
  ASSERT_NO_FATAL_FAILURE(start());
  const auto path = "/api/v1/switches/eviction-protection";
  const auto on = [&](const char* token) {
    return http({"PUT",
                 base + path,
                 R"({"enabled":true})",
                 {std::string("Authorization: Bearer ") + token}});
  };
  ASSERT_EQ(on(kAlice).status, 200);
  EXPECT_EQ(on(kBob).status, 401);

  write_tokens(tokens, std::string("bob ") + kBob + "\n");
  hub.process->signal(SIGHUP);
  EXPECT_TRUE(poll_until([&] { return on(kBob).status == 200; }, kPatience, Millis{50}));
  EXPECT_EQ(on(kAlice).status, 401);
  const auto records = json_of(http_get(base + "/api/v1/audit?limit=1"))["records"];
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0]["actor"], "http:bob");
}

TEST_F(IntegrationHubAdminHttp, ANetworkAddressWithoutTokensOrWithAProxyIsRefusedAtStart) {
  auto& open = spawn(
      CASCADE_HUB_PATH,
      {"--listen", "tcp://127.0.0.1:*", "--data", fresh_path("a").string(), "--http", "0.0.0.0:0"},
      "open-hub");
  const auto open_exit = open.wait_for(kPatience);
  ASSERT_TRUE(open_exit);
  EXPECT_TRUE(open_exit->exited_with(2));
  EXPECT_THAT(open.err(), HasSubstr("--http-token-file"));
  auto& proxy =
      spawn(CASCADE_HUB_PATH,
            {"--proxy", "--upstream", "tcp://127.0.0.1:7400", "--http", "127.0.0.1:0"}, "proxy");
  const auto proxy_exit = proxy.wait_for(kPatience);
  ASSERT_TRUE(proxy_exit);
  EXPECT_TRUE(proxy_exit->exited_with(2));
  EXPECT_THAT(proxy.err(), HasSubstr("--proxy"));
}

}  // namespace
}  // namespace cascade::integration
