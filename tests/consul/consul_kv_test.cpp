// Consul's KV store as a view of the config centre (agent/api/consul_kv.hpp),
// over real HTTP (libcurl) on an agent whose Client beats to an in-process
// hub: writes that are config edits at the hub, reads from the agent's copy
// of the group, blocking reads woken by another writer, and what Consul's KV
// has and cascade has not, refused with 400.

#include "cascade/agent/api/consul_kv.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <future>

#include "cascade/common/curve_keys.hpp"
#include "cascade/tests/agent/local_api_with_hub.hpp"

namespace cascade::agent::api {
namespace {

using cascade::testing::HttpResult;
using ::testing::HasSubstr;
using Json = nlohmann::json;

class ConsulKvTest : public agent::testing::LocalApiWithHubTest {
 protected:
  ConsulKvTest()
      : LocalApiWithHubTest("consul-kv", [](ClientOptions& o) { o.consumer.zone = "dc1"; }) {}

  HttpResult del(const std::string& path) { return call("DELETE", path); }

  // GET `path` until `wanted` holds for the answer: blocking reads, each
  // returning when the agent's copy of the group changes.
  HttpResult wait_until(const std::string& path,
                        const std::function<bool(const HttpResult&)>& wanted) {
    auto result = get(path);
    const auto separator = path.find('?') == std::string::npos ? "?" : "&";
    for (int i = 0; i < 20 && !wanted(result); ++i)
      result = get(path + separator + "index=" + result.headers.at("x-consul-index") + "&wait=5s");
    return result;
  }
};

// What Consul's base64 of `text` is (RFC 4648), computed independently.
const std::map<std::string, std::string> kBase64 = {
    {"postgres://db:5432", "cG9zdGdyZXM6Ly9kYjo1NDMy"}, {"v2", "djI="}, {"a", "YQ=="}};

void expect_refused(const HttpResult& result, long status, std::string_view says) {
  EXPECT_EQ(result.status, status) << result.body;
  EXPECT_THAT(result.body, HasSubstr(std::string(says)));
}

TEST_F(ConsulKvTest, APutIsAnEditAtTheHubAndAGetReturnsTheValueInBase64) {
  const auto put_result = put("/v1/kv/app/db/url", "postgres://db:5432");
  ASSERT_EQ(put_result.status, 200) << put_result.body;
  EXPECT_EQ(put_result.body, "true");

  // The group was not followed: the GET follows it and waits for the hub's answer.
  const auto got = get("/v1/kv/app/db/url");
  ASSERT_EQ(got.status, 200) << got.body;
  const auto entries = json_of(got);
  ASSERT_EQ(entries.size(), 1u) << got.body;
  EXPECT_EQ(entries[0]["Key"], "app/db/url");
  EXPECT_EQ(entries[0]["Value"], kBase64.at("postgres://db:5432"));
  EXPECT_EQ(entries[0]["Flags"], 0);
  EXPECT_EQ(entries[0]["LockIndex"], 0);
  EXPECT_FALSE(entries[0].contains("Session"));
  EXPECT_GT(entries[0]["ModifyIndex"].get<std::uint64_t>(), 0u);
  EXPECT_EQ(entries[0]["CreateIndex"], entries[0]["ModifyIndex"]);
  EXPECT_EQ(got.headers.at("x-consul-index"), std::to_string(client_->config("app")->version));
  EXPECT_EQ(got.headers.at("x-consul-knownleader"), "true");
  EXPECT_EQ(client_->config_value("app", "db/url"), "postgres://db:5432") << "a config key";
}

TEST_F(ConsulKvTest, RawAnswersTheBytesAsTheyAreBinaryIncluded) {
  const std::string binary("a\0b\xff\n", 5);
  ASSERT_EQ(put("/v1/kv/app/blob", binary).status, 200);
  const auto raw = get("/v1/kv/app/blob?raw");
  ASSERT_EQ(raw.status, 200);
  EXPECT_EQ(raw.body, binary);
}

TEST_F(ConsulKvTest, RecurseListsTheEntriesUnderAPrefixAndKeysTheirPaths) {
  for (const auto* key : {"web/a", "web/b", "worker"})
    ASSERT_EQ(put(std::string("/v1/kv/svc/") + key, "a").status, 200);
  const auto under_web = get("/v1/kv/svc/web/?recurse");
  ASSERT_EQ(under_web.status, 200) << under_web.body;
  const auto entries = json_of(under_web);
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0]["Key"], "svc/web/a");
  EXPECT_EQ(entries[1]["Key"], "svc/web/b");
  EXPECT_EQ(entries[1]["Value"], kBase64.at("a"));
  EXPECT_EQ(json_of(get("/v1/kv/svc?recurse")).size(), 3u) << "the whole group";
  EXPECT_EQ(json_of(get("/v1/kv/svc/?keys")), Json({"svc/web/a", "svc/web/b", "svc/worker"}));
  EXPECT_EQ(json_of(get("/v1/kv/svc/w?keys")), Json({"svc/web/a", "svc/web/b", "svc/worker"}))
      << "a prefix is a string prefix, as Consul's";
  EXPECT_EQ(get("/v1/kv/svc/nothing/?recurse").status, 404);
}

