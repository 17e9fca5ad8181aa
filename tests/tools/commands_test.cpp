// Exit-code mapping and command output, against a fake Requester (no network).

#include "cascade/tools/ctl/commands.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "cascade/tests/tools/fake_hub.hpp"
#include "cascade/tools/ctl/render.hpp"

namespace cascade::ctl {
namespace {

// Answers with whatever it was given; remembers what it was asked.
class CannedRequester final : public Requester {
 public:
  explicit CannedRequester(std::optional<proto::Message> reply) : reply_(std::move(reply)) {}

  std::optional<proto::Message> request(const proto::Message& request, Duration timeout) override {
    requests.push_back(request);
    timeouts.push_back(timeout);
    return reply_;
  }
  std::string failure() const override { return "no reply from the hub at tcp://x within 200 ms"; }

  std::vector<proto::Message> requests;
  std::vector<Duration> timeouts;

 private:
  std::optional<proto::Message> reply_;
};

CommandSpec resolve_spec(std::string name, OutputFormat format = OutputFormat::kTable) {
  CommandSpec spec;
  spec.command = Command::kResolve;
  spec.service = {std::move(name), "default"};
  spec.format = format;
  spec.request_id = 1;
  return spec;
}

proto::QueryReply query_reply(const std::string& name) {
  return testing::canned_query(proto::Query{1, "", {name, "default"}});
}

CommandSpec spec_for(Command command) {
  CommandSpec spec;
  spec.command = command;
  return spec;
}

CommandSpec report_spec(std::uint32_t count = 1) {
  CommandSpec spec;
  spec.command = Command::kReportFailure;
  spec.service = {"orders", "default"};
  spec.failure = {"10.0.0.1:8080", proto::FailureKind::kConnectionRefused, "cascadectl@h1", count};
  spec.request_id = 41;
  return spec;
}

CommandSpec admin_spec(proto::AdminOp op, std::string instance_id = "orders-1") {
  CommandSpec spec;
  spec.command = Command::kAdmin;
  spec.service = {"orders", "blue"};
  spec.admin.op = op;
  spec.admin.actor = "alice@ops-1";
  spec.admin.instance_id = std::move(instance_id);
  spec.request_id = 42;
  return spec;
}

TEST(CtlExitCode, CodesAreTheDocumentedNumbers) {
  EXPECT_EQ(static_cast<int>(ExitCode::kOk), 0);
  EXPECT_EQ(static_cast<int>(ExitCode::kNotFound), 1);
  EXPECT_EQ(static_cast<int>(ExitCode::kUsage), 2);
  EXPECT_EQ(static_cast<int>(ExitCode::kUnreachable), 3);
  EXPECT_EQ(static_cast<int>(ExitCode::kHubError), 4);
}

TEST(CtlExitCode, StatusReplyIsOk) {
  EXPECT_EQ(exit_code_for(spec_for(Command::kStatus), testing::canned_status(1)), ExitCode::kOk);
}

TEST(CtlExitCode, ServicesReplyIsOkEvenWhenEmpty) {
  EXPECT_EQ(exit_code_for(spec_for(Command::kServices), proto::ServicesReply{}), ExitCode::kOk);
}

TEST(CtlExitCode, ResolvedServiceWithInstancesIsOk) {
  EXPECT_EQ(exit_code_for(spec_for(Command::kResolve), query_reply("orders")), ExitCode::kOk);
}

TEST(CtlExitCode, ResolvedServiceWithOnlyDownInstancesIsStillOk) {
  auto reply = query_reply("orders");
  for (auto& in : reply.instances)
    in.status = proto::InstanceStatus::kDown;
  EXPECT_EQ(exit_code_for(spec_for(Command::kResolve), reply), ExitCode::kOk);
}

TEST(CtlExitCode, UnknownServiceIsNotFound) {
  EXPECT_EQ(exit_code_for(spec_for(Command::kResolve), query_reply("ghost")), ExitCode::kNotFound);
}

TEST(CtlExitCode, KnownServiceWithoutInstancesIsNotFound) {
  auto reply = query_reply("orders");
  reply.instances.clear();
  EXPECT_EQ(exit_code_for(spec_for(Command::kResolve), reply), ExitCode::kNotFound);
}

TEST(CtlExitCode, ErrorReplyIsHubError) {
  const proto::ErrorReply error{proto::ErrorCode::kInvalid, "no", 1};
  EXPECT_EQ(exit_code_for(spec_for(Command::kStatus), error), ExitCode::kHubError);
  EXPECT_EQ(exit_code_for(spec_for(Command::kServices), error), ExitCode::kHubError);
  EXPECT_EQ(exit_code_for(spec_for(Command::kResolve), error), ExitCode::kHubError);
}

TEST(CtlExitCode, UnauthenticatedAndForbiddenHaveCodesOfTheirOwn) {
  const proto::ErrorReply unauthenticated{proto::ErrorCode::kUnauthenticated, "who?", 0};
  const proto::ErrorReply forbidden{proto::ErrorCode::kForbidden, "not yours", 1};
  EXPECT_EQ(exit_code_for(spec_for(Command::kStatus), unauthenticated), ExitCode::kUnauthenticated);
  EXPECT_EQ(exit_code_for(spec_for(Command::kResolve), forbidden), ExitCode::kForbidden);
  EXPECT_EQ(static_cast<int>(ExitCode::kUnauthenticated), 5);
  EXPECT_EQ(static_cast<int>(ExitCode::kForbidden), 6);
}

TEST(CtlExitCode, ReplyOfTheWrongTypeIsHubError) {
  EXPECT_EQ(exit_code_for(spec_for(Command::kResolve), testing::canned_status(1)),
            ExitCode::kHubError);
  EXPECT_EQ(exit_code_for(spec_for(Command::kStatus), query_reply("orders")), ExitCode::kHubError);
}

TEST(CtlCommand, RequestsCarryTheRequestIdAndService) {
  CommandSpec spec = resolve_spec("orders");
  spec.service.group = "blue";
  spec.request_id = 77;
  EXPECT_EQ(make_request(spec), proto::Message(proto::Query{77, "", {"orders", "blue"}}));
  spec.command = Command::kStatus;
  EXPECT_EQ(make_request(spec), proto::Message(proto::StatusRequest{77}));
  spec.command = Command::kServices;
  EXPECT_EQ(make_request(spec), proto::Message(proto::ServicesRequest{77}));
}

TEST(CtlCommand, ResolveSendsTheQueryWithTheTimeoutAndPrintsTheTable) {
  CannedRequester hub(proto::Message{query_reply("orders")});
  CommandSpec spec = resolve_spec("orders");
  spec.timeout = Duration{1234};

  const CommandResult result = run_command(hub, spec);

  EXPECT_EQ(result.code, ExitCode::kOk);
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out.rfind("orders (group default) version 7", 0), 0U) << result.out;
  ASSERT_EQ(hub.requests.size(), 1U);
  EXPECT_EQ(hub.requests[0], make_request(spec));
  EXPECT_EQ(hub.timeouts[0], Duration{1234});
}

TEST(CtlCommand, UnknownServiceStillPrintsTheEmptyJsonResult) {
  CannedRequester hub(proto::Message{query_reply("ghost")});

  const CommandResult result = run_command(hub, resolve_spec("ghost", OutputFormat::kJson));

  EXPECT_EQ(result.code, ExitCode::kNotFound);
  const auto json = nlohmann::json::parse(result.out);
  EXPECT_EQ(json["service"], "ghost");
  EXPECT_TRUE(json["instances"].empty());
}

TEST(CtlCommand, NoReplyIsUnreachableWithTheReasonOnStderr) {
  CannedRequester hub(std::nullopt);

  const CommandResult result = run_command(hub, resolve_spec("orders"));

  EXPECT_EQ(result.code, ExitCode::kUnreachable);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err,
            "cascadectl: hub unreachable: no reply from the hub at tcp://x within 200 ms\n");
}

