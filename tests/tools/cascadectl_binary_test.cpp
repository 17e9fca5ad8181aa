// The real cascadectl binary against an in-process fake hub: exit codes and
// where output goes.

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cascade/tests/tools/fake_hub.hpp"
#include "cascade/tools/ctl/render.hpp"

namespace cascade::ctl {
namespace {

namespace fs = std::filesystem;

struct CtlRun {
  int code = -1;
  std::string out;
  std::string err;
  std::chrono::milliseconds elapsed{0};
};

std::string shell_quote(const std::string& arg) {
  std::string quoted = "'";
  for (const char c : arg) {
    if (c == '\'') {
      quoted += "'\\''";
    } else {
      quoted += c;
    }
  }
  return quoted + "'";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

class CtlBinary : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (fs::temp_directory_path() / "cascadectl_test_XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ignored;
    fs::remove_all(dir_, ignored);
  }

  // Runs cascadectl with `args` (CASCADE_HUB unset, `env` added as NAME=value),
  // capturing stdout and stderr.
  CtlRun run(const std::vector<std::string>& args, const std::vector<std::string>& env = {}) {
    std::string command = "env -u CASCADE_HUB";
    for (const auto& assignment : env)
      command += " " + shell_quote(assignment);
    command += " " + shell_quote(CASCADECTL_PATH);
    for (const auto& arg : args)
      command += " " + shell_quote(arg);
    command += " >" + shell_quote((dir_ / "out").string()) + " 2>" +
               shell_quote((dir_ / "err").string()) + " </dev/null";
    CtlRun result;
    const auto start = std::chrono::steady_clock::now();
    const int status = std::system(command.c_str());
    result.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - start);
    result.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    result.out = slurp(dir_ / "out");
    result.err = slurp(dir_ / "err");
    return result;
  }

  fs::path dir_;
};

TEST_F(CtlBinary, TheBinaryIsWhereTheBuildPutsIt) {
  EXPECT_EQ(fs::path(CASCADECTL_PATH), fs::path(CASCADE_BINARY_DIR "/tools/cascadectl"));
  EXPECT_TRUE(fs::exists(CASCADECTL_PATH));
}

TEST_F(CtlBinary, StatusAgainstAHubExitsZeroWithTheTable) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "status"});

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, status_table(testing::canned_status(0)));
  EXPECT_EQ(r.err, "");
}

TEST_F(CtlBinary, ServicesJsonExitsZero) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "--json", "services"});

  EXPECT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["services"].size(), 2U);
}

TEST_F(CtlBinary, ResolveKnownServiceExitsZeroWithItsInstances) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "--json", "resolve", "orders"});

  EXPECT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["service"], "orders");
  EXPECT_EQ(json["group"], "default");
  EXPECT_EQ(json["instances"].size(), 2U);
}

TEST_F(CtlBinary, ResolveUnknownGroupExitsOneAndPrintsTheEmptyResult) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "resolve", "orders", "--group", "blue"});

  EXPECT_EQ(r.code, 1) << r.err;
  EXPECT_EQ(r.out.rfind("orders (group blue) not found at hub hub-a\n", 0), 0U) << r.out;
  ASSERT_EQ(hub.requests().size(), 1U);
  EXPECT_EQ(std::get<proto::Query>(hub.requests()[0]).service,
            (proto::ServiceKey{"orders", "blue"}));
}

TEST_F(CtlBinary, GlobalFlagsMayFollowTheCommand) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"resolve", "orders", "--json", "--hub", hub.endpoint()});

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["service"], "orders");
}

TEST_F(CtlBinary, ErrorReplyExitsFourWithTheMessageOnStderr) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "resolve", "forbidden"});

  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cascadectl: hub error invalid: service name not allowed\n");
}

TEST_F(CtlBinary, MissingCommandExitsTwo) {
  const CtlRun r = run({"--hub", "tcp://127.0.0.1:1"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err, "");
}

TEST_F(CtlBinary, MissingHubExitsTwo) {
  EXPECT_EQ(run({"status"}).code, 2);
}

TEST_F(CtlBinary, UnknownFlagExitsTwo) {
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "--bogus", "status"}).code, 2);
}

