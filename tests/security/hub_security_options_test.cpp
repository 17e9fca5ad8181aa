// cascade-hub's security flags: secure by default, and keys that go together.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cascade/hub/hub_config.hpp"

namespace cascade::hub {
namespace {

using ::testing::HasSubstr;

ParsedHubOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "cascade-hub");
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  return parse_hub_options(static_cast<int>(argv.size()), argv.data());
}

TEST(HubSecurityOptions, NetworkListenWithoutKeysIsRefused) {
  for (const char* listen : {"tcp://*:7400", "tcp://0.0.0.0:7400", "tcp://10.1.2.3:7400"}) {
    const auto p = parse({"--listen", listen});
    EXPECT_FALSE(p.config) << listen;
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_THAT(p.message, HasSubstr("refusing to run in plain text")) << listen;
  }
}

TEST(HubSecurityOptions, InsecureAllowsANetworkListenInPlainText) {
  const auto p = parse({"--listen", "tcp://0.0.0.0:7400", "--insecure"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_TRUE(p.config->security.insecure);
}

TEST(HubSecurityOptions, LoopbackNeedsNoKeys) {
  EXPECT_TRUE(parse({"--listen", "tcp://127.0.0.1:7400"}).config);
}

TEST(HubSecurityOptions, NetworkUpstreamWithoutKeysIsRefused) {
  const auto p = parse({"--upstream", "tcp://l2.example:7400"});
  EXPECT_FALSE(p.config);
  EXPECT_THAT(p.message, HasSubstr("--upstream tcp://l2.example:7400"));
}

TEST(HubSecurityOptions, KeysAllowANetworkListen) {
  const auto p = parse({"--listen", "tcp://*:7400", "--secret-key", "hub.key", "--authorized-keys",
                        "authorized_keys"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->security.secret_key, "hub.key");
  EXPECT_EQ(p.config->security.authorized_keys, "authorized_keys");
}

TEST(HubSecurityOptions, SecretKeyWithoutAuthorisedKeysIsAConfigError) {
  EXPECT_THAT(parse({"--secret-key", "hub.key"}).message, HasSubstr("go together"));
  EXPECT_THAT(parse({"--authorized-keys", "keys"}).message, HasSubstr("go together"));
}

TEST(HubSecurityOptions, KeyedHubWithUpstreamsNeedsTheUpstreamKey) {
  const std::vector<std::string> keys = {"--secret-key", "h.key", "--authorized-keys", "k"};
  auto args = keys;
  args.insert(args.end(), {"--upstream", "tcp://127.0.0.1:7500"});
  EXPECT_THAT(parse(args).message, HasSubstr("--upstream-public-key"));
  args.insert(args.end(), {"--upstream-public-key", "l2.pub"});
  const auto p = parse(args);
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->security.upstream_public_key, "l2.pub");
  EXPECT_EQ(p.config->proxy_config().security.upstream_public_key, "l2.pub");
}

TEST(HubSecurityOptions, UpstreamKeyWithoutSecretKeyIsAConfigError) {
  EXPECT_THAT(parse({"--upstream-public-key", "l2.pub"}).message, HasSubstr("needs --secret-key"));
}

}  // namespace
}  // namespace cascade::hub
