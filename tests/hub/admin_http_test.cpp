// cascade-hub's HTTP admin API (hub/admin_api/) on an in-process HubServer,
// through libcurl: the JSON of every endpoint, who may do what (tokens,
// loopback, allowed ranges), operator commands carried out by the core and
// answered only once their change committed, the audit log that names the
// token, and routing rules validated without being set.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <ifaddrs.h>
#include <netinet/in.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "cascade/common/curve_keys.hpp"
#include "cascade/hub/admin_api/console_files.hpp"
#include "cascade/hub/admin_api/console_routes.hpp"
#include "cascade/hub/admin_api/server_owner.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/tests/common/curl_client.hpp"
#include "cascade/tests/hub/hub_server_fixture.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using cascade::testing::HttpCall;
using cascade::testing::HttpResult;
using ::testing::HasSubstr;
using Json = nlohmann::json;

constexpr const char* kAliceToken = "alice-0123456789abcdef";
constexpr const char* kBobToken = "bob-fedcba9876543210ab";

Json json_of(const HttpResult& r) {
  return Json::parse(r.body, nullptr, false);
}

std::string code_of(const HttpResult& r) {
  const auto json = json_of(r);
  return json.is_object() && json.contains("error") ? json["error"].value("code", "") : "";
}

void write_private(const std::filesystem::path& file, const std::string& text) {
  std::ofstream(file, std::ios::trunc) << text;
  std::filesystem::permissions(
      file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
}

// A numeric IPv4 address of this host other than loopback, "" when it has none.
std::string non_loopback_address() {
  ifaddrs* list = nullptr;
  if (getifaddrs(&list) != 0) return {};
  std::string found;
  for (auto* it = list; it != nullptr && found.empty(); it = it->ifa_next) {
    if (it->ifa_addr == nullptr || it->ifa_addr->sa_family != AF_INET) continue;
    const auto address = SocketAddress::from(it->ifa_addr, sizeof(sockaddr_in));
    if (!address.is_loopback()) found = address.host();
  }
  freeifaddrs(list);
  return found;
}

// How the test's admin API is set up.
struct ApiSetup {
  bool tokens = true;  // with a token file holding alice's token
  std::string listen = "127.0.0.1:0";
  std::vector<std::string> allow{};  // CIDR ranges
  std::string host = "127.0.0.1";    // the host the test's requests go to
};

// Built before the hub: the real file the audit log is read from, the token
// file, and (once the hub exists) the API itself.
struct AdminParts {
  store_test::TempDir dir;
  std::unique_ptr<SqliteHubStore> file;
  std::filesystem::path token_file = dir.path() / "tokens";
  std::unique_ptr<admin_api::AdminService> admin;
  std::string base;  // "http://HOST:PORT"
};

class AdminHttpTest : protected AdminParts, public HubServerTest {
 protected:
  explicit AdminHttpTest(const HubConfig& config = default_config(), ApiSetup setup = {})
      : HubServerTest(config, nullptr,
                      [parts = static_cast<AdminParts*>(this), setup](HubServer& hub,
                                                                      ScriptedStore& hub_store) {
                        start_api(*parts, hub, hub_store, setup);
                      }) {}
  ~AdminHttpTest() override {
    // The API's tasks run on the hub's thread: it stops first, the API next.
    stop_server();
    admin.reset();
  }

  // Runs inside HubServerTest's constructor, so it touches only the parts
  // built before it and what the base hands over.
  static void start_api(AdminParts& parts, HubServer& hub, ScriptedStore& hub_store,
                        const ApiSetup& setup) {
    parts.file = SqliteHubStore::open(parts.dir.path() / "data", sqlite::Synchronous::kNormal);
    hub_store.backing = parts.file.get();
    http::ApiOptions options;
    options.listen = std::get<SocketAddress>(SocketAddress::parse(setup.listen));
    for (const auto& range : setup.allow)
      options.allow.push_back(std::get<Cidr>(Cidr::parse(range)));
    options.threads = 1;
    if (setup.tokens) {
      write_private(parts.token_file, std::string("alice ") + kAliceToken + "\n");
      options.token_file = parts.token_file.string();
    }
    parts.admin = std::make_unique<admin_api::AdminService>(hub, options, parts.file->file());
    parts.base =
        "http://" + setup.host + ":" + std::to_string(parts.admin->http().address().port());
  }

  HttpResult get(const std::string& path, const std::string& token = "") {
    return call("GET", path, "", token);
  }
  HttpResult call(const std::string& method, const std::string& path, const std::string& body,
                  const std::string& token = kAliceToken) {
    HttpCall c{method, base + path, body};
    if (!token.empty()) c.headers.push_back("Authorization: Bearer " + token);
    return cascade::testing::http(c);
  }

  // n1 registers `orders` o1 (10.0.0.1:80) and o2 (10.0.0.2:80).
  void register_orders() {
    const auto regs =
        std::vector{reg("orders", "o1", "10.0.0.1:80"), reg("orders", "o2", "10.0.0.2:80")};
    ASSERT_TRUE(request(beat_with_set("n1", 1, regs)));
  }
  // `reporters` distinct callers report the address: the hub's quorum is two.
  void report_failing(const std::string& address, std::vector<std::string> reporters) {
    for (const auto& reporter : reporters) {
      proto::FailureSignal signal{test_support::key("orders"), address,
                                  proto::FailureKind::kTimeout, reporter, 1};
      ASSERT_TRUE(request(proto::FailureReport{1, {signal}, 0}));
    }
  }
  Json instance(const Json& service, const std::string& id) {
    for (const auto& in : service["instances"])
      if (in["id"] == id) return in;
    ADD_FAILURE() << "no instance " << id << " in " << service.dump();
    return {};
  }
  Json audit() { return json_of(get("/api/v1/audit")); }
  // Polls GET /api/v1/status with `token` until it answers `status` (5 s at most).
  bool poll_until_status(const std::string& token, long status) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (std::chrono::steady_clock::now() < deadline) {
      if (get("/api/v1/status", token).status == status) return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return false;
  }
};

// ------------------------------------------------------------------ reads

TEST_F(AdminHttpTest, StatusShowsIdentitySizesStatesSwitchesAndCounters) {
  register_orders();
  const auto r = get("/api/v1/status");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
  const auto s = json_of(r);
  EXPECT_EQ(s["hub_id"], "hub-1");
  EXPECT_EQ(s["tier"], 1);
  EXPECT_EQ(s["epoch"], 1);
  EXPECT_EQ(s["security"], "loopback");
  EXPECT_TRUE(s["uptime_ms"].is_number());
  EXPECT_EQ(s["nodes"], 1);
  EXPECT_EQ(s["services"], 1);
  EXPECT_EQ(s["instances"], 2);
  EXPECT_EQ(
      s["instances_by_state"],
      (Json{{"up", 2}, {"isolated", 0}, {"unconfirmed", 0}, {"out_of_service", 0}, {"static", 0}}));
  EXPECT_EQ(s["subscriptions"], 0);
  EXPECT_EQ(s["switches"]["eviction-protection"]["enabled"], true);
  EXPECT_EQ(s["switches"]["notify"]["enabled"], false);
  EXPECT_TRUE(s["switches"]["notify"]["share_percent"].is_number());
  EXPECT_EQ(s["upstreams"], Json::array());
  EXPECT_EQ(s["counters"]["beats"], 1);
  EXPECT_TRUE(s["counters"].contains("connections_open"));  // the shell's counters too
  EXPECT_GE(s["http"]["requests"], 1);
}

TEST_F(AdminHttpTest, ServicesAreSortedByNameThenGroupWithTheirCounts) {
  auto canary = reg("orders", "c1", "10.0.2.1:80");
  canary.service.group = "canary";
  const auto regs =
      std::vector{reg("payments", "p1", "10.0.1.1:80"), canary, reg("orders", "o1", "10.0.0.1:80")};
  ASSERT_TRUE(request(beat_with_set("n1", 1, regs)));
  const auto r = get("/api/v1/services");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto list = json_of(r);
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0]["service"], "orders");
  EXPECT_EQ(list[0]["group"], "canary");
  EXPECT_EQ(list[1]["group"], "default");
  EXPECT_EQ(list[2]["service"], "payments");
  const auto& orders = list[1];
  EXPECT_TRUE(orders["version"].is_number());
  for (const auto* field : {"instances", "up"})
    EXPECT_EQ(orders[field], 1) << field;
  for (const auto* field : {"isolated", "unconfirmed", "out_of_service", "routes"})
    EXPECT_EQ(orders[field], 0) << field;
}

