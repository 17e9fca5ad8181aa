// The Consul-compatible endpoints over real HTTP (libcurl) on an agent whose
// Client beats to an in-process hub: bad input answered as Consul answers
// it, the router's 405, and a blocking health query woken by a check's pass.

#include "cascade/agent/api/consul_api.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <nlohmann/json.hpp>

#include "cascade/tests/agent/local_api_with_hub.hpp"

namespace cascade::agent::api {
namespace {

using cascade::testing::HttpCall;
using cascade::testing::HttpResult;
using ::testing::HasSubstr;
using ::testing::StartsWith;

class ConsulApiTest : public agent::testing::LocalApiWithHubTest {
 protected:
  ConsulApiTest()
      : LocalApiWithHubTest("consul-api", [](ClientOptions& o) {
          o.consumer.zone = "dc1";
          o.consumer.host = "10.9.9.9";
        }) {}

  // GET `path` until it lists `count` entries: blocking queries, each
  // returning when the agent's copy of the service changes (registrations
  // reach the hub at once, but not before the PUT returns).
  HttpResult wait_for_entries(const std::string& path, std::size_t count) {
    auto result = get(path);
    for (int i = 0; i < 20 && result.status == 200 && json_of(result).size() != count; ++i)
      result = get(path + "?index=" + result.headers["x-consul-index"] + "&wait=5s");
    return result;
  }
};

constexpr const char* kWebWithTtl =
    R"({"Name": "web", "ID": "web-1", "Address": "10.0.0.5", "Port": 8080, "Tags": ["v1"],
        "Check": {"TTL": "30s"}})";

// Refused as Consul refuses: `status`, and plain text that `says` why.
void expect_refused(const HttpResult& result, long status, std::string_view says) {
  EXPECT_EQ(result.status, status) << result.body;
  EXPECT_THAT(result.body, HasSubstr(std::string(says)));
}

TEST_F(ConsulApiTest, MalformedJsonIs400InPlainTextSayingSo) {
  auto r = put("/v1/agent/service/register", R"({"Name": "web")");
  expect_refused(r, 400, "Request decode failed: the body is not valid JSON");
  EXPECT_THAT(r.headers["content-type"], StartsWith("text/plain"));
}

TEST_F(ConsulApiTest, AFieldOfTheWrongTypeIs400NamingTheField) {
  expect_refused(put("/v1/agent/service/register", R"({"Name": "web", "Port": "8080"})"), 400,
                 "field 'Port' must be a whole number");
  EXPECT_EQ(json_of(get("/v1/agent/services")), nlohmann::json::object()) << "nothing registered";
}