// A hub whose ZAP handler refused the key: no reply, but not a silent hub.
class RefusingRequester final : public Requester {
 public:
  std::optional<proto::Message> request(const proto::Message&, Duration) override {
    return std::nullopt;
  }
  std::string failure() const override { return "the hub at tcp://x does not know this key"; }
  bool key_refused() const override { return true; }
};

TEST(CtlCommand, RefusedHandshakeIsUnauthenticatedNotUnreachable) {
  RefusingRequester hub;
  const CommandResult result = run_command(hub, resolve_spec("orders"));
  EXPECT_EQ(result.code, ExitCode::kUnauthenticated);
  EXPECT_EQ(result.err,
            "cascadectl: the hub refused this key (unauthenticated): the hub at tcp://x does not "
            "know this key\n");
}

TEST(CtlCommand, ForbiddenReplyNamesWhatWasRefused) {
  CannedRequester hub(
      proto::Message{proto::ErrorReply{proto::ErrorCode::kForbidden, "role reader", 1}});
  const CommandResult result = run_command(hub, resolve_spec("orders"));
  EXPECT_EQ(result.code, ExitCode::kForbidden);
  EXPECT_EQ(result.err,
            "cascadectl: this key may not Query at this hub (forbidden): role reader\n");
}

TEST(CtlCommand, ReloadKeysIsAnAdminRequest) {
  CommandSpec spec;
  spec.command = Command::kAdmin;
  spec.admin.op = proto::AdminOp::kReloadKeys;
  spec.admin.actor = "ops@host";
  spec.request_id = 4;
  EXPECT_EQ(check_spec(spec), "");
  const auto request = std::get<proto::AdminRequest>(make_request(spec));
  EXPECT_EQ(request.op, proto::AdminOp::kReloadKeys);
  EXPECT_EQ(request.actor, "ops@host");
}