TEST_F(AdminHttpTest, AServiceShowsEachInstanceAsReportedAndServedWithOwnerAndLease) {
  register_orders();
  ASSERT_EQ(call("PUT", "/api/v1/services/orders/static/s1",
                 R"({"address":"10.0.0.9:80","weight":5,"zone":"dc1","metadata":{"k":"v"}})")
                .status,
            200);
  const auto r = get("/api/v1/services/orders");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto service = json_of(r);
  EXPECT_EQ(service["service"], "orders");
  EXPECT_EQ(service["group"], "default");
  EXPECT_TRUE(service["version"].is_number());
  EXPECT_EQ(service["rules"], Json::array());
  EXPECT_EQ(service["hidden_isolated"], 0);
  ASSERT_EQ(service["instances"].size(), 3u);

  const auto o1 = instance(service, "o1");
  EXPECT_EQ(o1["address"], "10.0.0.1:80");
  EXPECT_EQ(o1["status"], "UP");
  EXPECT_EQ(o1["reported_status"], "UP");
  EXPECT_EQ(o1["health"], "ok");
  EXPECT_EQ(o1["health_reason"], "");
  EXPECT_EQ(o1["tier"], 0);
  EXPECT_EQ(o1["owner"], "n1");
  EXPECT_EQ(o1["static"], false);
  EXPECT_EQ(o1["out_of_service"], false);
  EXPECT_EQ(o1["held"], false);
  EXPECT_GT(o1["lease_ms"], 0);
  EXPECT_LE(o1["lease_ms"], default_config().effective_lease().count());

  const auto s1 = instance(service, "s1");
  EXPECT_EQ(s1["static"], true);
  EXPECT_TRUE(s1["owner"].is_null());
  EXPECT_TRUE(s1["lease_ms"].is_null());
  EXPECT_EQ(s1["weight"], 5);
  EXPECT_EQ(s1["zone"], "dc1");
  EXPECT_EQ(s1["metadata"], (Json{{"k", "v"}}));
}

TEST_F(AdminHttpTest, UnknownServiceIsNotFoundAndABadNameABadRequest) {
  const auto unknown = get("/api/v1/services/nothing");
  EXPECT_EQ(unknown.status, 404);
  EXPECT_EQ(code_of(unknown), "unknown_service");
  EXPECT_EQ(code_of(get("/api/v1/services/orders?group=")), "bad_request");
  EXPECT_EQ(code_of(get("/api/v1/services/orders?all=maybe")), "bad_request");
  EXPECT_EQ(code_of(get("/api/v1/no-such-thing")), "no_route");
}

