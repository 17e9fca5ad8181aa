// Pure rendering of hub replies: exact tables and exact JSON keys.

#include "cascade/tools/ctl/render.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "cascade/tests/tools/fake_hub.hpp"

namespace cascade::ctl {
namespace {

using Json = nlohmann::json;

std::set<std::string> keys_of(const Json& object) {
  std::set<std::string> keys;
  for (const auto& [key, value] : object.items())
    keys.insert(key);
  return keys;
}

proto::QueryReply found_orders() {
  return testing::canned_query(proto::Query{1, "", {"orders", "default"}});
}

proto::QueryReply unknown_service() {
  return testing::canned_query(proto::Query{1, "", {"ghost", "default"}});
}

TEST(CtlRender, StatusTableShowsEveryFieldAndCounters) {
  EXPECT_EQ(status_table(testing::canned_status(1)),
            "hub                  hub-a\n"
            "tier                 1\n"
            "epoch                42\n"
            "uptime               1h 02m 03s\n"
            "nodes                3\n"
            "services             2\n"
            "instances            5\n"
            "isolated             1\n"
            "unconfirmed          2\n"
            "eviction protection  on\n"
            "notify share         10%\n"
            "\n"
            "COUNTER         VALUE\n"
            "beats_received   1234\n"
            "queries             7\n");
}

TEST(CtlRender, StatusTableWithoutCountersHasNoCounterSection) {
  auto reply = testing::canned_status(1);
  reply.counters.clear();
  EXPECT_EQ(status_table(reply).find("COUNTER"), std::string::npos);
}

TEST(CtlRender, StatusJsonHasExactKeys) {
  const Json json = Json::parse(status_json(testing::canned_status(1)));

  EXPECT_EQ(keys_of(json),
            (std::set<std::string>{"hub", "tier", "epoch", "uptime_ms", "nodes", "services",
                                   "instances", "isolated", "unconfirmed", "eviction_protection",
                                   "notify_share_percent", "counters"}));
  EXPECT_EQ(json["hub"], "hub-a");
  EXPECT_EQ(json["tier"], 1);
  EXPECT_EQ(json["epoch"], 42);
  EXPECT_EQ(json["uptime_ms"], 3'723'000);
  EXPECT_EQ(json["nodes"], 3);
  EXPECT_EQ(json["services"], 2);
  EXPECT_EQ(json["instances"], 5);
  EXPECT_EQ(json["isolated"], 1);
  EXPECT_EQ(json["unconfirmed"], 2);
  EXPECT_EQ(json["eviction_protection"], true);
  EXPECT_EQ(json["notify_share_percent"], 10);
  EXPECT_EQ(json["counters"], (Json{{"beats_received", 1234}, {"queries", 7}}));
}

TEST(CtlRender, StatusShowsEvictionProtectionOffAndTheFullNotifyShare) {
  auto reply = testing::canned_status(1);
  reply.isolated = 0;
  reply.unconfirmed = 0;
  reply.eviction_protection = false;
  reply.notify_share_percent = 100;

  const std::string table = status_table(reply);
  EXPECT_NE(table.find("isolated             0\n"), std::string::npos) << table;
  EXPECT_NE(table.find("eviction protection  off\n"), std::string::npos) << table;
  EXPECT_NE(table.find("notify share         100%\n"), std::string::npos) << table;
  const Json json = Json::parse(status_json(reply));
  EXPECT_EQ(json["eviction_protection"], false);
  EXPECT_EQ(json["notify_share_percent"], 100);
  EXPECT_EQ(json["unconfirmed"], 0);
}

TEST(CtlRender, StatusJsonWithoutCountersHasEmptyCounterObject) {
  auto reply = testing::canned_status(1);
  reply.counters.clear();
  const Json json = Json::parse(status_json(reply));
  EXPECT_TRUE(json["counters"].is_object());
  EXPECT_TRUE(json["counters"].empty());
}

TEST(CtlRender, Uint64ValuesAreExactInJson) {
  auto reply = testing::canned_status(1);
  reply.hub_epoch = std::numeric_limits<std::uint64_t>::max();
  const std::string text = status_json(reply);
  EXPECT_NE(text.find("\"epoch\": 18446744073709551615"), std::string::npos) << text;
}

TEST(CtlRender, ServicesTableHasColumnsInOrderAndRightAlignedNumbers) {
  EXPECT_EQ(services_table(testing::canned_services(1)),
            "SERVICE   GROUP    VERSION  INSTANCES  UP\n"
            "orders    default        7          2   2\n"
            "payments  blue          12          3   1\n");
}

TEST(CtlRender, EmptyServicesTableIsTheHeaderOnly) {
  EXPECT_EQ(services_table(proto::ServicesReply{}), "SERVICE  GROUP  VERSION  INSTANCES  UP\n");
}

TEST(CtlRender, ServicesJsonHasExactKeys) {
  const Json json = Json::parse(services_json(testing::canned_services(1)));

  EXPECT_EQ(keys_of(json), (std::set<std::string>{"services"}));
  ASSERT_EQ(json["services"].size(), 2U);
  for (const auto& s : json["services"]) {
    EXPECT_EQ(keys_of(s),
              (std::set<std::string>{"service", "group", "version", "instances", "up"}));
  }
  EXPECT_EQ(json["services"][1], (Json{{"service", "payments"},
                                       {"group", "blue"},
                                       {"version", 12},
                                       {"instances", 3},
                                       {"up", 1}}));
}

TEST(CtlRender, EmptyServicesJsonIsAnEmptyList) {
  EXPECT_EQ(Json::parse(services_json(proto::ServicesReply{})), Json::parse(R"({"services":[]})"));
}

TEST(CtlRender, ResolveTableHasHeaderLineAndInstanceColumns) {
  EXPECT_EQ(resolve_table(found_orders()),
            "orders (group default) version 7 at hub hub-a (tier 1, local, 0 ms old): 2 instances\n"
            "ID        ADDRESS        STATUS  WEIGHT  ZONE   TIER\n"
            "orders-1  10.0.0.1:8080  UP         100  eu-1a  local\n"
            "orders-2  10.0.0.2:8080  DOWN        50  eu-1b  local\n");
}

TEST(CtlRender, ResolveShowsTheHubsRoutingRules) {
  auto reply = found_orders();
  reply.routes = std::vector<proto::RouteRuleText>{{"=> zone = eu-1a", 10, false, true},
                                                   {"host = 10.9.* =>", -1, true, false}};

  EXPECT_EQ(resolve_table(reply),
            "orders (group default) version 7 at hub hub-a (tier 1, local, 0 ms old): 2 instances\n"
            "ID        ADDRESS        STATUS  WEIGHT  ZONE   TIER\n"
            "orders-1  10.0.0.1:8080  UP         100  eu-1a  local\n"
            "orders-2  10.0.0.2:8080  DOWN        50  eu-1b  local\n"
            "\n"
            "2 routing rules at hub hub-a:\n"
            "PRIORITY  FORCE  ENABLED  RULE\n"
            "      10  no     yes      => zone = eu-1a\n"
            "      -1  yes    no       host = 10.9.* =>\n");
  const Json json = Json::parse(resolve_json(reply));
  EXPECT_EQ(json["routes"],
            Json::parse(R"([{"text": "=> zone = eu-1a", "priority": 10, "force": false,
                             "enabled": true},
                            {"text": "host = 10.9.* =>", "priority": -1, "force": true,
                             "enabled": false}])"));
}

TEST(CtlRender, ResolveWithoutRulesShowsNoRuleSection) {
  auto reply = found_orders();
  reply.routes = std::vector<proto::RouteRuleText>{};
  EXPECT_EQ(resolve_table(reply), resolve_table(found_orders()));
  EXPECT_EQ(Json::parse(resolve_json(reply))["routes"], Json::array());
}

TEST(CtlRender, ResolveTableForUnknownServiceSaysNotFound) {
  EXPECT_EQ(resolve_table(unknown_service()),
            "ghost (group default) not found at hub hub-a\n"
            "ID  ADDRESS  STATUS  WEIGHT  ZONE  TIER\n");
}

TEST(CtlRender, ResolveTableForServiceWithoutInstancesSaysZero) {
  auto reply = found_orders();
  reply.instances.clear();
  EXPECT_EQ(resolve_table(reply),
            "orders (group default) version 7 at hub hub-a (tier 1, local, 0 ms old): 0 instances\n"
            "ID  ADDRESS  STATUS  WEIGHT  ZONE  TIER\n");
}

TEST(CtlRender, ResolveJsonHasExactKeysAndMetadata) {
  const Json json = Json::parse(resolve_json(found_orders()));

  EXPECT_EQ(keys_of(json),
            (std::set<std::string>{"service", "group", "version", "hub", "tier", "source", "age_ms",
                                   "stale", "hidden_isolated", "instances", "routes"}));
  EXPECT_TRUE(json["routes"].is_null()) << "the hub did not say";
  EXPECT_EQ(json["service"], "orders");
  EXPECT_EQ(json["group"], "default");
  EXPECT_EQ(json["version"], 7);
  EXPECT_EQ(json["hub"], "hub-a");
  ASSERT_EQ(json["instances"].size(), 2U);
  for (const auto& in : json["instances"]) {
    EXPECT_EQ(keys_of(in), (std::set<std::string>{"id", "address", "status", "weight", "zone",
                                                  "tier", "health", "health_reason", "metadata"}));
  }
  EXPECT_EQ(json["hidden_isolated"], 0);
  EXPECT_EQ(json["instances"][0], (Json{{"id", "orders-1"},
                                        {"address", "10.0.0.1:8080"},
                                        {"status", "UP"},
                                        {"weight", 100},
                                        {"zone", "eu-1a"},
                                        {"tier", 0},
                                        {"health", "ok"},
                                        {"health_reason", ""},
                                        {"metadata", {{"build", "abc123"}}}}));
  EXPECT_EQ(json["instances"][1]["status"], "DOWN");
  EXPECT_TRUE(json["instances"][1]["metadata"].is_object());
  EXPECT_TRUE(json["instances"][1]["metadata"].empty());
}

TEST(CtlRender, ResolveSaysWhichTierAnsweredAndHowOldTheListIs) {
  auto reply = found_orders();
  reply.tier = 2;
  reply.source = proto::AnswerSource::kCache;
  reply.age_ms = 850;
  const Json json = Json::parse(resolve_json(reply));
  EXPECT_EQ(json["tier"], 2);
  EXPECT_EQ(json["source"], "cache");
  EXPECT_EQ(json["age_ms"], 850);
  EXPECT_NE(resolve_table(reply).find("(tier 2, cache, 850 ms old)"), std::string::npos);
}

TEST(CtlRender, StaleCrossTierAnswerSaysSoAndTagsInstancesWithTheirTier) {
  auto reply = found_orders();
  reply.tier = 2;
  reply.source = proto::AnswerSource::kCache;
  reply.age_ms = 12'000;
  reply.stale = true;
  for (auto& in : reply.instances)
    in.tier = 2;
  const auto table = resolve_table(reply);
  EXPECT_NE(table.find("(tier 2, cache, 12000 ms old, STALE: upper tier unreachable)"),
            std::string::npos)
      << table;
  EXPECT_NE(table.find("eu-1a  2\n"), std::string::npos) << table;
  const Json json = Json::parse(resolve_json(reply));
  EXPECT_EQ(json["stale"], true);
  EXPECT_EQ(json["instances"][0]["tier"], 2);
}

// ------------------------------------------------------ resolve and health

proto::QueryReply mixed_payments() {
  return testing::canned_query(proto::Query{1, "", {"payments", "default"}});
}

TEST(CtlRender, ResolveHidesIsolatedInstancesAndSaysHowManyInAFooter) {
  EXPECT_EQ(resolve_table(mixed_payments()),
            "payments (group default) version 12 at hub hub-a (tier 1, local, 0 ms old): 3 "
            "instances\n"
            "ID     ADDRESS        STATUS  WEIGHT  ZONE  TIER   HEALTH       REASON\n"
            "pay-1  10.0.1.1:9090  UP         100  -     local  ok           -\n"
            "pay-3  10.0.1.3:9090  UP         100  -     local  unconfirmed  lease ran out 12 s "
            "ago; eviction protection\n"
            "1 isolated instance hidden (resolve --all shows it)\n");
}

TEST(CtlRender, ResolveFooterCountsSeveralHiddenInstances) {
  auto reply = mixed_payments();
  reply.instances[0].health = proto::Health::kIsolated;
  const std::string table = resolve_table(reply);
  EXPECT_NE(table.find("\n2 isolated instances hidden (resolve --all shows them)\n"),
            std::string::npos)
      << table;
  EXPECT_EQ(table.find("pay-1"), std::string::npos) << table;
}

TEST(CtlRender, ResolveAllShowsEveryInstanceWithHealthAndReason) {
  EXPECT_EQ(resolve_table(mixed_payments(), /*show_all=*/true),
            "payments (group default) version 12 at hub hub-a (tier 1, local, 0 ms old): 3 "
            "instances\n"
            "ID     ADDRESS        STATUS  WEIGHT  ZONE  TIER   HEALTH       REASON\n"
            "pay-1  10.0.1.1:9090  UP         100  -     local  ok           -\n"
            "pay-2  10.0.1.2:9090  UP         100  -     local  isolated     isolated: 5 reports "
            "from 2 callers\n"
            "pay-3  10.0.1.3:9090  UP         100  -     local  unconfirmed  lease ran out 12 s "
            "ago; eviction protection\n");
}

TEST(CtlRender, ResolveAllAddsTheHealthColumnEvenForAHealthyService) {
  const std::string narrow = resolve_table(found_orders());
  EXPECT_EQ(narrow.find("HEALTH"), std::string::npos) << narrow;
  EXPECT_EQ(narrow.find("hidden"), std::string::npos) << narrow;

  const std::string all = resolve_table(found_orders(), /*show_all=*/true);
  EXPECT_NE(all.find("TIER   HEALTH  REASON\n"), std::string::npos) << all;
  EXPECT_NE(all.find("local  ok      -\n"), std::string::npos) << all;
}

TEST(CtlRender, ResolveJsonLeavesIsolatedOutAndCountsThem) {
  const Json json = Json::parse(resolve_json(mixed_payments()));
  EXPECT_EQ(json["hidden_isolated"], 1);
  ASSERT_EQ(json["instances"].size(), 2U);
  EXPECT_EQ(json["instances"][0]["id"], "pay-1");
  EXPECT_EQ(json["instances"][0]["health"], "ok");
  EXPECT_EQ(json["instances"][0]["health_reason"], "");
  EXPECT_EQ(json["instances"][1]["id"], "pay-3");
  EXPECT_EQ(json["instances"][1]["health"], "unconfirmed");
  EXPECT_EQ(json["instances"][1]["health_reason"], testing::kUnconfirmedReason);
}

TEST(CtlRender, ResolveJsonAllHasHealthAndReasonForEveryInstance) {
  const Json json = Json::parse(resolve_json(mixed_payments(), /*show_all=*/true));
  EXPECT_EQ(json["hidden_isolated"], 0);
  ASSERT_EQ(json["instances"].size(), 3U);
  EXPECT_EQ(json["instances"][1]["id"], "pay-2");
  EXPECT_EQ(json["instances"][1]["health"], "isolated");
  EXPECT_EQ(json["instances"][1]["health_reason"], testing::kIsolatedReason);
}

TEST(CtlRender, IsolatedIsShownOnlyWithAllButUnconfirmedAlways) {
  proto::Instance in;
  EXPECT_TRUE(is_shown(in, false));
  in.health = proto::Health::kUnconfirmed;
  EXPECT_TRUE(is_shown(in, false));
  in.health = proto::Health::kIsolated;
  EXPECT_FALSE(is_shown(in, false));
  EXPECT_TRUE(is_shown(in, true));
}

// ----------------------------------------------------------- report-failure

proto::FailureSignal timeout_signal(std::uint32_t count) {
  return {
      {"orders", "default"}, "10.0.0.1:8080", proto::FailureKind::kTimeout, "cascadectl@h1", count};
}

TEST(CtlRender, ReportTableSaysWhatTheHubDidAndThatItIsolated) {
  EXPECT_EQ(report_table(timeout_signal(5), proto::ReportAck{9, 1, 0, 0, 1}),
            "reported 5 timeout failures of orders (group default) at 10.0.0.1:8080 as "
            "cascadectl@h1\n"
            "accepted   1\n"
            "forwarded  0\n"
            "unknown    0\n"
            "isolated   yes (1 instance)\n");
}

TEST(CtlRender, ReportTableForAnUnknownAddressSaysNotIsolated) {
  const std::string table = report_table(timeout_signal(1), proto::ReportAck{9, 0, 0, 1, 0});
  EXPECT_NE(table.find("reported 1 timeout failure of"), std::string::npos) << table;
  EXPECT_NE(table.find("unknown    1\n"), std::string::npos) << table;
  EXPECT_NE(table.find("isolated   no\n"), std::string::npos) << table;
}

TEST(CtlRender, ReportJsonHasExactKeys) {
  auto signal = timeout_signal(3);
  signal.kind = proto::FailureKind::kBreakerOpen;
  const Json json = Json::parse(report_json(signal, proto::ReportAck{9, 0, 1, 0, 0}));
  EXPECT_EQ(json, (Json{{"service", "orders"},
                        {"group", "default"},
                        {"address", "10.0.0.1:8080"},
                        {"kind", "breaker_open"},
                        {"reporter", "cascadectl@h1"},
                        {"count", 3},
                        {"accepted", 0},
                        {"forwarded", 1},
                        {"unknown", 0},
                        {"isolated", false},
                        {"isolated_instances", 0}}));
  EXPECT_EQ(Json::parse(report_json(signal, proto::ReportAck{9, 1, 0, 0, 2}))["isolated"], true);
}

// -------------------------------------------------------- operator commands

TEST(CtlRender, AdminTablePrintsTheHubsMessage) {
  EXPECT_EQ(admin_table(proto::AdminReply{3, true, "orders-1 is OUT_OF_SERVICE"}),
            "orders-1 is OUT_OF_SERVICE\n");
  EXPECT_EQ(admin_table(proto::AdminReply{3, true, ""}), "done\n");
  EXPECT_EQ(admin_table(proto::AdminReply{3, true, "a\nb"}), "a\\x0ab\n");
}

TEST(CtlRender, AdminJsonHasOpOkAndMessage) {
  EXPECT_EQ(Json::parse(
                admin_json(proto::AdminOp::kReadmit, proto::AdminReply{3, false, "not isolated"})),
            (Json{{"op", "readmit"}, {"ok", false}, {"message", "not isolated"}}));
}

TEST(CtlRender, TopologyShowsChildrenAndUpstreamStates) {
  proto::StatusReply s;
  s.hub_id = "l1-dc1";
  s.tier = 1;
  s.zone = "dc1";
  s.nodes = 42;
  s.child_hubs = 2;
  s.cross_tier_entries = 3;
  s.upstreams = {{"tcp://l2a:7700", "l2-a", true, true, 312, 9000},
                 {"tcp://l2b:7700", "", false, false, -1, 0}};
  EXPECT_EQ(topology_table(s),
            "hub         l1-dc1\n"
            "tier        1\n"
            "zone        dc1\n"
            "children    40 agents, 2 hubs of lower tiers\n"
            "upstreams   2\n"
            "cross-tier  3 cached services\n"
            "\n"
            "UPSTREAM        HUB   STATE    LAST REPLY    LEASE\n"
            "tcp://l2a:7700  l2-a  up       312 ms ago  9000 ms\n"
            "tcp://l2b:7700  -     standby  never             -\n");
  const Json json = Json::parse(topology_json(s));
  EXPECT_EQ(json["children"]["agents"], 40);
  EXPECT_EQ(json["children"]["hubs"], 2);
  EXPECT_EQ(json["upstreams"][1]["last_reply_ms"], -1);
  EXPECT_EQ(json["upstreams"][0]["reachable"], true);
}

TEST(CtlRender, TopologyOfATopTierHubSaysItHasNoUpstream) {
  proto::StatusReply s;
  s.hub_id = "l2";
  s.tier = 2;
  EXPECT_NE(topology_table(s).find("upstreams   none (top tier)"), std::string::npos);
}

TEST(CtlRender, ResolveJsonForUnknownServiceHasEmptyInstanceList) {
  const Json json = Json::parse(resolve_json(unknown_service()));
  EXPECT_EQ(json["service"], "ghost");
  EXPECT_TRUE(json["instances"].is_array());
  EXPECT_TRUE(json["instances"].empty());
}

TEST(CtlRender, EveryInstanceStatusHasItsProtocolName) {
  auto reply = found_orders();
  reply.instances.resize(1);
  for (std::uint8_t s = 0; s <= proto::kMaxInstanceStatus; ++s) {
    reply.instances[0].status = static_cast<proto::InstanceStatus>(s);
    const Json json = Json::parse(resolve_json(reply));
    EXPECT_EQ(json["instances"][0]["status"], proto::to_string(reply.instances[0].status));
  }
}

TEST(CtlRender, ControlBytesInNamesAreEscapedInTables) {
  proto::ServicesReply reply;
  reply.services = {{{"evil\x1b[2J", "g\n"}, 1, 1, 1}};
  const std::string table = services_table(reply);
  EXPECT_EQ(table.find('\x1b'), std::string::npos);
  EXPECT_NE(table.find("evil\\x1b[2J"), std::string::npos) << table;
  EXPECT_NE(table.find("g\\x0a"), std::string::npos) << table;
}

TEST(CtlRender, InvalidUtf8IsReplacedInJsonInsteadOfThrowing) {
  auto reply = found_orders();
  reply.instances[0].zone = "bad\xff";
  std::string text;
  ASSERT_NO_THROW(text = resolve_json(reply));
  EXPECT_EQ(Json::parse(text)["instances"][0]["zone"], "bad\xef\xbf\xbd");
}

TEST(CtlRender, EmptyCellsPrintAsDash) {
  EXPECT_EQ(format_table({{"A", Align::kLeft}, {"B", Align::kLeft}}, {{"x", ""}}),
            "A  B\n"
            "x  -\n");
}

TEST(CtlRender, MultibyteCellsAlignByCodePoints) {
  EXPECT_EQ(format_table({{"NAME", Align::kLeft}, {"N", Align::kRight}},
                         {{"z\xc3\xbcrich", "1"}, {"bern", "22"}}),
            "NAME     N\n"
            "z\xc3\xbcrich   1\n"
            "bern    22\n");
}

TEST(CtlRender, UptimeUsesTheLargestUnits) {
  EXPECT_EQ(format_uptime(850), "850ms");
  EXPECT_EQ(format_uptime(42'000), "42s");
  EXPECT_EQ(format_uptime(300'000), "5m 00s");
  EXPECT_EQ(format_uptime(7'201'000), "2h 00m 01s");
  EXPECT_EQ(format_uptime(((3 * 24 + 4) * 3600 + 5 * 60 + 6) * 1000LL), "3d 04h 05m 06s");
  EXPECT_EQ(format_uptime(-5), "-5ms");
}

}  // namespace
}  // namespace cascade::ctl