TEST(CtlCommand, ErrorReplyGoesToStderrOnly) {
  CannedRequester hub(
      proto::Message{proto::ErrorReply{proto::ErrorCode::kInvalid, "name too long", 1}});

  const CommandResult result = run_command(hub, resolve_spec("orders", OutputFormat::kJson));

  EXPECT_EQ(result.code, ExitCode::kHubError);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "cascadectl: hub error invalid: name too long\n");
}

TEST(CtlCommand, WrongReplyTypeIsReported) {
  CannedRequester hub(proto::Message{testing::canned_status(1)});

  const CommandResult result = run_command(hub, resolve_spec("orders"));

  EXPECT_EQ(result.code, ExitCode::kHubError);
  EXPECT_EQ(result.err, "cascadectl: unexpected StatusReply in reply to Query\n");
}

TEST(CtlCommand, StatusAndServicesChooseTableOrJson) {
  CommandSpec spec;
  spec.command = Command::kStatus;
  const proto::Message status{testing::canned_status(1)};
  EXPECT_EQ(render_result(spec, status, "").out, status_table(testing::canned_status(1)));
  spec.format = OutputFormat::kJson;
  EXPECT_EQ(render_result(spec, status, "").out, status_json(testing::canned_status(1)));

  spec.command = Command::kServices;
  const proto::Message services{testing::canned_services(1)};
  EXPECT_EQ(render_result(spec, services, "").out, services_json(testing::canned_services(1)));
  spec.format = OutputFormat::kTable;
  EXPECT_EQ(render_result(spec, services, "").out, services_table(testing::canned_services(1)));
}

// ------------------------------------------------------------------ resolve

TEST(CtlExitCode, ServiceWhoseEveryInstanceIsIsolatedIsNotFound) {
  auto reply = query_reply("orders");
  for (auto& in : reply.instances)
    in.health = proto::Health::kIsolated;
  EXPECT_EQ(exit_code_for(resolve_spec("orders"), reply), ExitCode::kNotFound);
}

TEST(CtlExitCode, ResolveAllOfAnIsolatedServiceIsOk) {
  auto reply = query_reply("orders");
  for (auto& in : reply.instances)
    in.health = proto::Health::kIsolated;
  CommandSpec spec = resolve_spec("orders");
  spec.show_all = true;
  EXPECT_EQ(exit_code_for(spec, reply), ExitCode::kOk);
}

TEST(CtlExitCode, OneUnconfirmedInstanceBesideIsolatedOnesIsOk) {
  auto reply = query_reply("orders");
  reply.instances[0].health = proto::Health::kIsolated;
  reply.instances[1].health = proto::Health::kUnconfirmed;
  EXPECT_EQ(exit_code_for(resolve_spec("orders"), reply), ExitCode::kOk);
  reply.instances[1].health = proto::Health::kIsolated;
  EXPECT_EQ(exit_code_for(resolve_spec("orders"), reply), ExitCode::kNotFound);
}