TEST_F(AdminHttpTest, IsolatedInstancesAreListedAndHiddenFromAServiceUnlessAllIsAsked) {
  const auto regs =
      std::vector{reg("orders", "o1", "10.0.0.1:80"), reg("orders", "o2", "10.0.0.2:80"),
                  reg("orders", "o3", "10.0.0.3:80"), reg("orders", "o4", "10.0.0.4:80")};
  ASSERT_TRUE(request(beat_with_set("n1", 1, regs)));
  report_failing("10.0.0.2:80", {"c1", "c2"});

  const auto list = json_of(get("/api/v1/isolated"));
  EXPECT_EQ(list["total"], 1);
  EXPECT_EQ(list["truncated"], false);
  ASSERT_EQ(list["instances"].size(), 1u);
  const auto& isolated = list["instances"][0];
  EXPECT_EQ(isolated["service"], "orders");
  EXPECT_EQ(isolated["group"], "default");
  EXPECT_EQ(isolated["id"], "o2");
  EXPECT_EQ(isolated["address"], "10.0.0.2:80");
  EXPECT_EQ(isolated["node"], "n1");
  EXPECT_THAT(isolated["reason"].get<std::string>(), HasSubstr("isolated"));
  EXPECT_GT(isolated["readmit_in_ms"], 0);

  const auto shown = json_of(get("/api/v1/services/orders"));
  EXPECT_EQ(shown["instances"].size(), 3u);
  EXPECT_EQ(shown["hidden_isolated"], 1);
  EXPECT_EQ(shown["isolated"], 1);
  const auto all = json_of(get("/api/v1/services/orders?all=1"));
  EXPECT_EQ(instance(all, "o2")["health"], "isolated");
  EXPECT_EQ(code_of(get("/api/v1/isolated?limit=0")), "bad_request");

  // Readmitted by an operator: off the list, served again.
  ASSERT_EQ(call("POST", "/api/v1/services/orders/instances/o2/readmit", "").status, 200);
  EXPECT_EQ(json_of(get("/api/v1/isolated"))["total"], 0);
  EXPECT_EQ(json_of(get("/api/v1/services/orders"))["hidden_isolated"], 0);
}

class AdminHttpShortLeaseTest : public AdminHttpTest {
 protected:
  AdminHttpShortLeaseTest() : AdminHttpTest(short_lease_config()) {}
  static HubConfig short_lease_config() {
    auto config = default_config();
    config.beat_interval = Duration{100};
    config.lease = Duration{300};
    return config;
  }
};

// Ten agents, three stop: one lease later eviction protection expires two
// (its share of the service) and holds the third, unconfirmed.
TEST_F(AdminHttpShortLeaseTest, UnconfirmedInstancesAreThoseEvictionProtectionHolds) {
  std::vector<std::uint64_t> digests;
  for (int i = 0; i < 10; ++i) {
    const auto regs =
        std::vector{reg("orders", "o" + std::to_string(i), "10.0.0." + std::to_string(i) + ":80")};
    digests.push_back(digest(regs));
    ASSERT_TRUE(request(beat_with_set("n" + std::to_string(i), 1, regs)));
  }
  Json list;
  std::uint64_t seq = 1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    ++seq;
    for (int i = 3; i < 10; ++i)  // n0..n2 are silent
      ASSERT_TRUE(request(beat("n" + std::to_string(i), seq, digests[i])));
    list = json_of(get("/api/v1/unconfirmed"));
    if (list["total"] == 1) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a beat interval's pace
  }
  ASSERT_EQ(list["total"], 1) << list.dump();
  ASSERT_EQ(list["instances"].size(), 1u);
  const auto& held = list["instances"][0];
  EXPECT_EQ(held["hold"], "budget");
  EXPECT_EQ(held["reason"], std::string(kUnconfirmedReason));
  EXPECT_GE(held["held_for_ms"], 0);
  const auto service = json_of(get("/api/v1/services/orders"));
  const auto shown = instance(service, held["id"]);
  EXPECT_EQ(shown["health"], "unconfirmed");
  EXPECT_EQ(shown["held"], true);
  EXPECT_EQ(shown["lease_ms"], 0);
}

class AdminHttpTierTest : public AdminHttpTest {
 protected:
  AdminHttpTierTest() : AdminHttpTest(tier_two_config()) {}
  static HubConfig tier_two_config() {
    auto config = default_config();
    config.id = "l2";
    config.tier = 2;
    config.zone = "eu";
    config.upstreams = {"tcp://127.0.0.1:1"};  // nothing listens: never reachable
    return config;
  }
};

TEST_F(AdminHttpTierTest, TopologyShowsThisHubItsChildHubsAndItsUpstreams) {
  auto child = beat_with_set("dc1-hub", 1, {reg("orders", "o1", "10.0.0.1:80")});
  child.sender_tier = 1;
  ASSERT_TRUE(request(child));
  ASSERT_TRUE(request(beat_with_set("agent-1", 1, {reg("orders", "o2", "10.0.0.2:80")})));

  const auto r = get("/api/v1/topology");
  ASSERT_EQ(r.status, 200) << r.body;
  const auto t = json_of(r);
  EXPECT_EQ(t["hub_id"], "l2");
  EXPECT_EQ(t["tier"], 2);
  EXPECT_EQ(t["zone"], "eu");
  EXPECT_EQ(t["epoch"], 1);
  EXPECT_EQ(t["agents"], 1);
  ASSERT_EQ(t["children"].size(), 1u);
  const auto& hub = t["children"][0];
  EXPECT_EQ(hub["hub_id"], "dc1-hub");
  EXPECT_EQ(hub["tier"], 1);
  EXPECT_EQ(hub["instances"], 1);
  EXPECT_EQ(hub["held"], false);
  EXPECT_GT(hub["lease_ms"], 0);
  ASSERT_EQ(t["upstreams"].size(), 1u);
  const auto& up = t["upstreams"][0];
  EXPECT_EQ(up["endpoint"], "tcp://127.0.0.1:1");
  EXPECT_TRUE(up["hub_id"].is_null());
  EXPECT_EQ(up["current"], true);
  EXPECT_EQ(up["reachable"], false);
  EXPECT_TRUE(up["last_reply_ms"].is_null());
  EXPECT_TRUE(up["lease_ms"].is_number());
}