TEST_F(ConsulKvTest, AKeyNoTierHasIs404AtTheGroupsIndex) {
  const auto absent = get("/v1/kv/never-set/key");
  EXPECT_EQ(absent.status, 404) << absent.body;
  EXPECT_EQ(absent.headers.at("x-consul-index"), "1") << "a group no tier has is gone at version 1";
}

TEST_F(ConsulKvTest, ABlockingGetReturnsWhenAnotherWriterChangesTheGroup) {
  ASSERT_EQ(put("/v1/kv/app/mode", "v1").status, 200);
  const auto first = get("/v1/kv/app/mode");
  ASSERT_EQ(first.status, 200);
  const auto index = first.headers.at("x-consul-index");

  auto blocked = std::async(std::launch::async,
                            [&] { return get("/v1/kv/app/mode?index=" + index + "&wait=20s"); });
  EXPECT_EQ(blocked.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout)
      << "nothing changed yet: the read waits";
  set_config_key("app", "mode", "v2");
  const auto woken = blocked.get();
  ASSERT_EQ(woken.status, 200) << woken.body;
  EXPECT_NE(woken.headers.at("x-consul-index"), index);
  EXPECT_EQ(json_of(woken)[0]["Value"], kBase64.at("v2"));
}

TEST_F(ConsulKvTest, ABlockingGetOfAnAbsentKeyReturnsWhenItAppears) {
  const auto absent = get("/v1/kv/app/later");
  ASSERT_EQ(absent.status, 404);
  auto blocked = std::async(std::launch::async, [&] {
    return get("/v1/kv/app/later?index=" + absent.headers.at("x-consul-index") + "&wait=20s");
  });
  EXPECT_EQ(blocked.wait_for(std::chrono::milliseconds(300)), std::future_status::timeout);
  set_config_key("app", "later", "a");
  const auto woken = blocked.get();
  ASSERT_EQ(woken.status, 200) << woken.body;
  EXPECT_EQ(json_of(woken)[0]["Value"], kBase64.at("a"));
}

TEST_F(ConsulKvTest, ABlockingGetReturnsTheSameIndexWhenItsWaitEnds) {
  ASSERT_EQ(put("/v1/kv/app/still", "a").status, 200);
  const auto first = get("/v1/kv/app/still");
  const auto index = first.headers.at("x-consul-index");
  const auto ended = get("/v1/kv/app/still?index=" + index + "&wait=200ms");
  EXPECT_EQ(ended.status, 200);
  EXPECT_EQ(ended.headers.at("x-consul-index"), index);
}

TEST_F(ConsulKvTest, DeleteRemovesAKeyAndDeleteRecurseEveryKeyUnderAPrefix) {
  for (const auto* key : {"a/1", "a/2", "b"})
    ASSERT_EQ(put(std::string("/v1/kv/gc/") + key, "a").status, 200);
  auto removed = del("/v1/kv/gc/b");
  ASSERT_EQ(removed.status, 200) << removed.body;
  EXPECT_EQ(removed.body, "true");
  EXPECT_EQ(wait_until("/v1/kv/gc/b", [](const auto& r) { return r.status == 404; }).status, 404);

  removed = del("/v1/kv/gc/a/?recurse");
  ASSERT_EQ(removed.status, 200) << removed.body;
  const auto listed =
      wait_until("/v1/kv/gc?recurse", [](const auto& r) { return r.status == 404; });
  EXPECT_EQ(listed.status, 404) << listed.body;
  EXPECT_EQ(del("/v1/kv/gc/none/?recurse").status, 200) << "nothing to remove is no error";
}