TEST(CtlCommand, ResolveHidesIsolatedUnlessAllAndSaysSo) {
  CannedRequester hub(proto::Message{query_reply("payments")});
  CommandSpec spec = resolve_spec("payments");

  const CommandResult hidden = run_command(hub, spec);
  spec.show_all = true;
  const CommandResult all = run_command(hub, spec);
  spec.format = OutputFormat::kJson;
  const CommandResult all_json = run_command(hub, spec);

  EXPECT_EQ(hidden.code, ExitCode::kOk);
  EXPECT_EQ(hidden.out.find("pay-2"), std::string::npos) << hidden.out;
  EXPECT_NE(hidden.out.find("1 isolated instance hidden (resolve --all shows it)"),
            std::string::npos)
      << hidden.out;
  EXPECT_NE(all.out.find("pay-2"), std::string::npos) << all.out;
  EXPECT_EQ(all.out.find("hidden"), std::string::npos) << all.out;
  EXPECT_EQ(nlohmann::json::parse(all_json.out)["instances"].size(), 3U);
}

// ----------------------------------------------------------- report-failure

TEST(CtlReportFailure, RequestAsksForAnAckAndCarriesOneSignal) {
  const auto request = make_request(report_spec(7));

  const auto* report = std::get_if<proto::FailureReport>(&request);
  ASSERT_NE(report, nullptr);
  EXPECT_EQ(report->request_id, 41U);  // non-zero: the hub answers with a ReportAck
  EXPECT_EQ(report->hops, 0U);
  ASSERT_EQ(report->signals.size(), 1U);
  EXPECT_EQ(report->signals[0], (proto::FailureSignal{{"orders", "default"},
                                                      "10.0.0.1:8080",
                                                      proto::FailureKind::kConnectionRefused,
                                                      "cascadectl@h1",
                                                      7}));
}

TEST(CtlReportFailure, AcceptedReportExitsZeroWithTheTable) {
  CannedRequester hub(proto::Message{proto::ReportAck{41, 1, 0, 0, 1}});

  const CommandResult result = run_command(hub, report_spec(5));

  EXPECT_EQ(result.code, ExitCode::kOk);
  EXPECT_EQ(result.err, "");
  EXPECT_EQ(result.out,
            report_table(std::get<proto::FailureReport>(make_request(report_spec(5))).signals[0],
                         proto::ReportAck{41, 1, 0, 0, 1}));
}

TEST(CtlReportFailure, ForwardedReportExitsZero) {
  EXPECT_EQ(exit_code_for(report_spec(), proto::ReportAck{41, 0, 1, 0, 0}), ExitCode::kOk);
}

TEST(CtlReportFailure, UnknownAddressExitsOneAndStillPrintsTheResult) {
  CannedRequester hub(proto::Message{proto::ReportAck{41, 0, 0, 1, 0}});
  CommandSpec spec = report_spec();
  spec.format = OutputFormat::kJson;

  const CommandResult result = run_command(hub, spec);

  EXPECT_EQ(result.code, ExitCode::kNotFound);
  EXPECT_EQ(nlohmann::json::parse(result.out)["unknown"], 1);
}

TEST(CtlReportFailure, PartlyUnknownButAcceptedExitsZero) {
  EXPECT_EQ(exit_code_for(report_spec(), proto::ReportAck{41, 1, 0, 1, 0}), ExitCode::kOk);
}

TEST(CtlReportFailure, ErrorReplyExitsFour) {
  CannedRequester hub(
      proto::Message{proto::ErrorReply{proto::ErrorCode::kInvalid, "bad address", 41}});

  const CommandResult result = run_command(hub, report_spec());

  EXPECT_EQ(result.code, ExitCode::kHubError);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "cascadectl: hub error invalid: bad address\n");
}

TEST(CtlReportFailure, WrongReplyTypeExitsFour) {
  EXPECT_EQ(exit_code_for(report_spec(), proto::AdminReply{41, true, ""}), ExitCode::kHubError);
}

TEST(CtlReportFailure, ZeroCountIsAUsageError) {
  EXPECT_EQ(check_spec(report_spec(1)), "");
  EXPECT_EQ(check_spec(report_spec(0)), "--count must be at least 1");
}

