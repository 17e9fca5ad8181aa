#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "cascade/common/host_name.hpp"
#include "cascade/hub/hub_config.hpp"

namespace cascade::hub {
namespace {

ParsedHubOptions parse(std::vector<std::string> args) {
  args.insert(args.begin(), "cascade-hub");
  std::vector<const char*> argv;
  for (const auto& a : args)
    argv.push_back(a.c_str());
  return parse_hub_options(static_cast<int>(argv.size()), argv.data());
}

TEST(HubOptions, DefaultsGiveAThreeBeatLease) {
  auto p = parse({});
  ASSERT_TRUE(p.config);
  EXPECT_EQ(p.config->beat_interval, Duration{2000});
  EXPECT_EQ(p.config->effective_lease(), Duration{6000});
}

TEST(HubOptions, IdDefaultsToTheHostName) {
  auto p = parse({});
  ASSERT_TRUE(p.config);
  EXPECT_EQ(p.config->id, host_name());
  EXPECT_FALSE(p.config->id.empty());
}

TEST(HubOptions, FlagsAreTypedWithUnits) {
  auto p =
      parse({"--id", "h9", "--tier", "2", "--listen", "tcp://127.0.0.1:9000", "--data", "/tmp/x",
             "--beat-interval-ms", "500", "--lease-ms", "1600", "--log-level", "debug"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->id, "h9");
  EXPECT_EQ(p.config->tier, 2u);
  EXPECT_EQ(p.config->effective_lease(), Duration{1600});
  EXPECT_EQ(p.config->core_config().lease, Duration{1600});
  EXPECT_EQ(p.config->log_level, spdlog::level::debug);
}

struct BadFlag {
  std::vector<std::string> args;
  std::string mentions;
};

class HubOptionsRejects : public ::testing::TestWithParam<BadFlag> {};

TEST_P(HubOptionsRejects, WithExitCodeTwoAndAClearMessage) {
  auto p = parse(GetParam().args);
  EXPECT_FALSE(p.config);
  EXPECT_EQ(p.exit_code, 2);
  EXPECT_NE(p.message.find(GetParam().mentions), std::string::npos) << p.message;
}

INSTANTIATE_TEST_SUITE_P(
    BadValues, HubOptionsRejects,
    ::testing::Values(
        BadFlag{{"--beat-interval-ms", "abc"}, "beat-interval-ms"},
        BadFlag{{"--beat-interval-ms", "0"}, "--beat-interval-ms"},
        BadFlag{{"--lease-ms", "100"}, "--lease-ms"},
        BadFlag{{"--listen", "127.0.0.1:80"}, "--listen"}, BadFlag{{"--tier", "0"}, "--tier"},
        BadFlag{{"--log-level", "loud"}, "--log-level"},
        BadFlag{{"--log-format", "xml"}, "--log-format"},
        BadFlag{{"--metrics", "9464"}, "--metrics"},
        BadFlag{{"--metrics", "0.0.0.0:9464"}, "--metrics-allow"},
        BadFlag{{"--metrics-allow", "10.0.0.0/8"}, "--metrics-allow needs --metrics"},
        BadFlag{{"--metrics", "10.0.0.5:9464", "--metrics-allow", "10.0.0.0/33"},
                "--metrics-allow"},
        BadFlag{{"--no-such-flag"}, "no-such-flag"}, BadFlag{{"--id", ""}, "--id"},
        BadFlag{{"--proxy"}, "--upstream"}, BadFlag{{"--upstream", "127.0.0.1:7400"}, "--upstream"},
        BadFlag{{"--upstream", "tcp://h:1", "--upstream-mode", "some"}, "--upstream-mode"},
        BadFlag{{"--upstream", "tcp://h:1", "--negative-ttl-ms", "-1"}, "--negative-ttl-ms"},
        BadFlag{{"--proxy", "--upstream", "tcp://h:1", "--upstream", "tcp://h:2"},
                "one --upstream"},
        BadFlag{{"--proxy", "--upstream", "tcp://h:1", "--proxy-max-delay-ms", "80"}, "max_delay"},
        BadFlag{{"--isolation-min-reporters", "0"}, "quorum"},
        BadFlag{{"--isolation-max-share", "1.5"}, "cap"},
        BadFlag{{"--isolation-base-ms", "20000", "--isolation-max-ms", "1000"}, "isolation time"},
        BadFlag{{"--notify-share-percent", "0"}, "notify share"},
        BadFlag{{"--push-repeat-gap-ms", "10001"}, "repeat gap"},
        BadFlag{{"--push-repeat-gap-ms", "-1"}, "repeat gap"},
        BadFlag{{"--empty-service-ttl-ms", "999"}, "--empty-service-ttl-ms"},
        BadFlag{{"--store-cache-mib", "0"}, "--store-cache-mib"},
        BadFlag{{"--store-cache-mib", "65537"}, "--store-cache-mib"},
        BadFlag{{"--store-cache-mib", "-1"}, "--store-cache-mib"},
        BadFlag{{"--max-interval-stretch", "0"}, "--max-interval-stretch"},
        BadFlag{{"--max-interval-stretch", "65"}, "--max-interval-stretch"},
        BadFlag{{"--shed-after-ms", "-1"}, "--shed-after-ms"},
        BadFlag{{"--shed-after-ms", "10001"}, "--shed-after-ms"},
        BadFlag{{"--empty-service-ttl-ms", "86400001"}, "--empty-service-ttl-ms"},
        BadFlag{{"--eviction-protection", "maybe"}, "--eviction-protection"},
        BadFlag{{"--eviction-max-share", "0"}, "eviction protection"},
        BadFlag{{"--eviction-window-ms", "0"}, "durations"},
        BadFlag{{"--listen-backlog", "0"}, "--listen-backlog"},
        BadFlag{{"--handshake-timeout-ms", "0"}, "--handshake-timeout-ms"},
        BadFlag{{"--idle-timeout-ms", "5999"}, "one lease (6000 ms)"}));

TEST(HubOptions, MetricsAndJsonLogsAreOptIn) {
  auto plain = parse({});
  ASSERT_TRUE(plain.config) << plain.message;
  EXPECT_FALSE(plain.config->metrics.listen);
  EXPECT_EQ(plain.config->log_format, LogFormat::kText);
  auto p = parse(
      {"--metrics", "10.0.0.5:9464", "--metrics-allow", "10.0.0.0/24", "--log-format", "json"});
  ASSERT_TRUE(p.config) << p.message;
  ASSERT_TRUE(p.config->metrics.listen);
  EXPECT_EQ(p.config->metrics.listen->to_string(), "10.0.0.5:9464");
  EXPECT_EQ(p.config->metrics.allow.size(), 1u);
  EXPECT_EQ(p.config->log_format, LogFormat::kJson);
}

// The admin API's flags, with the agent's rules for --http.
INSTANTIATE_TEST_SUITE_P(
    HttpAdminApi, HubOptionsRejects,
    ::testing::Values(
        BadFlag{{"--http", "localhost:7480"}, "--http:"},
        BadFlag{{"--http", "10.1.2.3:7480"}, "reachable from other hosts"},
        BadFlag{{"--http", "0.0.0.0:7480", "--http-allow", "10.0.0.0/8"}, "--http-token-file"},
        BadFlag{{"--http", "0.0.0.0:7480", "--http-token-file", "/etc/cascade/tokens"},
                "--http-allow"},
        BadFlag{{"--http-allow", "10.0.0.0/8"}, "need --http"},
        BadFlag{{"--http-token-file", "/etc/cascade/tokens"}, "need --http"},
        BadFlag{{"--http", "127.0.0.1:7480", "--http-allow", "10.0.0.0/33"}, "--http-allow:"},
        BadFlag{{"--proxy", "--upstream", "tcp://127.0.0.1:7400", "--http", "127.0.0.1:7480"},
                "--proxy keeps none"},
        BadFlag{{"--proxy", "--upstream", "tcp://127.0.0.1:7400", "--store-cache-mib", "16"},
                "--store-cache-mib sizes or syncs a hub's store"},
        BadFlag{{"--proxy", "--upstream", "tcp://127.0.0.1:7400", "--fsync"},
                "--fsync sizes or syncs a hub's store"},
        BadFlag{{"--proxy", "--upstream", "tcp://127.0.0.1:7400", "--max-interval-stretch", "4"},
                "a --proxy grants none"},
        BadFlag{{"--proxy", "--upstream", "tcp://127.0.0.1:7400", "--shed-after-ms", "10"},
                "--shed-after-ms paces the nodes"}));

TEST(HubOptions, HttpFlagsReachTheAdminApiWithOneThread) {
  auto p = parse({"--http", "0.0.0.0:7480", "--http-allow", "10.0.0.0/8", "--http-allow",
                  "192.168.1.0/24", "--http-token-file", "/etc/cascade/http-tokens"});
  ASSERT_TRUE(p.config) << p.message;
  const auto& http = p.config->http;
  ASSERT_TRUE(http.listen);
  EXPECT_EQ(http.listen->to_string(), "0.0.0.0:7480");
  EXPECT_EQ(http.allow.size(), 2u);
  EXPECT_EQ(http.token_file, "/etc/cascade/http-tokens");
  EXPECT_EQ(http.threads, 1u);

  auto loopback = parse({"--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0"});
  ASSERT_TRUE(loopback.config) << loopback.message;  // with --metrics, and without tokens
  EXPECT_TRUE(loopback.config->http.token_file.empty());
  EXPECT_FALSE(parse({}).config->http.listen);
}

TEST(HubOptions, ConnectionDefaultsHoldAFleetRestartAndSpareBeatingAgents) {
  auto p = parse({"--beat-interval-ms", "1000"});
  ASSERT_TRUE(p.config) << p.message;
  const auto& c = p.config->connections;
  EXPECT_EQ(c.backlog, 4096);
  EXPECT_EQ(c.handshake_timeout, Duration{5000});
  EXPECT_EQ(c.guard.max_connections, 65'536u);
  EXPECT_EQ(c.guard.idle_timeout, Duration{15'000});  // five leases of three beats
}

TEST(HubOptions, ConnectionFlagsReachTheListeningSocketOfHubAndProxy) {
  auto p =
      parse({"--listen-backlog", "512", "--handshake-timeout-ms", "300", "--max-connections", "20",
             "--idle-timeout-ms", "0", "--proxy", "--upstream", "tcp://h:1", "--insecure"});
  ASSERT_TRUE(p.config) << p.message;
  const auto c = p.config->proxy_config().connections;
  EXPECT_EQ(c.backlog, 512);
  EXPECT_EQ(c.handshake_timeout, Duration{300});
  EXPECT_EQ(c.guard.max_connections, 20u);
  EXPECT_EQ(c.guard.idle_timeout, Duration{0});
}

TEST(HubOptions, ProtectionFlagsReachTheCore) {
  auto p = parse({"--isolation-min-reporters", "3", "--isolation-window-ms", "5000",
                  "--no-isolation", "--notify-switch", "--notify-share-percent", "25",
                  "--push-delay-ms", "2", "--push-repeat-gap-ms", "250", "--eviction-protection",
                  "off", "--eviction-max-hold-ms", "120000"});
  ASSERT_TRUE(p.config) << p.message;
  const auto core = p.config->core_config();
  EXPECT_EQ(core.isolation.min_reporters, 3u);
  EXPECT_EQ(core.isolation.window, Duration{5000});
  EXPECT_FALSE(core.isolation.enabled);
  EXPECT_TRUE(core.push.notify_switch);
  EXPECT_EQ(core.push.share_percent, 25u);
  EXPECT_EQ(core.push.delay, Duration{2});
  EXPECT_EQ(core.push.repeat_gap, Duration{250});
  EXPECT_FALSE(core.eviction.enabled);
  EXPECT_EQ(core.eviction.max_hold, Duration{120'000});
}

TEST(HubOptions, TheStoresPageCacheIsEightMibUnlessTold) {
  EXPECT_EQ(parse({}).config->store_cache_mib, 8u);
  auto p = parse({"--store-cache-mib", "64"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->store_cache_mib, 64u);
}

TEST(HubOptions, TheIntervalStretchAndTheBeatIntervalItMultipliesReachTheCore) {
  EXPECT_EQ(parse({}).config->core_config().governor.max_stretch, 8u);
  auto p = parse({"--max-interval-stretch", "1", "--beat-interval-ms", "500"});
  ASSERT_TRUE(p.config) << p.message;
  const auto core = p.config->core_config();
  EXPECT_EQ(core.governor.max_stretch, 1u);
  EXPECT_EQ(core.beat_interval, Duration{500});
  EXPECT_EQ(core.lease, Duration{1500});
}

TEST(HubOptions, TheQueueBoundReachesTheServerAndZeroTurnsSheddingOff) {
  EXPECT_EQ(parse({}).config->inbound.shed_after, Duration{20});
  auto p = parse({"--shed-after-ms", "0"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->inbound.shed_after, Duration{0});
}

TEST(HubOptions, TheEmptyServiceGraceReachesTheCore) {
  EXPECT_EQ(parse({}).config->core_config().empty_service_ttl, Duration{30'000});
  auto p = parse({"--empty-service-ttl-ms", "1500"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->core_config().empty_service_ttl, Duration{1500});
}

TEST(HubOptions, ProtectionIsOnAndIsolationEnabledByDefault) {
  auto p = parse({});
  ASSERT_TRUE(p.config) << p.message;
  const auto core = p.config->core_config();
  EXPECT_TRUE(core.eviction.enabled);
  EXPECT_TRUE(core.isolation.enabled);
  EXPECT_FALSE(core.push.notify_switch);
}

TEST(HubOptions, RepeatedUpstreamsMakeAMultiHomedTieredHub) {
  auto p = parse({"--insecure", "--tier", "1", "--upstream", "tcp://l2a:7700", "--upstream",
                  "tcp://l2b:7700", "--upstream-mode", "all", "--lease-ms", "6000"});
  ASSERT_TRUE(p.config) << p.message;
  const auto core = p.config->core_config();
  ASSERT_TRUE(core.uplink.has_value());
  EXPECT_EQ(core.uplink->endpoints.size(), 2u);
  EXPECT_EQ(core.uplink->mode, UplinkMode::kAll);
  EXPECT_EQ(core.uplink->cache_ttl, Duration{0}) << "default: half the upstream's lease";
  EXPECT_EQ(core.uplink->beat_interval, Duration{1000}) << "default: half the beat interval";
}

TEST(HubOptions, HelpExitsZeroWithUsage) {
  auto p = parse({"--help"});
  EXPECT_FALSE(p.config);
  EXPECT_EQ(p.exit_code, 0);
  EXPECT_NE(p.message.find("--lease-ms"), std::string::npos);
}

TEST(HubOptions, ShippedConfigFileParses) {
  auto p = parse({"--config", CASCADE_SOURCE_DIR "/deploy/config/hub.toml"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->id, host_name());  // the packaged config leaves the id to the host
  EXPECT_EQ(p.config->listen, "tcp://127.0.0.1:7400");
  EXPECT_EQ(p.config->effective_lease(), Duration{6000});
}

TEST(HubOptions, CommandLineOverridesTheConfigFile) {
  auto p = parse({"--config", CASCADE_SOURCE_DIR "/deploy/config/hub.toml", "--id", "other"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->id, "other");
}

TEST(HubOptions, UnknownKeyInConfigFileIsAnError) {
  const auto path = std::string("/tmp/cascade-hub-options-") + std::to_string(::getpid()) + ".toml";
  std::ofstream(path) << "lease = 5\n";
  auto p = parse({"--config", path});
  EXPECT_FALSE(p.config);
  EXPECT_EQ(p.exit_code, 2);
  std::remove(path.c_str());
}

// Security (issue 12): secure by default, and keys that go together.

TEST(HubSecurityOptions, NetworkListenWithoutKeysIsRefused) {
  for (const char* listen : {"tcp://*:7400", "tcp://0.0.0.0:7400", "tcp://10.1.2.3:7400"}) {
    const auto p = parse({"--listen", listen});
    EXPECT_FALSE(p.config) << listen;
    EXPECT_EQ(p.exit_code, 2);
    EXPECT_THAT(p.message, ::testing::HasSubstr("refusing to run in plain text")) << listen;
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
  EXPECT_THAT(p.message, ::testing::HasSubstr("--upstream tcp://l2.example:7400"));
}

TEST(HubSecurityOptions, KeysAllowANetworkListen) {
  const auto p = parse({"--listen", "tcp://*:7400", "--secret-key", "hub.key", "--authorized-keys",
                        "authorized_keys"});
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->security.secret_key, "hub.key");
  EXPECT_EQ(p.config->security.authorized_keys, "authorized_keys");
}

TEST(HubSecurityOptions, SecretKeyWithoutAuthorisedKeysIsAConfigError) {
  EXPECT_THAT(parse({"--secret-key", "hub.key"}).message, ::testing::HasSubstr("go together"));
  EXPECT_THAT(parse({"--authorized-keys", "keys"}).message, ::testing::HasSubstr("go together"));
}

TEST(HubSecurityOptions, KeyedHubWithUpstreamsNeedsTheUpstreamKey) {
  const std::vector<std::string> keys = {"--secret-key", "h.key", "--authorized-keys", "k"};
  auto args = keys;
  args.insert(args.end(), {"--upstream", "tcp://127.0.0.1:7500"});
  EXPECT_THAT(parse(args).message, ::testing::HasSubstr("--upstream-public-key"));
  args.insert(args.end(), {"--upstream-public-key", "l2.pub"});
  const auto p = parse(args);
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->security.upstream_public_keys, std::vector<std::string>{"l2.pub"});
  EXPECT_EQ(p.config->proxy_config().security.upstream_public_keys,
            std::vector<std::string>{"l2.pub"});
}

TEST(HubSecurityOptions, EachUpstreamMayHaveItsOwnKeyAndEveryOneNeedsOne) {
  const std::vector<std::string> two_l2s = {
      "--secret-key",         "h.key",      "--authorized-keys",   "k", "--upstream",
      "tcp://127.0.0.1:7500", "--upstream", "tcp://127.0.0.1:7501"};
  auto args = two_l2s;
  args.insert(args.end(), {"--upstream-public-key", "tcp://127.0.0.1:7500=l2-a.pub"});
  EXPECT_THAT(parse(args).message, ::testing::HasSubstr("tcp://127.0.0.1:7501=FILE"));
  args.insert(args.end(), {"--upstream-public-key", "tcp://127.0.0.1:7501=l2-b.pub"});
  const auto p = parse(args);
  ASSERT_TRUE(p.config) << p.message;
  EXPECT_EQ(p.config->security.upstream_public_keys.size(), 2u);
}

TEST(HubSecurityOptions, UpstreamKeyWithoutSecretKeyIsAConfigError) {
  EXPECT_THAT(parse({"--upstream-public-key", "l2.pub"}).message,
              ::testing::HasSubstr("needs --secret-key"));
}

}  // namespace
}  // namespace cascade::hub
