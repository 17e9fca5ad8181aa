// HubClient against an in-process fake hub over tcp loopback.

#include "cascade/tools/ctl/hub_client.hpp"

#include <gtest/gtest.h>

#include <chrono>

#include "cascade/tests/tools/fake_hub.hpp"

namespace cascade::ctl {
namespace {

using testing::canned_query;
using testing::canned_services;
using testing::canned_status;
using testing::FakeHub;
using testing::frame_of;
using testing::Frames;
using testing::RefusingPort;

constexpr Duration kPatient{5000};  // generous: only reached when a test fails

class CtlHubClient : public ::testing::Test {
 protected:
  zmq::context_t context_;
};

TEST_F(CtlHubClient, StatusRequestGetsStatusReply) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::StatusRequest{11}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(*reply, proto::Message{canned_status(11)});
  EXPECT_EQ(client.discarded(), 0U);
}

TEST_F(CtlHubClient, ServicesRequestGetsServicesReply) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::ServicesRequest{12}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(*reply, proto::Message{canned_services(12)});
}

TEST_F(CtlHubClient, QueryForKnownServiceGetsItsInstances) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());
  const proto::Query query{13, "", {"orders", "default"}};

  const auto reply = client.request(query, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  const auto& r = std::get<proto::QueryReply>(*reply);
  EXPECT_TRUE(r.found);
  EXPECT_EQ(r.instances.size(), 2U);
  ASSERT_EQ(hub.requests().size(), 1U);
  EXPECT_EQ(hub.requests().front(), proto::Message{query});
}

TEST_F(CtlHubClient, QueryForUnknownServiceGetsNotFound) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::Query{14, "", {"orders", "blue"}}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  const auto& r = std::get<proto::QueryReply>(*reply);
  EXPECT_FALSE(r.found);
  EXPECT_TRUE(r.instances.empty());
  EXPECT_EQ(r.service, (proto::ServiceKey{"orders", "blue"}));
}

TEST_F(CtlHubClient, ErrorReplyIsTheReply) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::Query{15, "", {"forbidden", "default"}}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  const auto& e = std::get<proto::ErrorReply>(*reply);
  EXPECT_EQ(e.code, proto::ErrorCode::kInvalid);
  EXPECT_EQ(e.ref, 15U);
}

TEST_F(CtlHubClient, ErrorReplyWithUnknownRefIsAccepted) {
  FakeHub hub([](const proto::Message&) {
    return std::vector<Frames>{frame_of(proto::ErrorReply{proto::ErrorCode::kMalformed, "?", 0})};
  });
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::StatusRequest{16}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(std::get<proto::ErrorReply>(*reply).code, proto::ErrorCode::kMalformed);
}

TEST_F(CtlHubClient, ReplyForAnotherRequestIdIsSkipped) {
  FakeHub hub([](const proto::Message& request) {
    const auto id = std::get<proto::StatusRequest>(request).request_id;
    return std::vector<Frames>{frame_of(canned_status(id + 1)),
                               frame_of(proto::ErrorReply{proto::ErrorCode::kInvalid, "", id + 1}),
                               frame_of(canned_status(id))};
  });
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::StatusRequest{17}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(*reply, proto::Message{canned_status(17)});
  EXPECT_EQ(client.discarded(), 2U);
}

TEST_F(CtlHubClient, GarbageAndMultipartFramesAreSkipped) {
  FakeHub hub([](const proto::Message& request) {
    const auto id = std::get<proto::StatusRequest>(request).request_id;
    const std::string good = proto::encode(canned_status(id));
    return std::vector<Frames>{Frames{"not msgpack"}, Frames{"", good}, Frames{good}};
  });
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::StatusRequest{18}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(*reply, proto::Message{canned_status(18)});
  EXPECT_EQ(client.discarded(), 2U);
}

TEST_F(CtlHubClient, BatchedReplyIsUnwrapped) {
  FakeHub hub([](const proto::Message& request) {
    const auto id = std::get<proto::StatusRequest>(request).request_id;
    const std::vector<proto::Message> batch{canned_status(id)};
    return std::vector<Frames>{Frames{proto::encode_batch(batch)}};
  });
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::StatusRequest{19}, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(*reply, proto::Message{canned_status(19)});
}

TEST_F(CtlHubClient, OneClientServesSeveralRequests) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());

  const auto first = client.request(proto::StatusRequest{20}, kPatient);
  const auto second = client.request(proto::ServicesRequest{21}, kPatient);

  ASSERT_TRUE(first.has_value()) << client.failure();
  ASSERT_TRUE(second.has_value()) << client.failure();
  EXPECT_EQ(*second, proto::Message{canned_services(21)});
}