TEST_F(CtlBinary, ResolveWithoutServiceExitsTwo) {
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "resolve"}).code, 2);
}

TEST_F(CtlBinary, BadTimeoutExitsTwo) {
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "--timeout-ms", "soon", "status"}).code, 2);
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "--timeout-ms", "0", "status"}).code, 2);
}

TEST_F(CtlBinary, MalformedEndpointExitsTwo) {
  const CtlRun r = run({"--hub", "not-an-endpoint", "status"});
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("not-an-endpoint"), std::string::npos) << r.err;
}

TEST_F(CtlBinary, HelpExitsZeroAndDocumentsTheExitCodes) {
  const CtlRun r = run({"--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("Exit codes:"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("4  the hub replied with an error"), std::string::npos) << r.out;
  EXPECT_EQ(run({"resolve", "--help"}).code, 0);
}

TEST_F(CtlBinary, NobodyListeningExitsThreePromptly) {
  const testing::RefusingPort port;

  const CtlRun r = run({"--hub", port.endpoint(), "--timeout-ms", "200", "status"});

  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.out, "");
  EXPECT_NE(r.err.find("hub unreachable"), std::string::npos) << r.err;
  EXPECT_LT(r.elapsed, std::chrono::milliseconds{2000});
}

TEST_F(CtlBinary, SilentHubExitsThree) {
  testing::FakeHub hub([](const proto::Message&) { return std::vector<testing::Frames>{}; });

  const CtlRun r = run({"--hub", hub.endpoint(), "--timeout-ms", "200", "services"});

  EXPECT_EQ(r.code, 3);
  EXPECT_NE(r.err.find("no reply"), std::string::npos) << r.err;
}

// ------------------------------------------------------------ revision 3

std::string host_name() {
  char name[256] = {};
  return ::gethostname(name, sizeof name - 1) == 0 ? std::string(name) : std::string();
}

TEST_F(CtlBinary, ResolveHidesIsolatedInstancesUnlessAll) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun hidden = run({"--hub", hub.endpoint(), "resolve", "payments"});
  const CtlRun all = run({"--hub", hub.endpoint(), "--json", "resolve", "payments", "--all"});

  EXPECT_EQ(hidden.code, 0) << hidden.err;
  EXPECT_EQ(hidden.out.find("pay-2"), std::string::npos) << hidden.out;
  EXPECT_NE(hidden.out.find("1 isolated instance hidden (resolve --all shows it)\n"),
            std::string::npos)
      << hidden.out;
  EXPECT_EQ(all.code, 0) << all.err;
  const auto json = nlohmann::json::parse(all.out);
  ASSERT_EQ(json["instances"].size(), 3U);
  EXPECT_EQ(json["instances"][1]["health"], "isolated");
}

TEST_F(CtlBinary, ReportFailureAsksForAnAckAndExitsZeroWhenAccepted) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "report-failure", "orders", "10.0.0.1:8080",
                        "--kind", "refused", "--count", "5"});

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  const auto report = hub.sole_request<proto::FailureReport>();
  ASSERT_TRUE(report.has_value()) << hub.requests().size() << " requests";
  EXPECT_NE(report->request_id, 0U);
  ASSERT_EQ(report->signals.size(), 1U);
  const proto::FailureSignal& signal = report->signals[0];
  EXPECT_EQ(signal.service, (proto::ServiceKey{"orders", "default"}));
  EXPECT_EQ(signal.address, "10.0.0.1:8080");
  EXPECT_EQ(signal.kind, proto::FailureKind::kConnectionRefused);
  EXPECT_EQ(signal.count, 5U);
  EXPECT_EQ(signal.reporter, "cascadectl@" + host_name());
  EXPECT_EQ(r.out, report_table(signal, proto::ReportAck{report->request_id, 1, 0, 0, 1}));
}