// ------------------------------------------------------- who may do what

TEST_F(AdminHttpTest, ACommandWithoutATokenOrWithAWrongOneIsRefusedAndChangesNothing) {
  register_orders();
  const auto path = "/api/v1/services/orders/instances/o1/out-of-service";
  const auto none = call("POST", path, "", "");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.headers.at("www-authenticate"), "Bearer");
  EXPECT_EQ(call("POST", path, "", kBobToken).status, 401);
  // A stale token is refused on a read too, though a read needs none here.
  EXPECT_EQ(get("/api/v1/status", kBobToken).status, 401);

  EXPECT_EQ(instance(json_of(get("/api/v1/services/orders")), "o1")["status"], "UP");
  EXPECT_EQ(store.audit_written.load(), 0u);
  EXPECT_EQ(audit()["records"], Json::array());
  EXPECT_EQ(json_of(get("/api/v1/status"))["http"]["unauthorized"], 3);
}

// A web page of another site that pointed its DNS name at 127.0.0.1 reaches
// the hub from loopback, but its browser sends the page's name as Host.
TEST_F(AdminHttpTest, ALoopbackReadUnderAnotherHostNameNeedsATokenAsAfterDnsRebinding) {
  const auto port = std::to_string(admin->http().address().port());
  const auto read = [&](const std::string& host, const std::string& path,
                        const std::string& token = "") {
    HttpCall c{"GET", base + path};
    c.headers.push_back("Host: " + host);
    if (!token.empty()) c.headers.push_back("Authorization: Bearer " + token);
    return cascade::testing::http(c).status;
  };
  EXPECT_EQ(read("attacker.example:" + port, "/api/v1/status"), 401);
  EXPECT_EQ(read("127.0.0.1.attacker.example", "/api/v1/services"), 401);
  EXPECT_EQ(read("attacker.example:" + port, "/api/v1/status", kAliceToken), 200);
  EXPECT_EQ(read("localhost:" + port, "/api/v1/status"), 200);
  EXPECT_EQ(read("127.0.0.1", "/api/v1/status"), 200);
  // The console's files hold no state: the page loads, its reads then ask for a token.
  EXPECT_EQ(read("attacker.example:" + port, "/ui/"), 200);
}

class AdminHttpWithoutTokensTest : public AdminHttpTest {
 protected:
  AdminHttpWithoutTokensTest() : AdminHttpTest(default_config(), ApiSetup{.tokens = false}) {}
};

TEST_F(AdminHttpWithoutTokensTest, CommandsAreRefusedWithAMessageSayingToConfigureTokens) {
  register_orders();
  EXPECT_EQ(get("/api/v1/status").status, 200);  // loopback reads are open
  const auto r = call("POST", "/api/v1/services/orders/instances/o1/out-of-service", "", "");
  EXPECT_EQ(r.status, 403);
  EXPECT_EQ(code_of(r), "no_tokens");
  EXPECT_THAT(r.body, HasSubstr("--http-token-file"));
  EXPECT_EQ(call("PUT", "/api/v1/services/orders/routes?dry_run=1", R"({"rules":[]})", "").status,
            403);
  EXPECT_EQ(instance(json_of(get("/api/v1/services/orders")), "o1")["status"], "UP");
  EXPECT_EQ(store.audit_written.load(), 0u);
}

// Reads from other hosts need a token; hosts outside --http-allow get no
// connection at all. Needs an address of this host other than loopback.
TEST(AdminHttpPeers, ReadsFromAnotherHostNeedATokenAndHostsOutsideTheRangesGetNothing) {
  const auto address = non_loopback_address();
  if (address.empty()) GTEST_SKIP() << "this host has no address but loopback";
  struct Allowed : AdminHttpTest {
    explicit Allowed(const std::string& host)
        : AdminHttpTest(default_config(),
                        ApiSetup{.listen = "0.0.0.0:0", .allow = {host + "/32"}, .host = host}) {}
    void TestBody() override {}
    using AdminHttpTest::get;
  } allowed(address);
  EXPECT_EQ(allowed.get("/api/v1/status").status, 401);
  EXPECT_EQ(allowed.get("/api/v1/status", kAliceToken).status, 200);
  // The console's files hold no state and a browser loads them without a
  // token; the reads they make then need one.
  EXPECT_EQ(allowed.get("/ui/").status, 200);
  EXPECT_EQ(allowed.get("/ui/console.js").status, 200);

  // A documentation range (RFC 5737) that does not hold this host's address.
  const std::string other =
      address.starts_with("198.51.100.") ? "203.0.113.0/24" : "198.51.100.0/24";
  struct Elsewhere : AdminHttpTest {
    Elsewhere(const std::string& host, const std::string& range)
        : AdminHttpTest(default_config(),
                        ApiSetup{.listen = "0.0.0.0:0", .allow = {range}, .host = host}) {}
    void TestBody() override {}
    using AdminHttpTest::get;
  } elsewhere(address, other);
  EXPECT_EQ(elsewhere.get("/api/v1/status", kAliceToken).status, 0);  // closed unanswered
}

// ------------------------------------------------------- operator commands