TEST(CtlReportFailure, EmptyReporterAddressOrServiceIsAUsageError) {
  CommandSpec spec = report_spec();
  spec.failure.reporter = "";
  EXPECT_EQ(check_spec(spec), "--reporter is empty");
  spec = report_spec();
  spec.failure.address = "";
  EXPECT_EQ(check_spec(spec), "address is empty");
  spec = report_spec();
  spec.service.name = "";
  EXPECT_EQ(check_spec(spec), "service name is empty");
  spec = report_spec();
  spec.failure.address = "10.0.0.1:80\n";
  EXPECT_EQ(check_spec(spec), "address has a control character");
}

TEST(CtlReportFailure, DefaultReporterIsTheToolsNodeId) {
  EXPECT_EQ(default_reporter("ops-1"), "cascadectl@ops-1");
}

// -------------------------------------------------------- operator commands

TEST(CtlAdmin, MarkOutOfServiceNamesTheInstanceAndTheActor) {
  const auto request = make_request(admin_spec(proto::AdminOp::kMarkOutOfService));

  proto::AdminRequest expected;
  expected.request_id = 42;
  expected.op = proto::AdminOp::kMarkOutOfService;
  expected.actor = "alice@ops-1";
  expected.service = {"orders", "blue"};
  expected.instance_id = "orders-1";
  EXPECT_EQ(request, proto::Message{expected});
}

TEST(CtlAdmin, InstanceOperationsCarryTheirOp) {
  for (const auto op :
       {proto::AdminOp::kMarkInService, proto::AdminOp::kRemoveStatic, proto::AdminOp::kReadmit}) {
    const auto r = std::get<proto::AdminRequest>(make_request(admin_spec(op)));
    EXPECT_EQ(r.op, op);
    EXPECT_EQ(r.service, (proto::ServiceKey{"orders", "blue"}));
    EXPECT_EQ(r.instance_id, "orders-1");
    EXPECT_FALSE(r.instance.has_value());
  }
}

TEST(CtlAdmin, AddStaticCarriesTheInstanceUnderItsId) {
  CommandSpec spec = admin_spec(proto::AdminOp::kAddStatic, "static-1");
  spec.admin.instance.address = "10.0.0.9:8080";
  spec.admin.instance.weight = 30;
  spec.admin.instance.zone = "eu-1c";
  spec.admin.instance.status = proto::InstanceStatus::kStarting;
  spec.admin.instance.metadata = {{"owner", "db-team"}};

  const auto r = std::get<proto::AdminRequest>(make_request(spec));

  EXPECT_EQ(r.instance_id, "static-1");
  ASSERT_TRUE(r.instance.has_value());
  EXPECT_EQ(r.instance->id, "static-1");
  EXPECT_EQ(r.instance->address, "10.0.0.9:8080");
  EXPECT_EQ(r.instance->weight, 30U);
  EXPECT_EQ(r.instance->zone, "eu-1c");
  EXPECT_EQ(r.instance->status, proto::InstanceStatus::kStarting);
  EXPECT_EQ(r.instance->metadata, (std::map<std::string, std::string>{{"owner", "db-team"}}));
}

TEST(CtlAdmin, SwitchOperationsCarryTheStateAndNoService) {
  CommandSpec spec = admin_spec(proto::AdminOp::kEvictionProtection, "");
  spec.admin.enabled = false;
  auto r = std::get<proto::AdminRequest>(make_request(spec));
  EXPECT_EQ(r.op, proto::AdminOp::kEvictionProtection);
  EXPECT_FALSE(r.enabled);
  EXPECT_EQ(r.service, (proto::ServiceKey{"", ""}));
  EXPECT_EQ(r.instance_id, "");

  spec = admin_spec(proto::AdminOp::kNotifySwitch, "");
  spec.admin.enabled = true;
  spec.admin.share_percent = 25;
  r = std::get<proto::AdminRequest>(make_request(spec));
  EXPECT_EQ(r.op, proto::AdminOp::kNotifySwitch);
  EXPECT_TRUE(r.enabled);
  EXPECT_EQ(r.share_percent, 25U);
  EXPECT_EQ(r.service, (proto::ServiceKey{"", ""}));
}

