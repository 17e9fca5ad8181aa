// Pure rendering of hub replies: exact tables and exact JSON keys.

#include "tools/ctl/render.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "tests/tools/fake_hub.hpp"

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
            "hub        hub-a\n"
            "tier       1\n"
            "epoch      42\n"
            "uptime     1h 02m 03s\n"
            "nodes      3\n"
            "services   2\n"
            "instances  5\n"
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

  EXPECT_EQ(keys_of(json), (std::set<std::string>{"hub", "tier", "epoch", "uptime_ms", "nodes",
                                                  "services", "instances", "counters"}));
  EXPECT_EQ(json["hub"], "hub-a");
  EXPECT_EQ(json["tier"], 1);
  EXPECT_EQ(json["epoch"], 42);
  EXPECT_EQ(json["uptime_ms"], 3'723'000);
  EXPECT_EQ(json["nodes"], 3);
  EXPECT_EQ(json["services"], 2);
  EXPECT_EQ(json["instances"], 5);
  EXPECT_EQ(json["counters"], (Json{{"beats_received", 1234}, {"queries", 7}}));
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

  EXPECT_EQ(keys_of(json), (std::set<std::string>{"service", "group", "version", "hub", "tier",
                                                  "source", "age_ms", "stale", "instances"}));
  EXPECT_EQ(json["service"], "orders");
  EXPECT_EQ(json["group"], "default");
  EXPECT_EQ(json["version"], 7);
  EXPECT_EQ(json["hub"], "hub-a");
  ASSERT_EQ(json["instances"].size(), 2U);
  for (const auto& in : json["instances"]) {
    EXPECT_EQ(keys_of(in), (std::set<std::string>{"id", "address", "status", "weight", "zone",
                                                  "tier", "metadata"}));
  }
  EXPECT_EQ(json["instances"][0], (Json{{"id", "orders-1"},
                                        {"address", "10.0.0.1:8080"},
                                        {"status", "UP"},
                                        {"weight", 100},
                                        {"zone", "eu-1a"},
                                        {"tier", 0},
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