TEST_F(AdminHttpTest, OutOfServiceWithATokenIsAppliedAndAuditedUnderTheTokensName) {
  register_orders();
  const auto path = "/api/v1/services/orders/instances/o1/out-of-service";
  const auto marked = call("POST", path, "");
  ASSERT_EQ(marked.status, 200) << marked.body;
  // Answered after the commit that holds the change and its record.
  EXPECT_GE(store.audit_written.load(), 1u);
  const auto body = json_of(marked);
  EXPECT_EQ(body["op"], "mark_out_of_service");
  EXPECT_EQ(body["ok"], true);
  EXPECT_THAT(body["message"].get<std::string>(), HasSubstr("OUT_OF_SERVICE"));

  const auto o1 = instance(json_of(get("/api/v1/services/orders")), "o1");
  EXPECT_EQ(o1["status"], "OUT_OF_SERVICE");
  EXPECT_EQ(o1["reported_status"], "UP");
  EXPECT_EQ(o1["out_of_service"], true);
  EXPECT_EQ(json_of(get("/api/v1/services"))[0]["out_of_service"], 1);

  const auto records = audit()["records"];
  ASSERT_EQ(records.size(), 1u);
  const auto& record = records[0];
  EXPECT_EQ(record["actor"], "http:alice");
  EXPECT_EQ(record["peer"], "127.0.0.1");
  EXPECT_EQ(record["op"], "mark_out_of_service");
  EXPECT_EQ(record["service"], "orders");
  EXPECT_EQ(record["group"], "default");
  EXPECT_EQ(record["instance_id"], "o1");
  EXPECT_EQ(record["ok"], true);
  EXPECT_EQ(record["key"], "");  // a hub without keys
  EXPECT_TRUE(record["id"].is_number());
  EXPECT_GT(record["at_ms"], 0);

  ASSERT_EQ(call("DELETE", path, "").status, 200);
  EXPECT_EQ(instance(json_of(get("/api/v1/services/orders")), "o1")["status"], "UP");
}

TEST_F(AdminHttpTest, NoCommandIsAcknowledgedWhileCommitsFail) {
  register_orders();
  store.failing = true;
  const auto refused = call("POST", "/api/v1/services/orders/instances/o1/out-of-service", "");
  EXPECT_EQ(refused.status, 503);
  EXPECT_EQ(code_of(refused), "not_committed");
  EXPECT_EQ(store.audit_written.load(), 0u);
  EXPECT_EQ(call("PUT", "/api/v1/switches/eviction-protection", R"({"enabled":false})").status,
            503);

  // The core requeued the change: the next commit writes it, and the next
  // command is acknowledged once it is durable.
  store.failing = false;
  const auto next = call("POST", "/api/v1/services/orders/instances/o2/out-of-service", "");
  EXPECT_EQ(next.status, 200) << next.body;
  EXPECT_EQ(store.audit_written.load(), 3u);
  EXPECT_EQ(audit()["records"].size(), 3u);
}

TEST_F(AdminHttpTest, PagesOfTheAuditLogGoNewestFirst) {
  register_orders();
  for (const auto* id : {"o1", "o2", "o1"})
    ASSERT_EQ(call("POST", std::string("/api/v1/services/orders/instances/") + id + "/readmit", "")
                  .status,
              200);
  const auto first = json_of(get("/api/v1/audit?limit=2"));
  ASSERT_EQ(first["records"].size(), 2u);
  EXPECT_GT(first["records"][0]["id"], first["records"][1]["id"]);
  ASSERT_TRUE(first["next_before"].is_number());
  const auto rest = json_of(
      get("/api/v1/audit?limit=2&before=" + std::to_string(first["next_before"].get<int>())));
  ASSERT_EQ(rest["records"].size(), 1u);
  EXPECT_TRUE(rest["next_before"].is_null());
  EXPECT_EQ(code_of(get("/api/v1/audit?before=soon")), "bad_request");
  EXPECT_EQ(code_of(get("/api/v1/audit?limit=100000")), "bad_request");
}

TEST_F(AdminHttpTest, RefusalsSayWhetherTheInstanceIsMissingOrTheHubSaidNo) {
  register_orders();
  const auto missing = call("POST", "/api/v1/services/orders/instances/nope/readmit", "");
  EXPECT_EQ(missing.status, 404);
  EXPECT_EQ(code_of(missing), "unknown_instance");
  const auto agents = call("DELETE", "/api/v1/services/orders/static/o1", "");
  EXPECT_EQ(agents.status, 409);
  EXPECT_EQ(code_of(agents), "refused");
  EXPECT_THAT(agents.body, HasSubstr("registered by node n1"));
  // Refusals are audited as cascadectl's are.
  EXPECT_EQ(audit()["records"][0]["ok"], false);
}

TEST_F(AdminHttpTest, BadBodiesAndArgumentsAreRefusedBeforeTheHubAndNotAudited) {
  EXPECT_EQ(code_of(call("PUT", "/api/v1/services/orders/static/s1", "not json")), "invalid_json");
  EXPECT_EQ(code_of(call("PUT", "/api/v1/services/orders/static/s1", R"({"adress":"x:1"})")),
            "missing_field");
  EXPECT_EQ(code_of(call("PUT", "/api/v1/services/orders/static/s1",
                         R"({"address":"10.0.0.9:80","wieght":1})")),
            "unknown_field");
  EXPECT_EQ(code_of(call("PUT", "/api/v1/services/orders/static/s1",
                         R"({"address":"10.0.0.9:80","status":"SLEEPING"})")),
            "invalid_field");
  // The hub's own checks, with its message.
  const auto empty_address = call("PUT", "/api/v1/services/orders/static/s1", R"({"address":""})");
  EXPECT_EQ(code_of(empty_address), "invalid_request");
  EXPECT_EQ(
      code_of(call("PUT", "/api/v1/switches/notify", R"({"enabled":true,"share_percent":0})")),
      "invalid_request");
  EXPECT_EQ(
      code_of(call("PUT", "/api/v1/switches/notify", R"({"enabled":false,"share_percent":5})")),
      "invalid_field");
  EXPECT_EQ(code_of(call("PUT", "/api/v1/switches/eviction-protection", "{}")), "missing_field");
  EXPECT_EQ(code_of(call("POST", "/api/v1/services/orders/instances/o1/readmit?group=", "")),
            "bad_request");
  EXPECT_EQ(store.audit_written.load(), 0u);
}