TEST_F(CtlBinary, ReportFailureForAnUnknownAddressExitsOne) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "--json", "report-failure", "orders", "10.9.9.9:1",
                        "--kind", "timeout", "--reporter", "agent@web-3"});

  EXPECT_EQ(r.code, 1) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["unknown"], 1);
  EXPECT_EQ(json["reporter"], "agent@web-3");
  EXPECT_EQ(json["isolated"], false);
}

TEST_F(CtlBinary, ReportFailureErrorReplyExitsFour) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run(
      {"--hub", hub.endpoint(), "report-failure", "forbidden", "10.0.0.1:1", "--kind", "reset"});

  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.err, "cascadectl: hub error invalid: reports not allowed\n");
}

TEST_F(CtlBinary, ReportFailureWithAnUnknownKindExitsTwoWithoutAsking) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r =
      run({"--hub", hub.endpoint(), "report-failure", "orders", "10.0.0.1:8080", "--kind", "slow"});

  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("--kind"), std::string::npos) << r.err;
  EXPECT_TRUE(hub.requests().empty());
}

TEST_F(CtlBinary, ReportFailureWithCountZeroExitsTwo) {
  EXPECT_EQ(run({"--hub", "tcp://127.0.0.1:1", "report-failure", "orders", "10.0.0.1:8080",
                 "--kind", "timeout", "--count", "0"})
                .code,
            2);
}

TEST_F(CtlBinary, HelpDocumentsTheDefaultReporter) {
  const CtlRun r = run({"report-failure", "--help"});
  EXPECT_EQ(r.code, 0);
  EXPECT_NE(r.out.find("cascadectl@<hostname>"), std::string::npos) << r.out;
}

TEST_F(CtlBinary, MarkOutOfServiceSendsTheActorAndPrintsTheHubsMessage) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "mark-out-of-service", "orders", "orders-1",
                        "--group", "blue", "--actor", "alice@ops-1"});

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "mark_out_of_service orders/orders-1 by alice@ops-1\n");
  const auto request = hub.sole_request<proto::AdminRequest>();
  ASSERT_TRUE(request.has_value()) << hub.requests().size() << " requests";
  EXPECT_NE(request->request_id, 0U);
  EXPECT_EQ(request->op, proto::AdminOp::kMarkOutOfService);
  EXPECT_EQ(request->service, (proto::ServiceKey{"orders", "blue"}));
  EXPECT_EQ(request->instance_id, "orders-1");
}

TEST_F(CtlBinary, ActorDefaultsToUserAtHost) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "readmit", "orders", "orders-2"}, {"USER=carol"});

  EXPECT_EQ(r.code, 0) << r.err;
  ASSERT_EQ(hub.requests().size(), 1U);
  EXPECT_EQ(std::get<proto::AdminRequest>(hub.requests()[0]).actor, "carol@" + host_name());
}

TEST_F(CtlBinary, AdminRefusalExitsFourWithTheMessageOnStderr) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "remove-static", "orders", "ghost"});

  EXPECT_EQ(r.code, 4);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cascadectl: hub refused remove_static: no instance ghost in orders\n");
}

TEST_F(CtlBinary, AddStaticSendsTheInstance) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "--json", "add-static", "orders", "static-1",
                        "10.0.0.9:8080", "--weight", "30", "--zone", "eu-1c", "--status",
                        "STARTING", "--metadata", "owner=db", "tier=gold"});

  EXPECT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["op"], "add_static");
  const auto request = hub.sole_request<proto::AdminRequest>();
  ASSERT_TRUE(request.has_value()) << hub.requests().size() << " requests";
  ASSERT_TRUE(request->instance.has_value());
  EXPECT_EQ(request->instance->id, "static-1");
  EXPECT_EQ(request->instance->address, "10.0.0.9:8080");
  EXPECT_EQ(request->instance->weight, 30U);
  EXPECT_EQ(request->instance->zone, "eu-1c");
  EXPECT_EQ(request->instance->status, proto::InstanceStatus::kStarting);
  EXPECT_EQ(request->instance->metadata,
            (std::map<std::string, std::string>{{"owner", "db"}, {"tier", "gold"}}));
}