TEST_F(CtlHubClient, FailureReportGetsItsReportAck) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());
  const proto::FailureReport report{
      24,
      {{{"orders", "default"}, "10.0.0.1:8080", proto::FailureKind::kTimeout, "cascadectl@h", 5}},
      0};

  const auto reply = client.request(report, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(*reply, (proto::Message{proto::ReportAck{24, 1, 0, 0, 1}}));
}

TEST_F(CtlHubClient, AdminRequestGetsItsAdminReply) {
  FakeHub hub(testing::healthy_hub);
  HubClient client(context_, hub.endpoint());
  proto::AdminRequest request;
  request.request_id = 25;
  request.op = proto::AdminOp::kReadmit;
  request.actor = "alice@ops-1";
  request.service = {"orders", "default"};
  request.instance_id = "orders-2";

  const auto reply = client.request(request, kPatient);

  ASSERT_TRUE(reply.has_value()) << client.failure();
  EXPECT_EQ(
      *reply,
      (proto::Message{proto::AdminReply{25, true, "readmit orders/orders-2 by alice@ops-1"}}));
}

TEST_F(CtlHubClient, NobodyListeningGivesNoReplyAfterTheTimeout) {
  const RefusingPort port;
  HubClient client(context_, port.endpoint());

  const auto start = std::chrono::steady_clock::now();
  const auto reply = client.request(proto::StatusRequest{22}, Duration{200});
  const auto elapsed = std::chrono::steady_clock::now() - start;

  EXPECT_FALSE(reply.has_value());
  EXPECT_NE(client.failure().find("no connection"), std::string::npos) << client.failure();
  EXPECT_GE(elapsed, std::chrono::milliseconds{195});
  EXPECT_LT(elapsed, std::chrono::milliseconds{2000});
}

TEST_F(CtlHubClient, SilentHubGivesNoReplyAfterTheTimeout) {
  FakeHub hub([](const proto::Message&) { return std::vector<Frames>{}; });
  HubClient client(context_, hub.endpoint());

  const auto reply = client.request(proto::StatusRequest{23}, Duration{200});

  EXPECT_FALSE(reply.has_value());
  EXPECT_NE(client.failure().find("no reply"), std::string::npos) << client.failure();
  EXPECT_EQ(hub.requests().size(), 1U);
}

TEST_F(CtlHubClient, MalformedEndpointThrowsAtConnect) {
  EXPECT_THROW(HubClient(context_, "nonsense"), zmq::error_t);
  EXPECT_THROW(HubClient(context_, "tcp://127.0.0.1"), zmq::error_t);
}

TEST(CtlReplyMatching, ReportAcksAndAdminRepliesMatchOnRequestId) {
  EXPECT_TRUE(is_reply_to(proto::ReportAck{5, 1, 0, 0, 0}, 5));
  EXPECT_FALSE(is_reply_to(proto::ReportAck{6, 1, 0, 0, 0}, 5));
  EXPECT_TRUE(is_reply_to(proto::AdminReply{5, true, ""}, 5));
  EXPECT_FALSE(is_reply_to(proto::AdminReply{6, true, ""}, 5));
}

TEST(CtlReplyMatching, RepliesMatchOnRequestIdAndErrorsOnRefOrZero) {
  EXPECT_TRUE(is_reply_to(canned_status(5), 5));
  EXPECT_FALSE(is_reply_to(canned_status(6), 5));
  EXPECT_TRUE(is_reply_to(proto::ErrorReply{proto::ErrorCode::kInvalid, "", 5}, 5));
  EXPECT_TRUE(is_reply_to(proto::ErrorReply{proto::ErrorCode::kInvalid, "", 0}, 5));
  EXPECT_FALSE(is_reply_to(proto::ErrorReply{proto::ErrorCode::kInvalid, "", 6}, 5));
  // A request is never a reply, even with the same id.
  EXPECT_FALSE(is_reply_to(proto::StatusRequest{5}, 5));
  EXPECT_FALSE(is_reply_to(proto::FailureReport{5, {}, 0}, 5));
  EXPECT_EQ(request_id_of(proto::Query{9, "", {}}), 9U);
  EXPECT_EQ(request_id_of(proto::UpBeat{}), std::nullopt);
}

}  // namespace
}  // namespace cascade::ctl