TEST_F(ConsulApiTest, ACheckCascadeCannotRunIs400) {
  expect_refused(
      put("/v1/agent/service/register",
          R"({"Name": "web", "Check": {"HTTP": "http://127.0.0.1:1/", "Interval": "5s"}})"),
      400, "cascade runs TTL checks only");
}

TEST_F(ConsulApiTest, AnUnknownCheckIdIs404WhicheverWayItIsReported) {
  ASSERT_EQ(put("/v1/agent/service/register", kWebWithTtl).status, 200);
  for (const auto& r :
       {put("/v1/agent/check/pass/service:web-2"), get("/v1/agent/check/fail/service:web-2"),
        put("/v1/agent/check/update/service:web-2", R"({"Status": "passing"})")})
    expect_refused(r, 404, "Unknown check ID \"service:web-2\"");
}

TEST_F(ConsulApiTest, ABadCheckUpdateIs400) {
  ASSERT_EQ(put("/v1/agent/service/register", kWebWithTtl).status, 200);
  const std::string update = "/v1/agent/check/update/service:web-1";
  expect_refused(put(update, R"({"Status": "fine"})"), 400, "Invalid check status: 'fine'");
  expect_refused(put(update, "passing"), 400, "Request decode failed");
  expect_refused(put(update, R"({"Status": 1})"), 400, "field 'Status' must be a string");
}

TEST_F(ConsulApiTest, AnUnknownServiceIdOnDeregisterIs404) {
  expect_refused(put("/v1/agent/service/deregister/web-1"), 404, "Unknown service ID \"web-1\"");
}

TEST_F(ConsulApiTest, AWrongMethodIs405FromTheRouter) {
  auto register_by_get = get("/v1/agent/service/register");
  expect_refused(register_by_get, 405, "GET is not allowed on /v1/agent/service/register");
  EXPECT_EQ(register_by_get.headers["allow"], "PUT");
  EXPECT_EQ(call("DELETE", "/v1/agent/check/pass/service:web-1").status, 405);
  EXPECT_EQ(call("POST", "/v1/health/service/web").status, 405);
}

TEST_F(ConsulApiTest, ABadIndexWaitFlagOrAFilterExpressionIs400) {
  expect_refused(get("/v1/health/service/web?index=latest"), 400, "index must be");
  expect_refused(get("/v1/catalog/service/web?index=5&wait=soon"), 400, "wait must be");
  expect_refused(get("/v1/health/service/web?passing=maybe"), 400, "passing must be");
  expect_refused(get("/v1/health/service/web?filter=Service.Port%3D%3D80"), 400,
                 "cascade does not evaluate filter expressions");
}

TEST_F(ConsulApiTest, AServiceNoHubKnowsIsAnEmptyListAtIndexOne) {
  auto r = get("/v1/health/service/nothing-here");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(json_of(r), nlohmann::json::array());
  EXPECT_EQ(r.headers["x-consul-index"], "1");
  EXPECT_EQ(r.headers["x-consul-knownleader"], "true");
}

TEST_F(ConsulApiTest, ABlockingHealthQueryReturnsWhenTheCheckPasses) {
  ASSERT_EQ(put("/v1/agent/service/register", kWebWithTtl).status, 200);
  auto first = wait_for_entries("/v1/health/service/web", 1);
  ASSERT_EQ(json_of(first).size(), 1u) << first.body;
  EXPECT_EQ(json_of(first)[0]["Checks"][1]["Status"], "critical");
  const auto index = first.headers["x-consul-index"];

  auto blocked = std::async(std::launch::async, [&] {
    return get("/v1/health/service/web?passing=1&index=" + index + "&wait=20s");
  });
  EXPECT_EQ(blocked.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "nothing changed yet: the query waits";
  EXPECT_EQ(put("/v1/agent/check/pass/service:web-1?note=ready").status, 200);
  auto woken = blocked.get();
  ASSERT_EQ(woken.status, 200);
  EXPECT_NE(woken.headers["x-consul-index"], index);
  const auto entries = json_of(woken);
  ASSERT_EQ(entries.size(), 1u) << woken.body;
  EXPECT_EQ(entries[0]["Service"]["Address"], "10.0.0.5");
  EXPECT_EQ(entries[0]["Checks"][1]["Status"], "passing");
  EXPECT_EQ(json_of(get("/v1/agent/checks"))["service:web-1"]["Output"], "ready");
}

TEST_F(ConsulApiTest, ABlockingCatalogListingReturnsWhenAServiceIsRegisteredHere) {
  auto before = get("/v1/catalog/services");
  ASSERT_EQ(before.status, 200);
  EXPECT_EQ(json_of(before), nlohmann::json::object());
  auto blocked = std::async(std::launch::async, [&] {
    return get("/v1/catalog/services?index=" + before.headers["x-consul-index"] + "&wait=20s");
  });
  EXPECT_EQ(blocked.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "nothing changed yet: the listing waits";
  ASSERT_EQ(put("/v1/agent/service/register", kWebWithTtl).status, 200);
  auto woken = blocked.get();
  EXPECT_EQ(json_of(woken), nlohmann::json({{"web", {"v1"}}}));
  EXPECT_NE(woken.headers["x-consul-index"], before.headers["x-consul-index"]);
}

TEST_F(ConsulApiTest, AgentServicesKeysANativeIdThatAConsulServiceHasByIdAtName) {
  ASSERT_EQ(put("/v1/agent/service/register", R"({"Name": "web", "ID": "x"})").status, 200);
  proto::Registration native;
  native.service = {"api", "default"};
  native.instance.id = "x";
  native.instance.address = "10.0.0.9:80";
  client_->register_instance(native);
  const auto services = json_of(get("/v1/agent/services"));
  EXPECT_EQ(services["x"]["Service"], "web");
  EXPECT_EQ(services["x@api"]["Service"], "api");
  EXPECT_EQ(services["x@api"]["Weights"]["Passing"], 100);
  EXPECT_EQ(put("/v1/agent/service/deregister/x@api").status, 200);
  EXPECT_EQ(client_->registrations().size(), 1u);
  EXPECT_EQ(get("/v1/agent/service/deregister/x").status, 200) << "python-consul 0.7.1 sends GET";
  EXPECT_TRUE(client_->registrations().empty());
}

}  // namespace
}  // namespace cascade::agent::api