TEST_F(CtlBinary, NotifySwitchOnDefaultsToATenthAndOffSendsNoShare) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun on = run({"--hub", hub.endpoint(), "notify-switch", "on"});
  const CtlRun off = run({"--hub", hub.endpoint(), "eviction-protection", "off"});

  EXPECT_EQ(on.code, 0) << on.err;
  EXPECT_EQ(off.code, 0) << off.err;
  const auto requests = hub.requests();
  ASSERT_EQ(requests.size(), 2U);
  const auto& notify = std::get<proto::AdminRequest>(requests[0]);
  EXPECT_EQ(notify.op, proto::AdminOp::kNotifySwitch);
  EXPECT_TRUE(notify.enabled);
  EXPECT_EQ(notify.share_percent, 10U);
  const auto& protection = std::get<proto::AdminRequest>(requests[1]);
  EXPECT_EQ(protection.op, proto::AdminOp::kEvictionProtection);
  EXPECT_FALSE(protection.enabled);
}

TEST_F(CtlBinary, BadOperatorArgumentsExitTwo) {
  const std::string hub = "tcp://127.0.0.1:1";
  EXPECT_EQ(run({"--hub", hub, "eviction-protection", "maybe"}).code, 2);
  EXPECT_EQ(run({"--hub", hub, "notify-switch", "on", "--share", "0"}).code, 2);
  EXPECT_EQ(run({"--hub", hub, "notify-switch", "on", "--share", "101"}).code, 2);
  EXPECT_EQ(run({"--hub", hub, "notify-switch", "off", "--share", "20"}).code, 2);
  EXPECT_EQ(run({"--hub", hub, "mark-in-service", "orders", ""}).code, 2);
  EXPECT_EQ(run({"--hub", hub, "readmit", "", "orders-1"}).code, 2);
  EXPECT_EQ(
      run({"--hub", hub, "add-static", "orders", "s-1", "10.0.0.9:1", "--metadata", "nokey"}).code,
      2);
  EXPECT_EQ(run({"--hub", hub, "add-static", "orders", "s-1", "10.0.0.9:1", "--status", "up"}).code,
            2);
  const CtlRun empty_actor = run({"--hub", hub, "readmit", "orders", "o-1", "--actor", ""});
  EXPECT_EQ(empty_actor.code, 2);
  EXPECT_EQ(empty_actor.err,
            "cascadectl: --actor is empty\nRun with --help for more information.\n");
}

TEST_F(CtlBinary, SetRoutesSendsTheRulesInOrderWithTheirPrioritiesAndForce) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r =
      run({"--hub", hub.endpoint(), "set-routes", "orders", "--group", "blue", "--rule",
           "10:=> zone = dc1", "--rule", "force:host = 10.9.* =>", "--actor", "alice@ops-1"});

  EXPECT_EQ(r.code, 0) << r.err;
  const auto request = hub.sole_request<proto::AdminRequest>();
  ASSERT_TRUE(request.has_value()) << hub.requests().size() << " requests";
  EXPECT_EQ(request->op, proto::AdminOp::kSetRoutes);
  EXPECT_EQ(request->service, (proto::ServiceKey{"orders", "blue"}));
  EXPECT_EQ(request->actor, "alice@ops-1");
  EXPECT_EQ(request->routes,
            (std::vector<proto::RouteRuleText>{{"=> zone = dc1", 10, false, true},
                                               {"host = 10.9.* =>", 0, true, true}}));
}

TEST_F(CtlBinary, SetRoutesForceAppliesToEveryRuleAndClearSendsNone) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun forced =
      run({"--hub", hub.endpoint(), "set-routes", "orders", "--force", "--rule", "zone = a =>"});
  const CtlRun cleared = run({"--hub", hub.endpoint(), "set-routes", "orders", "--clear"});

  EXPECT_EQ(forced.code, 0) << forced.err;
  EXPECT_EQ(cleared.code, 0) << cleared.err;
  const auto requests = hub.requests();
  ASSERT_EQ(requests.size(), 2U);
  EXPECT_EQ(std::get<proto::AdminRequest>(requests[0]).routes,
            (std::vector<proto::RouteRuleText>{{"zone = a =>", 0, true, true}}));
  const auto& clear = std::get<proto::AdminRequest>(requests[1]);
  EXPECT_EQ(clear.op, proto::AdminOp::kSetRoutes);
  EXPECT_EQ(clear.service, (proto::ServiceKey{"orders", "default"}));
  EXPECT_TRUE(clear.routes.empty());
}

