// Exit-code mapping and command output, against a fake Requester (no network).

#include "tools/ctl/commands.hpp"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/tools/fake_hub.hpp"
#include "tools/ctl/render.hpp"

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

TEST(CtlExitCode, CodesAreTheDocumentedNumbers) {
  EXPECT_EQ(static_cast<int>(ExitCode::kOk), 0);
  EXPECT_EQ(static_cast<int>(ExitCode::kNotFound), 1);
  EXPECT_EQ(static_cast<int>(ExitCode::kUsage), 2);
  EXPECT_EQ(static_cast<int>(ExitCode::kUnreachable), 3);
  EXPECT_EQ(static_cast<int>(ExitCode::kHubError), 4);
}

TEST(CtlExitCode, StatusReplyIsOk) {
  EXPECT_EQ(exit_code_for(Command::kStatus, testing::canned_status(1)), ExitCode::kOk);
}

TEST(CtlExitCode, ServicesReplyIsOkEvenWhenEmpty) {
  EXPECT_EQ(exit_code_for(Command::kServices, proto::ServicesReply{}), ExitCode::kOk);
}

TEST(CtlExitCode, ResolvedServiceWithInstancesIsOk) {
  EXPECT_EQ(exit_code_for(Command::kResolve, query_reply("orders")), ExitCode::kOk);
}

TEST(CtlExitCode, ResolvedServiceWithOnlyDownInstancesIsStillOk) {
  auto reply = query_reply("orders");
  for (auto& in : reply.instances)
    in.status = proto::InstanceStatus::kDown;
  EXPECT_EQ(exit_code_for(Command::kResolve, reply), ExitCode::kOk);
}

TEST(CtlExitCode, UnknownServiceIsNotFound) {
  EXPECT_EQ(exit_code_for(Command::kResolve, query_reply("ghost")), ExitCode::kNotFound);
}

TEST(CtlExitCode, KnownServiceWithoutInstancesIsNotFound) {
  auto reply = query_reply("orders");
  reply.instances.clear();
  EXPECT_EQ(exit_code_for(Command::kResolve, reply), ExitCode::kNotFound);
}

TEST(CtlExitCode, ErrorReplyIsHubError) {
  const proto::ErrorReply error{proto::ErrorCode::kInvalid, "no", 1};
  EXPECT_EQ(exit_code_for(Command::kStatus, error), ExitCode::kHubError);
  EXPECT_EQ(exit_code_for(Command::kServices, error), ExitCode::kHubError);
  EXPECT_EQ(exit_code_for(Command::kResolve, error), ExitCode::kHubError);
}

TEST(CtlExitCode, ReplyOfTheWrongTypeIsHubError) {
  EXPECT_EQ(exit_code_for(Command::kResolve, testing::canned_status(1)), ExitCode::kHubError);
  EXPECT_EQ(exit_code_for(Command::kStatus, query_reply("orders")), ExitCode::kHubError);
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

}  // namespace
}  // namespace cascade::ctl