TEST_F(AdminHttpTest, StaticInstancesAreAddedAndRemovedByPutAndDelete) {
  const auto put = call("PUT", "/api/v1/services/orders/static/s1?group=blue",
                        R"({"address":"10.0.0.9:80","status":"down"})");
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(json_of(put)["op"], "add_static");
  const auto s1 = instance(json_of(get("/api/v1/services/orders?group=blue")), "s1");
  EXPECT_EQ(s1["status"], "DOWN");
  EXPECT_EQ(s1["static"], true);
  EXPECT_EQ(json_of(get("/api/v1/status"))["instances_by_state"]["static"], 1);

  ASSERT_EQ(call("DELETE", "/api/v1/services/orders/static/s1?group=blue", "").status, 200);
  EXPECT_EQ(get("/api/v1/services/orders?group=blue").status, 404);
}

TEST_F(AdminHttpTest, RoutesAreSetAsCascadectlArgumentsReadBackTheSameAndCleared) {
  const std::vector<std::string> rules{"10:zone = dc1 => zone = dc1", "force:zone = dc3 =>"};
  const auto put = call("PUT", "/api/v1/services/orders/routes", Json{{"rules", rules}}.dump());
  ASSERT_EQ(put.status, 200) << put.body;
  const auto got = json_of(get("/api/v1/services/orders/routes"));
  EXPECT_EQ(got["rules"], Json(rules));
  ASSERT_EQ(got["routes"].size(), 2u);
  EXPECT_EQ(got["routes"][0], (Json{{"text", "zone = dc1 => zone = dc1"},
                                    {"priority", 10},
                                    {"force", false},
                                    {"enabled", true}}));
  EXPECT_EQ(json_of(get("/api/v1/services/orders"))["rules"], Json(rules));
  EXPECT_EQ(json_of(get("/api/v1/services"))[0]["routes"], 2);
  EXPECT_EQ(audit()["records"][0]["op"], "set_routes");

  ASSERT_EQ(call("DELETE", "/api/v1/services/orders/routes", "").status, 200);
  EXPECT_EQ(json_of(get("/api/v1/services/orders/routes"))["rules"], Json::array());
}

TEST_F(AdminHttpTest, ConfigKeysAreSetReadWithTheirOriginEditedTogetherAndRemoved) {
  const auto put = call("PUT", "/api/v1/config/orders/keys/timeout_ms", R"({"value":"300"})");
  ASSERT_EQ(put.status, 200) << put.body;
  EXPECT_EQ(json_of(put)["op"], "config_edit");
  const auto version = json_of(put)["version"].get<std::uint64_t>();
  EXPECT_GT(version, 0u);
  ASSERT_EQ(call("PUT", "/api/v1/config/orders/keys/blob", R"({"value_hex":"00ff"})").status, 200);

  const auto group = json_of(get("/api/v1/config/orders"));
  ASSERT_EQ(group["entries"].size(), 2u);
  EXPECT_EQ(group["entries"][0]["key"], "blob");
  EXPECT_EQ(group["entries"][0]["value_hex"], "00ff");
  EXPECT_EQ(group["entries"][1]["value"], "300");
  EXPECT_EQ(group["entries"][1]["tier"], 1);
  EXPECT_EQ(group["entries"][1]["version"], version);
  EXPECT_EQ(json_of(get("/api/v1/config/orders/keys/timeout_ms"))["entries"][0]["value"], "300");
  EXPECT_EQ(get("/api/v1/config/orders/keys/nope").status, 404);
  EXPECT_EQ(get("/api/v1/config/payments").status, 404);

  const auto edit = call("POST", "/api/v1/config/orders/edit",
                         R"({"set":{"timeout_ms":"250","retries":"2"},"remove":["blob"]})");
  ASSERT_EQ(edit.status, 200) << edit.body;
  const auto after = json_of(get("/api/v1/config/orders"));
  ASSERT_EQ(after["entries"].size(), 2u);
  EXPECT_EQ(after["entries"][0]["key"], "retries");
  ASSERT_EQ(call("DELETE", "/api/v1/config/orders/keys/retries", "").status, 200);
  const auto list = json_of(get("/api/v1/config"));
  ASSERT_EQ(list["groups"].size(), 1u);
  EXPECT_EQ(list["groups"][0]["keys"], 1);
  EXPECT_EQ(audit()["records"][0]["op"], "config_edit");
  EXPECT_EQ(audit()["records"][0]["actor"], "http:alice");
}

