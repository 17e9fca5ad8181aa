// The config centre in the agent's native API (agent/api/native_config.hpp,
// schemas/http-api.md) over real HTTP (libcurl), on an agent whose Client
// beats to an in-process hub: a group read before it is followed, one key,
// watches woken by an operator's edit or ended by their wait, and errors.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <thread>

#include "cascade/agent/api/native_config.hpp"
#include "cascade/tests/agent/local_api_with_hub.hpp"

namespace cascade::agent::api {
namespace {

using cascade::testing::HttpResult;
using ::testing::HasSubstr;

class NativeConfigApiTest : public agent::testing::LocalApiWithHubTest {
 protected:
  NativeConfigApiTest() : LocalApiWithHubTest("native-config") {}

  static std::string code_of(const HttpResult& r) {
    const auto json = json_of(r);
    return json.is_object() && json.contains("error") ? json["error"].value("code", "") : "";
  }
};

TEST_F(NativeConfigApiTest, AGroupNotFollowedYetIsAnsweredWithTheHubsFirstAnswer) {
  set_config_key("payments", "timeout_ms", "250");
  const auto r = get("/api/v1/config/payments");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto group = json_of(r);
  EXPECT_EQ(group["group"], "payments");
  ASSERT_TRUE(group["version"].is_string()) << "64-bit versions are strings";
  EXPECT_EQ(group["version"], r.headers.at("x-cascade-index"));
  EXPECT_NE(group["version"], "0");
  EXPECT_EQ(group["gone"], false);
  EXPECT_EQ(group["stale"], false);
  EXPECT_GE(group["age_ms"].get<std::int64_t>(), 0);
  ASSERT_EQ(group["entries"].size(), 1u);
  const auto& entry = group["entries"][0];
  EXPECT_EQ(entry["key"], "timeout_ms");
  EXPECT_EQ(entry["value"], "250");
  EXPECT_EQ(entry["binary"], false);
  EXPECT_EQ(entry["tier"], 1) << "the test hub is a tier-1 hub";
  EXPECT_EQ(entry["hub"], "native-config-test-hub");
}

TEST_F(NativeConfigApiTest, OneKeyIsItsEntryAndAnAbsentKeyIs404UnknownKey) {
  set_config_key("payments", "retry/max", "3");
  const auto one = get("/api/v1/config/payments/retry/max");
  ASSERT_EQ(one.status, 200) << one.body;
  EXPECT_EQ(json_of(one)["entry"]["key"], "retry/max") << "keys may hold '/'";
  EXPECT_EQ(json_of(one)["entry"]["value"], "3");
  EXPECT_EQ(json_of(one)["version"], one.headers.at("x-cascade-index"));

  const auto absent = get("/api/v1/config/payments/nope");
  EXPECT_EQ(absent.status, 404);
  EXPECT_EQ(code_of(absent), "unknown_key");
  EXPECT_EQ(absent.headers.at("x-cascade-index"), one.headers.at("x-cascade-index"));
}

TEST_F(NativeConfigApiTest, AGroupNoTierHasIsGoneAtVersionOne) {
  const auto r = get("/api/v1/config/nobody-set-this");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json_of(r)["gone"], true);
  EXPECT_EQ(json_of(r)["version"], "1");
  EXPECT_TRUE(json_of(r)["entries"].empty());
}

TEST_F(NativeConfigApiTest, AWatchReturnsWhenAnOperatorChangesTheGroup) {
  set_config_key("flags", "new_ui", "off");
  const auto first = get("/api/v1/config/flags/new_ui");
  ASSERT_EQ(first.status, 200);
  const auto index = first.headers.at("x-cascade-index");
  auto blocked = std::async(std::launch::async, [&] {
    return get("/api/v1/config/flags/new_ui?index=" + index + "&wait=20s");
  });
  EXPECT_EQ(blocked.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "nothing changed yet: the watch waits";
  set_config_key("flags", "new_ui", "on");
  const auto woken = blocked.get();
  ASSERT_EQ(woken.status, 200) << woken.body;
  EXPECT_NE(woken.headers.at("x-cascade-index"), index);
  EXPECT_EQ(json_of(woken)["entry"]["value"], "on");
}

TEST_F(NativeConfigApiTest, AWatchWhoseWaitEndsReturnsTheGroupAsItIs) {
  set_config_key("flags", "a", "1");
  const auto index = get("/api/v1/config/flags").headers.at("x-cascade-index");
  const auto ended = get("/api/v1/config/flags?index=" + index + "&wait=200ms");
  ASSERT_EQ(ended.status, 200);
  EXPECT_EQ(ended.headers.at("x-cascade-index"), index);
  EXPECT_EQ(json_of(ended)["entries"][0]["value"], "1");
}

TEST_F(NativeConfigApiTest, ABadGroupOrIndexIs400) {
  EXPECT_EQ(code_of(get("/api/v1/config/flags?index=latest")), "bad_request");
  EXPECT_EQ(code_of(get("/api/v1/config/flags?wait=soon")), "bad_request");
  EXPECT_EQ(code_of(get("/api/v1/config/" + std::string(300, 'g'))), "bad_request");
}

TEST_F(NativeConfigApiTest, AGroupNoHubAnswersForIs504AtTheQueryTimeout) {
  hub.reset();
  const auto r = get("/api/v1/config/flags");
  EXPECT_EQ(r.status, 504) << r.body;
  EXPECT_EQ(code_of(r), "no_answer");
  EXPECT_THAT(r.body, HasSubstr("within 500 ms"));
}

TEST_F(NativeConfigApiTest, APickOfADegradedServiceIs503DegradedAtOnceUntilSwitchedOff) {
  ASSERT_EQ(get("/api/v1/config/ops").status, 200) << "the agent follows ops from now on";
  set_config_key("ops", "degrade.pay", "on");
  const auto pick_code = [&] { return code_of(get("/api/v1/services/pay/pick")); };
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pick_code() != "degraded" && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const auto refused = get("/api/v1/services/pay/pick");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(code_of(refused), "degraded");
  EXPECT_THAT(json_of(refused)["error"]["message"].get<std::string>(), HasSubstr("degrade.pay"));

  set_config_key("ops", "degrade.pay", "off");
  const auto back = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pick_code() == "degraded" && std::chrono::steady_clock::now() < back)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_NE(pick_code(), "degraded") << "no provider of pay: any other answer than degraded";
}

}  // namespace
}  // namespace cascade::agent::api