TEST_F(CtlBinary, SetRoutesUsageErrorsExitTwoWithoutAsking) {
  testing::FakeHub hub(testing::healthy_hub);
  const auto& ep = hub.endpoint();
  EXPECT_EQ(run({"--hub", ep, "set-routes", "orders"}).code, 2) << "neither --rule nor --clear";
  EXPECT_EQ(run({"--hub", ep, "set-routes", "orders", "--clear", "--rule", "=> zone = a"}).code, 2);
  EXPECT_EQ(run({"--hub", ep, "set-routes", "--rule", "=> zone = a"}).code, 2) << "no service";
  EXPECT_EQ(run({"--hub", ep, "set-routes", "orders", "--rule", "5:"}).code, 2);
  const CtlRun big = run({"--hub", ep, "set-routes", "orders", "--rule", "9999999999:=> zone = a"});
  EXPECT_EQ(big.code, 2);
  EXPECT_NE(big.err.find("priority out of range"), std::string::npos) << big.err;
  EXPECT_TRUE(hub.requests().empty());
}

TEST_F(CtlBinary, StatusJsonShowsIsolationAndProtection) {
  testing::FakeHub hub(testing::healthy_hub);

  const CtlRun r = run({"--hub", hub.endpoint(), "--json", "status"});

  EXPECT_EQ(r.code, 0) << r.err;
  const auto json = nlohmann::json::parse(r.out);
  EXPECT_EQ(json["isolated"], 1);
  EXPECT_EQ(json["unconfirmed"], 2);
  EXPECT_EQ(json["eviction_protection"], true);
  EXPECT_EQ(json["notify_share_percent"], 10);
}

// A hub whose config centre holds group "orders": {timeout_ms: 300 (set at
// tier 2 by hub-l2), blob: bytes 00 ff}; it accepts every config edit.
std::vector<testing::Frames> config_hub(const proto::Message& request) {
  if (const auto* admin = std::get_if<proto::AdminRequest>(&request))
    return {testing::frame_of(proto::AdminReply{admin->request_id, true, "group orders: done"})};
  const auto& ask = std::get<proto::ConfigRequest>(request);
  proto::ConfigReply reply;
  reply.request_id = ask.request_id;
  reply.group = ask.group;
  if (ask.group != "orders") {
    reply.message = "no group " + ask.group + " at hub hub-a";
    return {testing::frame_of(reply)};
  }
  reply.ok = true;
  reply.version = 77;
  reply.entries = {{"blob", std::string("\0\xff", 2), {1, "hub-a", 70}},
                   {"timeout_ms", "300", {2, "hub-l2", 9}}};
  if (!ask.key.empty())
    std::erase_if(reply.entries, [&](const auto& e) { return e.key != ask.key; });
  return {testing::frame_of(reply)};
}

TEST_F(CtlBinary, ConfigSetSendsOneEditWithTheValueOrTheFilesBytes) {
  testing::FakeHub hub(config_hub);
  EXPECT_EQ(run({"--hub", hub.endpoint(), "config", "set", "orders", "timeout_ms", "250"}).code, 0);
  const std::string bytes("\0\x01\xfe\xff", 4);
  std::ofstream(dir_ / "value.bin", std::ios::binary) << bytes;
  const auto file = (dir_ / "value.bin").string();
  EXPECT_EQ(run({"--hub", hub.endpoint(), "config", "set", "orders", "blob", "--file", file}).code,
            0);
  const auto requests = hub.requests();
  ASSERT_EQ(requests.size(), 2u);
  const auto& set = std::get<proto::AdminRequest>(requests[0]);
  EXPECT_EQ(set.op, proto::AdminOp::kConfigEdit);
  EXPECT_EQ(set.config_group, "orders");
  EXPECT_EQ(set.config_edits, (std::vector<proto::ConfigEdit>{{"timeout_ms", "250"}}));
  EXPECT_EQ(std::get<proto::AdminRequest>(requests[1]).config_edits,
            (std::vector<proto::ConfigEdit>{{"blob", bytes}}));
}