TEST(CtlAdmin, DoneExitsZeroAndPrintsTheHubsMessage) {
  CannedRequester hub(proto::Message{proto::AdminReply{42, true, "orders-1 is OUT_OF_SERVICE"}});

  const CommandResult result = run_command(hub, admin_spec(proto::AdminOp::kMarkOutOfService));

  EXPECT_EQ(result.code, ExitCode::kOk);
  EXPECT_EQ(result.out, "orders-1 is OUT_OF_SERVICE\n");
  EXPECT_EQ(result.err, "");
}

TEST(CtlAdmin, RefusalExitsFourWithTheMessageOnStderr) {
  CannedRequester hub(proto::Message{proto::AdminReply{42, false, "no instance orders-9"}});

  const CommandResult result = run_command(hub, admin_spec(proto::AdminOp::kReadmit));

  EXPECT_EQ(result.code, ExitCode::kHubError);
  EXPECT_EQ(result.out, "");
  EXPECT_EQ(result.err, "cascadectl: hub refused readmit: no instance orders-9\n");
}

TEST(CtlAdmin, RefusalInJsonPrintsTheReplyAndTheStderrLine) {
  CannedRequester hub(proto::Message{proto::AdminReply{42, false, "no instance orders-9"}});
  CommandSpec spec = admin_spec(proto::AdminOp::kRemoveStatic);
  spec.format = OutputFormat::kJson;

  const CommandResult result = run_command(hub, spec);

  EXPECT_EQ(result.code, ExitCode::kHubError);
  EXPECT_EQ(nlohmann::json::parse(result.out),
            (nlohmann::json{
                {"op", "remove_static"}, {"ok", false}, {"message", "no instance orders-9"}}));
  EXPECT_NE(result.err, "");
}

TEST(CtlAdmin, ErrorReplyExitsFour) {
  CannedRequester hub(proto::Message{proto::ErrorReply{proto::ErrorCode::kInvalid, "no", 42}});

  const CommandResult result = run_command(hub, admin_spec(proto::AdminOp::kMarkInService));

  EXPECT_EQ(result.code, ExitCode::kHubError);
  EXPECT_EQ(result.err, "cascadectl: hub error invalid: no\n");
}

TEST(CtlAdmin, EmptyInstanceIdIsAUsageError) {
  EXPECT_EQ(check_spec(admin_spec(proto::AdminOp::kMarkOutOfService)), "");
  EXPECT_EQ(check_spec(admin_spec(proto::AdminOp::kMarkOutOfService, "")), "instance id is empty");
  EXPECT_EQ(check_spec(admin_spec(proto::AdminOp::kReadmit, "")), "instance id is empty");
}

TEST(CtlAdmin, SwitchOperationsNeedNoInstanceId) {
  EXPECT_EQ(check_spec(admin_spec(proto::AdminOp::kEvictionProtection, "")), "");
  EXPECT_EQ(check_spec(admin_spec(proto::AdminOp::kNotifySwitch, "")), "");
}

TEST(CtlAdmin, EmptyActorIsAUsageError) {
  CommandSpec spec = admin_spec(proto::AdminOp::kEvictionProtection, "");
  spec.admin.actor = "";
  EXPECT_EQ(check_spec(spec), "--actor is empty");
}

TEST(CtlAdmin, ShareOutsideOneToHundredIsAUsageError) {
  CommandSpec spec = admin_spec(proto::AdminOp::kNotifySwitch, "");
  spec.admin.enabled = true;
  spec.admin.share_percent = 0;
  EXPECT_EQ(check_spec(spec), "--share must be a percentage from 1 to 100 (got 0)");
  spec.admin.share_percent = 101;
  EXPECT_NE(check_spec(spec), "");
  spec.admin.share_percent = 100;
  EXPECT_EQ(check_spec(spec), "");
}

TEST(CtlAdmin, StaticInstanceWithoutAddressIsAUsageError) {
  CommandSpec spec = admin_spec(proto::AdminOp::kAddStatic, "static-1");
  EXPECT_EQ(check_spec(spec), "address is empty");
  spec.admin.instance.address = "10.0.0.9:8080";
  EXPECT_EQ(check_spec(spec), "");
}

TEST(CtlAdmin, MetadataEntriesAreKeyEqualsValue) {
  std::map<std::string, std::string> metadata;
  EXPECT_EQ(parse_metadata({"owner=db-team", "url=http://x/?a=b", "empty="}, metadata), "");
  EXPECT_EQ(metadata, (std::map<std::string, std::string>{
                          {"owner", "db-team"}, {"url", "http://x/?a=b"}, {"empty", ""}}));
}