TEST_F(AdminHttpTest, ConfigHistoryNamesWhoAndRollbackGoesBack) {
  const auto first = call("PUT", "/api/v1/config/orders/keys/mode", R"({"value":"safe"})");
  ASSERT_EQ(first.status, 200) << first.body;
  const auto version = json_of(first)["version"].get<std::uint64_t>();
  ASSERT_EQ(call("PUT", "/api/v1/config/orders/keys/mode", R"({"value":"fast"})").status, 200);
  const auto back =
      call("POST", "/api/v1/config/orders/rollback", Json{{"version", version}}.dump());
  ASSERT_EQ(back.status, 200) << back.body;
  EXPECT_EQ(json_of(get("/api/v1/config/orders/keys/mode"))["entries"][0]["value"], "safe");
  const auto history = json_of(get("/api/v1/config/orders/history"))["history"];
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0]["old"], "fast");
  EXPECT_EQ(history[0]["new"], "safe");
  EXPECT_EQ(history[2]["old"], nullptr);
  EXPECT_EQ(history[2]["author"], "http:alice");
  EXPECT_FALSE(history[0].contains("new_hex")) << "text needs no hex";
  ASSERT_EQ(call("PUT", "/api/v1/config/orders/keys/mode", R"({"value_hex":"00ff"})").status, 200);
  const auto binary = json_of(get("/api/v1/config/orders/history"))["history"][0];
  EXPECT_EQ(binary["new_hex"], "00ff") << "a binary value in history is given in hex too";
  EXPECT_FALSE(binary.contains("old_hex"));
  EXPECT_EQ(
      call("POST", "/api/v1/config/orders/rollback", R"({"version":4611686018427387904})").status,
      409)
      << "a version the group never had";
}

TEST_F(AdminHttpTest, BadConfigBodiesAreRefusedBeforeTheHub) {
  EXPECT_EQ(call("PUT", "/api/v1/config/orders/keys/k", R"({})").status, 400);
  EXPECT_EQ(call("PUT", "/api/v1/config/orders/keys/k", R"({"value_hex":"0g"})").status, 400);
  EXPECT_EQ(call("PUT", "/api/v1/config/orders/keys/k", R"({"value":"a","value_hex":"00"})").status,
            400);
  EXPECT_EQ(call("POST", "/api/v1/config/orders/edit", R"({"set":{}})").status, 400);
  EXPECT_EQ(call("POST", "/api/v1/config/orders/rollback", R"({})").status, 400);
  EXPECT_EQ(call("PUT", "/api/v1/config/orders/keys/k", R"({"value":"1"})", "").status, 401);
  EXPECT_EQ(get("/api/v1/config/orders").status, 404) << "nothing was set";
}

TEST_F(AdminHttpTest, ADryRunGivesTheParseErrorOrTheParsedRulesAndChangesNothing) {
  const auto bad = call("PUT", "/api/v1/services/orders/routes?dry_run=1",
                        R"({"rules":["=> zone = dc1","host = => zone = dc1"]})");
  EXPECT_EQ(bad.status, 400);
  const auto error = json_of(bad)["error"];
  EXPECT_EQ(error["code"], "invalid_request");
  EXPECT_EQ(error["rule"], 2);
  EXPECT_EQ(error["column"], 8);
  EXPECT_THAT(error["message"].get<std::string>(), HasSubstr("route #2"));
  // The same message as a real PUT gets, and as the core gives cascadectl.
  const auto real = call("PUT", "/api/v1/services/orders/routes",
                         R"({"rules":["=> zone = dc1","host = => zone = dc1"]})");
  EXPECT_EQ(json_of(real)["error"], error);

  const auto good = call("PUT", "/api/v1/services/orders/routes?dry_run=1",
                         R"({"rules":["zone = dc3 =>"],"force":true})");
  ASSERT_EQ(good.status, 200) << good.body;
  const auto parsed = json_of(good);
  EXPECT_EQ(parsed["valid"], true);
  ASSERT_EQ(parsed["rules"].size(), 1u);
  EXPECT_EQ(parsed["rules"][0]["rule"], "force:zone = dc3 =>");
  EXPECT_EQ(parsed["rules"][0]["consumer_match"],
            (Json::array({{{"key", "zone"}, {"op", "="}, {"values", {"dc3"}}}})));
  EXPECT_EQ(parsed["rules"][0]["provider_filter"], Json::array());
  EXPECT_EQ(parsed["rules"][0]["denies_all"], true);

  EXPECT_EQ(json_of(get("/api/v1/services/orders/routes"))["rules"], Json::array());
  EXPECT_EQ(store.audit_written.load(), 0u);
}

TEST_F(AdminHttpTest, SwitchesAreSetAndShown) {
  ASSERT_EQ(call("PUT", "/api/v1/switches/eviction-protection", R"({"enabled":false})").status,
            200);
  const auto notify =
      call("PUT", "/api/v1/switches/notify", R"({"enabled":true,"share_percent":25})");
  ASSERT_EQ(notify.status, 200) << notify.body;
  EXPECT_EQ(json_of(notify)["op"], "notify_switch");
  const auto switches = json_of(get("/api/v1/switches"));
  EXPECT_EQ(switches, (Json{{"eviction-protection", {{"enabled", false}}},
                            {"notify", {{"enabled", true}, {"share_percent", 25}}}}));
  EXPECT_EQ(json_of(get("/api/v1/status"))["switches"], switches);
  // On without a share: cascadectl's default.
  ASSERT_EQ(call("PUT", "/api/v1/switches/notify", R"({"enabled":true})").status, 200);
  EXPECT_EQ(json_of(get("/api/v1/switches"))["notify"]["share_percent"], 10);
}