TEST_F(CtlBinary, ConfigRmAndRollbackSendTheirOperations) {
  testing::FakeHub hub(config_hub);
  EXPECT_EQ(run({"--hub", hub.endpoint(), "config", "rm", "orders", "a", "b"}).code, 0);
  EXPECT_EQ(run({"--hub", hub.endpoint(), "config", "rollback", "orders", "42"}).code, 0);
  const auto requests = hub.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(std::get<proto::AdminRequest>(requests[0]).config_edits,
            (std::vector<proto::ConfigEdit>{{"a", std::nullopt}, {"b", std::nullopt}}));
  const auto& rollback = std::get<proto::AdminRequest>(requests[1]);
  EXPECT_EQ(rollback.op, proto::AdminOp::kConfigRollback);
  EXPECT_EQ(rollback.config_version, 42u);
}

TEST_F(CtlBinary, ConfigGetPrintsTheGroupWithOriginsOrOneValue) {
  testing::FakeHub hub(config_hub);
  const CtlRun group = run({"--hub", hub.endpoint(), "config", "get", "orders"});
  EXPECT_EQ(group.code, 0) << group.err;
  EXPECT_NE(group.out.find("group orders  version 77  2 keys"), std::string::npos) << group.out;
  EXPECT_NE(group.out.find("timeout_ms  300"), std::string::npos) << group.out;
  EXPECT_NE(group.out.find("hub-l2"), std::string::npos) << group.out;
  EXPECT_NE(group.out.find("0x00ff (2 bytes)"), std::string::npos) << group.out;
  EXPECT_EQ(run({"--hub", hub.endpoint(), "config", "get", "orders", "timeout_ms"}).out, "300\n");

  const CtlRun json = run({"--hub", hub.endpoint(), "--json", "config", "get", "orders"});
  const auto parsed = nlohmann::json::parse(json.out);
  EXPECT_EQ(parsed["entries"][0]["value_hex"], "00ff");
  EXPECT_EQ(parsed["entries"][1]["hub"], "hub-l2");
  EXPECT_EQ(parsed["entries"][1]["tier"], 2);
}

TEST_F(CtlBinary, ConfigGetOfAnUnknownGroupExitsOneWithTheHubsWords) {
  testing::FakeHub hub(config_hub);
  const CtlRun r = run({"--hub", hub.endpoint(), "config", "get", "payments"});
  EXPECT_EQ(r.code, 1);
  EXPECT_EQ(r.out, "");
  EXPECT_EQ(r.err, "cascadectl: no group payments at hub hub-a\n");
}

TEST_F(CtlBinary, ConfigUsageErrorsExitTwoWithoutAsking) {
  testing::FakeHub hub(config_hub);
  const auto& ep = hub.endpoint();
  EXPECT_EQ(run({"--hub", ep, "config", "set", "orders", "k"}).code, 2) << "no value";
  EXPECT_EQ(run({"--hub", ep, "config", "set", "orders", "k", "v", "--file", "/etc/hosts"}).code,
            2);
  EXPECT_EQ(run({"--hub", ep, "config", "set", "orders", "k", "--file", "/no/such/file"}).code, 2);
  EXPECT_EQ(run({"--hub", ep, "config", "rm", "orders"}).code, 2) << "no key";
  EXPECT_EQ(run({"--hub", ep, "config", "rollback", "orders", "x"}).code, 2);
  EXPECT_EQ(run({"--hub", ep, "config"}).code, 2);
  EXPECT_TRUE(hub.requests().empty());
}

}  // namespace
}  // namespace cascade::ctl