TEST(CtlAdmin, BadMetadataIsAUsageError) {
  std::map<std::string, std::string> metadata;
  EXPECT_EQ(parse_metadata({"owner"}, metadata), "--metadata 'owner' is not key=value");
  metadata.clear();
  EXPECT_EQ(parse_metadata({"=x"}, metadata), "--metadata '=x' has an empty key");
  metadata.clear();
  EXPECT_EQ(parse_metadata({"a=1", "a=2"}, metadata), "--metadata key 'a' is given twice");
}

TEST(CtlAdmin, TooManyMetadataEntriesAreAUsageError) {
  CommandSpec spec = admin_spec(proto::AdminOp::kAddStatic, "static-1");
  spec.admin.instance.address = "10.0.0.9:8080";
  for (std::size_t i = 0; i <= proto::kMaxMetadataEntries; ++i)
    spec.admin.instance.metadata["k" + std::to_string(i)] = "v";
  EXPECT_NE(check_spec(spec), "");
}

TEST(CtlAdmin, DefaultActorIsUserAtHost) {
  EXPECT_EQ(default_actor("alice", "ops-1"), "alice@ops-1");
  EXPECT_EQ(default_actor("", "ops-1"), "unknown@ops-1");
}

TEST(CtlAdmin, OnlyInstanceOperationsNameAnInstance) {
  EXPECT_TRUE(proto::is_instance_op(proto::AdminOp::kAddStatic));
  EXPECT_TRUE(proto::is_instance_op(proto::AdminOp::kReadmit));
  EXPECT_FALSE(proto::is_instance_op(proto::AdminOp::kEvictionProtection));
  EXPECT_FALSE(proto::is_instance_op(proto::AdminOp::kNotifySwitch));
  EXPECT_FALSE(proto::is_instance_op(proto::AdminOp::kSetRoutes));
}

// -------------------------------------------------------------- set-routes

CommandSpec set_routes_spec(std::vector<proto::RouteRuleText> routes) {
  CommandSpec spec = admin_spec(proto::AdminOp::kSetRoutes, "");
  spec.admin.routes = std::move(routes);
  return spec;
}

proto::RouteRuleText rule_of(std::string_view arg, bool force_all = false) {
  proto::RouteRuleText rule;
  EXPECT_EQ(parse_rule(arg, force_all, rule), "") << arg;
  return rule;
}

TEST(CtlSetRoutes, RequestCarriesTheServiceAndTheRulesInOrder) {
  const std::vector<proto::RouteRuleText> rules{{"=> zone = dc1", 10, false, true},
                                                {"zone = dc3 =>", 0, true, true}};
  const auto r = std::get<proto::AdminRequest>(make_request(set_routes_spec(rules)));

  EXPECT_EQ(r.op, proto::AdminOp::kSetRoutes);
  EXPECT_EQ(r.actor, "alice@ops-1");
  EXPECT_EQ(r.service, (proto::ServiceKey{"orders", "blue"}));
  EXPECT_EQ(r.routes, rules);
  EXPECT_EQ(r.instance_id, "");
  EXPECT_FALSE(r.instance.has_value());
}

TEST(CtlSetRoutes, ClearSendsAnEmptyRuleSet) {
  CommandSpec spec = set_routes_spec({});
  spec.admin.clear_routes = true;
  EXPECT_EQ(check_spec(spec), "");
  EXPECT_TRUE(std::get<proto::AdminRequest>(make_request(spec)).routes.empty());
}

TEST(CtlSetRoutes, RuleArgumentsTakeAnOptionalPriorityAndForcePrefix) {
  EXPECT_EQ(rule_of("=> zone = dc1"), (proto::RouteRuleText{"=> zone = dc1", 0, false, true}));
  EXPECT_EQ(rule_of("10:=> zone = dc1"), (proto::RouteRuleText{"=> zone = dc1", 10, false, true}));
  EXPECT_EQ(rule_of("-5:host = a =>"), (proto::RouteRuleText{"host = a =>", -5, false, true}));
  EXPECT_EQ(rule_of("force:zone = dc3 =>"), (proto::RouteRuleText{"zone = dc3 =>", 0, true, true}));
  EXPECT_EQ(rule_of("7,force:zone = dc3 =>"),
            (proto::RouteRuleText{"zone = dc3 =>", 7, true, true}));
  EXPECT_EQ(rule_of("=> zone = dc1", /*force_all=*/true),
            (proto::RouteRuleText{"=> zone = dc1", 0, true, true}));
  // A ':' that follows no prefix is part of the rule.
  EXPECT_EQ(rule_of("=> metadata.url = http://x:80"),
            (proto::RouteRuleText{"=> metadata.url = http://x:80", 0, false, true}));
  EXPECT_EQ(rule_of("metadata.a = b:c => zone = d").text, "metadata.a = b:c => zone = d");
}