TEST_F(AdminHttpTest, ReloadKeysRereadsTheTokenFileAndABadFileKeepsTheTokens) {
  write_private(token_file, std::string("bob ") + kBobToken + "\n");
  const auto reloaded = call("POST", "/api/v1/reload-keys", "");
  ASSERT_EQ(reloaded.status, 200) << reloaded.body;
  EXPECT_THAT(json_of(reloaded)["message"].get<std::string>(), HasSubstr("1 HTTP tokens"));
  EXPECT_EQ(call("PUT", "/api/v1/switches/eviction-protection", R"({"enabled":true})").status, 401);
  EXPECT_EQ(
      call("PUT", "/api/v1/switches/eviction-protection", R"({"enabled":true})", kBobToken).status,
      200);

  write_private(token_file, "broken\n");
  const auto kept = call("POST", "/api/v1/reload-keys", "", kBobToken);
  EXPECT_EQ(kept.status, 409);
  EXPECT_THAT(kept.body, HasSubstr("kept the HTTP tokens in use"));
  EXPECT_EQ(get("/api/v1/status", kBobToken).status, 200);
}

TEST_F(AdminHttpTest, ASighupRereadsTheTokenFile) {
  write_private(token_file, std::string("bob ") + kBobToken + "\n");
  reload = true;  // what cascade-hub's SIGHUP handler sets
  EXPECT_TRUE(poll_until_status(kBobToken, 200));
  EXPECT_EQ(get("/api/v1/status", kAliceToken).status, 401);
}

// A hub with keys checks the caller's role: the HTTP operator is an operator
// key named after the token, which the audit record names.
class AdminHttpKeyedTest : public AdminHttpTest {
 protected:
  AdminHttpKeyedTest() : AdminHttpTest(keyed_config(keys_dir())) {}
  static const std::filesystem::path& keys_dir() {
    static const store_test::TempDir dir;
    return dir.path();
  }
  static HubConfig keyed_config(const std::filesystem::path& dir) {
    const auto hub = curve::generate_key_pair();
    curve::write_key_files(dir, "hub", hub);
    write_private(dir / "authorized_keys",
                  curve::generate_key_pair().public_z85 + " someone agent\n");
    auto config = default_config();
    config.security.secret_key = dir / "hub.key";
    config.security.authorized_keys = dir / "authorized_keys";
    return config;
  }
};

TEST_F(AdminHttpKeyedTest, TheOperatorActsAsAnOperatorKeyNamedAfterItsToken) {
  const auto r = call("PUT", "/api/v1/switches/eviction-protection", R"({"enabled":false})");
  ASSERT_EQ(r.status, 200) << r.body;
  EXPECT_EQ(json_of(get("/api/v1/status"))["security"], "curve");
  const auto record = audit()["records"][0];
  EXPECT_EQ(record["key"], "http:alice");
  EXPECT_EQ(record["actor"], "http:alice");
}

// ------------------------------------------------------- the web console

// The bytes built into the binary are the files of the source tree, all of them.
TEST(Console, EveryFileOfTheSourceTreeIsBuiltInAsItIs) {
  const std::filesystem::path dir = std::filesystem::path(CASCADE_SOURCE_DIR) / "hub" / "console";
  std::set<std::string> on_disk;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    on_disk.insert(entry.path().filename().string());
  std::set<std::string> built_in;
  for (const auto& file : admin_api::console_files()) {
    built_in.insert(std::string(file.name));
    std::ifstream in(dir / file.name, std::ios::binary);
    const std::string text{std::istreambuf_iterator<char>(in), {}};
    EXPECT_EQ(file.bytes, text) << file.name;
  }
  EXPECT_EQ(built_in, on_disk);
  EXPECT_TRUE(built_in.contains("index.html"));
}

TEST_F(AdminHttpTest, TheConsoleIsServedWithItsTypeNoCacheAndAPolicyThatLoadsOnlyItsOwnFiles) {
  const auto page = get("/ui/");
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(page.headers.at("content-type"), "text/html; charset=utf-8");
  EXPECT_EQ(page.headers.at("cache-control"), "no-cache");
  EXPECT_EQ(page.headers.at("x-content-type-options"), "nosniff");
  EXPECT_THAT(page.headers.at("content-security-policy"), HasSubstr("script-src 'self'"));
  EXPECT_THAT(page.body, HasSubstr("<script src=\"console.js\""));
  EXPECT_EQ(get("/ui/index.html").body, page.body);

  const auto script = get("/ui/console.js");
  ASSERT_EQ(script.status, 200);
  EXPECT_EQ(script.headers.at("content-type"), "text/javascript; charset=utf-8");
  EXPECT_EQ(script.headers.at("cache-control"), "no-cache");
  const auto style = get("/ui/console.css");
  ASSERT_EQ(style.status, 200);
  EXPECT_EQ(style.headers.at("content-type"), "text/css; charset=utf-8");
}

TEST_F(AdminHttpTest, UnknownConsoleFilesAreNotFoundAndTheRootLeadsToTheConsole) {
  for (const auto* path : {"/ui/nope.js", "/ui/sub/index.html", "/ui/%2e%2e"}) {
    const auto r = get(path);
    EXPECT_EQ(r.status, 404) << path;
    EXPECT_EQ(code_of(r), "no_file") << path;
  }
  for (const auto* path : {"/", "/ui"}) {
    const auto r = get(path);
    EXPECT_EQ(r.status, 302) << path;
    EXPECT_EQ(r.headers.at("location"), "/ui/") << path;
  }
  EXPECT_EQ(call("POST", "/ui/", "").status, 405);
  // Loopback needs no token for the console, as for the reads it makes.
  EXPECT_EQ(get("/ui/", "").status, 200);
}

TEST(Console, FilesAreSentWithTheTypeOfTheirExtension) {
  EXPECT_EQ(admin_api::content_type_of("index.html"), "text/html; charset=utf-8");
  EXPECT_EQ(admin_api::content_type_of("a.svg"), "image/svg+xml");
  EXPECT_EQ(admin_api::content_type_of("LICENSE"), "application/octet-stream");
}

}  // namespace
}  // namespace cascade::hub