TEST_F(ConsulKvTest, WhatCascadeDoesNotKeepIs400NotIgnored) {
  expect_refused(put("/v1/kv/app/k?cas=0", "x"), 400, "?cas is not supported");
  expect_refused(put("/v1/kv/app/k?acquire=s1", "x"), 400, "no sessions or locks");
  expect_refused(put("/v1/kv/app/k?release=s1", "x"), 400, "no sessions or locks");
  expect_refused(put("/v1/kv/app/k?flags=42", "x"), 400, "keeps no flags");
  expect_refused(get("/v1/kv/app/k?dc=dc2"), 400, "own datacenter (dc1)");
  expect_refused(get("/v1/kv/app/?keys&separator=/"), 400, "?separator is not supported");
  EXPECT_EQ(put("/v1/kv/app/k?flags=0&dc=dc1", "x").status, 200) << "flags 0 and our own dc";
}

TEST_F(ConsulKvTest, APathWithoutAGroupOrKeyIs400) {
  expect_refused(get("/v1/kv/?recurse"), 400, "names a config group first");
  expect_refused(get("/v1/kv"), 400, "names a config group first");
  expect_refused(get("/v1/kv/app"), 400, "name a key");
  expect_refused(put("/v1/kv/app", "x"), 400, "name a key");
  expect_refused(call("DELETE", "/v1/kv/app/"), 400, "name a key");
  expect_refused(put("/v1/kv/app/" + std::string(300, 'k'), "x"), 400, "at most 255 bytes");
  expect_refused(get("/v1/kv/app/k?index=soon"), 400, "index must be");
}

TEST_F(ConsulKvTest, AValueOverTheConfigCentresLimitIs413) {
  EXPECT_EQ(put("/v1/kv/app/big", std::string(proto::kMaxConfigValueBytes + 1, 'x')).status, 413);
}

TEST_F(ConsulKvTest, AReadWithNoHubAnsweringIs504AtTheQueryTimeout) {
  hub.reset();
  expect_refused(get("/v1/kv/app/k"), 504, "no hub answered for config group app");
}

// A hub that runs with keys (docs/security.md) and knows this agent's key as
// an agent's: it may beat, and may not edit the config centre.
class ConsulKvKeyedHubTest : public agent::testing::LocalApiWithHubTest {
 protected:
  ConsulKvKeyedHubTest()
      : LocalApiWithHubTest(
            "consul-kv-keyed",
            [](ClientOptions& o) {
              o.keys = {
                  agent_keys().public_z85, agent_keys().secret_z85, hub_keys().public_z85, {}};
            },
            [](hub::HubConfig& config) {
              const auto keys = config.data_dir / "keys";
              std::filesystem::create_directories(keys);
              curve::write_key_files(keys, "hub", hub_keys());
              std::ofstream(keys / "authorized_keys")
                  << agent_keys().public_z85 << " kv-agent agent\n";
              config.security.secret_key = keys / "hub.key";
              config.security.authorized_keys = keys / "authorized_keys";
            }) {}

  static const curve::KeyPair& hub_keys() {
    static const auto keys = curve::generate_key_pair();
    return keys;
  }
  static const curve::KeyPair& agent_keys() {
    static const auto keys = curve::generate_key_pair();
    return keys;
  }
};

TEST_F(ConsulKvKeyedHubTest, AHubThatRefusesTheAgentsKeyForEditsIs403WithItsReason) {
  const auto refused = put("/v1/kv/app/k", "v");
  EXPECT_EQ(refused.status, 403) << refused.body;
  EXPECT_THAT(refused.body, HasSubstr("refused this agent's key"));
  EXPECT_EQ(api_->edit_counters().refused.load(), 1u);
  EXPECT_EQ(get("/v1/kv/app/k").status, 404) << "reads work with the agent's key: nothing set";
}

}  // namespace
}  // namespace cascade::agent::api