// The hub's HTTP admin API shows a service's rules as these arguments, so an
// editor can send them back unchanged.
TEST(CtlSetRoutes, RuleArgumentsReadBackAsTheRulesTheyCameFrom) {
  for (const auto& rule : {proto::RouteRuleText{"=> zone = dc1", 0, false, true},
                           proto::RouteRuleText{"=> zone = dc1", 10, false, true},
                           proto::RouteRuleText{"zone = dc3 =>", 0, true, true},
                           proto::RouteRuleText{"zone = dc3 =>", -7, true, true},
                           proto::RouteRuleText{"10:looks like a prefix", 0, false, true},
                           proto::RouteRuleText{"force:looks like one too", 0, false, true}}) {
    EXPECT_EQ(rule_of(admin::rule_argument(rule)), rule) << admin::rule_argument(rule);
  }
  EXPECT_EQ(admin::rule_argument({"zone = dc3 =>", 7, true, true}), "7,force:zone = dc3 =>");
  EXPECT_EQ(admin::rule_argument({"=> zone = dc1", 0, false, true}), "=> zone = dc1");
}

TEST(CtlSetRoutes, BadRuleArgumentsAreUsageErrors) {
  proto::RouteRuleText rule;
  EXPECT_EQ(parse_rule("10:", false, rule), "--rule '10:' has no rule text");
  EXPECT_EQ(parse_rule("", false, rule), "--rule '' has no rule text");
  EXPECT_EQ(parse_rule("3000000000:=> zone = a", false, rule),
            "--rule '3000000000:=> zone = a': priority out of range (a 32-bit integer)");
}

TEST(CtlSetRoutes, MissingRulesOrRulesWithClearAreUsageErrors) {
  EXPECT_EQ(check_spec(set_routes_spec({})),
            "set-routes needs at least one --rule (or --clear to remove every rule)");
  CommandSpec both = set_routes_spec({{"=> zone = dc1", 0, false, true}});
  both.admin.clear_routes = true;
  EXPECT_EQ(check_spec(both), "--clear and --rule exclude each other");
  CommandSpec no_service = set_routes_spec({{"=> zone = dc1", 0, false, true}});
  no_service.service.name = "";
  EXPECT_EQ(check_spec(no_service), "service name is empty");
  EXPECT_EQ(check_spec(set_routes_spec({{"=> zone = dc1", 0, false, true}})), "");
}

TEST(CtlSetRoutes, TooManyOrTooLongRulesAreUsageErrors) {
  EXPECT_EQ(check_spec(set_routes_spec(std::vector<proto::RouteRuleText>(
                proto::kMaxRouteRules + 1, {"=> zone = dc1", 0, false, true}))),
            "65 rules; at most 64 per service");
  EXPECT_EQ(check_spec(set_routes_spec(
                {{"=> zone = " + std::string(proto::kMaxRouteRuleBytes, 'a'), 0, false, true}})),
            "--rule is longer than 4096 bytes");
}

TEST(CtlSetRoutes, TheHubsRefusalOfABadRuleExitsFour) {
  CannedRequester hub(proto::Message{proto::AdminReply{
      42, false, "route #1 (priority 0, 'hots = a => zone = b'): column 1: unknown key 'hots'"}});

  const CommandResult result = run_command(hub, set_routes_spec({{"hots = a => zone = b"}}));

  EXPECT_EQ(result.code, ExitCode::kHubError);
  EXPECT_EQ(result.err,
            "cascadectl: hub refused set_routes: route #1 (priority 0, 'hots = a => zone = b'): "
            "column 1: unknown key 'hots'\n");
}

}  // namespace
}  // namespace cascade::ctl
