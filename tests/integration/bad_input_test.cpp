// Bad input on the hub's port: bytes that are not ZeroMQ, frames too large,
// frames that are not MessagePack or not protocol v1. The hub answers what it
// can with a typed ErrorReply, counts it, and keeps serving everyone.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <random>

#include "cascade/common/codec.hpp"
#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"
#include "cascade/tests/integration/raw_connection.hpp"

namespace cascade::integration {
namespace {

constexpr std::size_t kMaxFrameBytes = 4096;

class IntegrationBadInput : public ClusterTest {
 protected:
  void SetUp() override {
    HubOptions options;
    options.extra = {"--max-frame-bytes", std::to_string(kMaxFrameBytes)};
    hub_ = start_hub(options);
    probe_ = std::make_unique<HubProbe>(hub_.endpoint);
    decode_errors_before_ = decode_errors();
  }

  std::uint64_t decode_errors() {
    const auto status = probe_->status(kPatience);
    EXPECT_TRUE(status) << "the hub stopped answering status requests";
    return status ? counter(*status, "decode_errors").value_or(0) : 0;
  }

  // Sends one frame on a fresh connection and returns the single reply.
  std::optional<proto::Message> reply_to(const std::string& frame) {
    HubProbe peer(hub_.endpoint);
    peer.send_frames({frame});
    const auto reply = peer.receive_frame(kPatience);
    if (!reply) return std::nullopt;
    auto decoded = proto::decode_frame(*reply);
    if (decoded.batched || decoded.items.size() != 1) return std::nullopt;
    if (auto* m = std::get_if<proto::Message>(&decoded.items.front())) return *m;
    return std::nullopt;
  }

  void expect_error_reply(const std::string& frame, proto::ErrorCode code) {
    const auto reply = reply_to(frame);
    ASSERT_TRUE(reply) << "no decodable reply";
    const auto* error = std::get_if<proto::ErrorReply>(&*reply);
    ASSERT_NE(error, nullptr) << "reply is a " << proto::to_string(proto::type_of(*reply));
    EXPECT_EQ(error->code, code) << proto::to_string(error->code) << ": " << error->message;
  }

  void expect_still_serving() {
    EXPECT_TRUE(hub_.process->running()) << hub_.process->exit_status()->describe();
    HubProbe fresh(hub_.endpoint);
    const auto status = fresh.status(kPatience);
    ASSERT_TRUE(status) << "the hub stopped serving";
    EXPECT_EQ(status->hub_id, "hub-1");
  }

  RunningHub hub_;
  std::unique_ptr<HubProbe> probe_;
  std::uint64_t decode_errors_before_ = 0;
};

std::string random_bytes(std::mt19937& rng, std::size_t n) {
  std::uniform_int_distribution<int> byte(0, 255);
  std::string out(n, '\0');
  for (auto& c : out)
    c = static_cast<char>(byte(rng));
  return out;
}

TEST_F(IntegrationBadInput, GarbageBytesOnARawTcpConnectionDoNotStopTheHub) {
  std::mt19937 rng(20240601);  // fixed: the same garbage every run
  const int port = port_of(hub_.endpoint);
  // A valid ZMTP 3 signature (0xFF, 8 bytes, 0x7F) then nonsense, and pure noise.
  const std::string zmtp_signature = std::string("\xff\0\0\0\0\0\0\0\x01\x7f", 10);
  const std::vector<std::string> attacks = {
      random_bytes(rng, 64 * 1024),
      zmtp_signature + random_bytes(rng, 4096),
      zmtp_signature + std::string("\x03\x01", 2) + random_bytes(rng, 4096),
      std::string("GET / HTTP/1.1\r\nHost: hub\r\n\r\n"),
  };
  for (const auto& attack : attacks) {
    RawConnection connection(port);
    ASSERT_TRUE(connection.connected());
    connection.write(attack);
    // Most garbage makes ZeroMQ hang up; either way the hub has seen it by then.
    connection.closed_by_peer_within(Millis{500});
    expect_still_serving();
  }
}

TEST_F(IntegrationBadInput, OversizedFrameGetsATooLargeErrorAndIsCounted) {
  expect_error_reply(std::string(kMaxFrameBytes + 100, 'x'), proto::ErrorCode::kTooLarge);
  EXPECT_EQ(decode_errors(), decode_errors_before_ + 1);
  expect_still_serving();
}

TEST_F(IntegrationBadInput, FrameFarBeyondTheLimitDropsOnlyThatConnection) {
  // Larger than the transport limit (max frame + 1 KiB): ZeroMQ drops the
  // connection before the hub sees the frame, so no reply.
  HubProbe peer(hub_.endpoint);
  peer.send_frames({std::string(16 * kMaxFrameBytes, 'x')});
  expect_still_serving();
  // The same peer reconnects and is served again.
  EXPECT_TRUE(poll_until([&] { return peer.status(Millis{500}).has_value(); }, kPatience));
}

TEST_F(IntegrationBadInput, MalformedMessagePackGetsAMalformedErrorAndIsCounted) {
  const std::vector<std::string> frames = {
      std::string("\xc1", 1),                  // a byte MessagePack never uses
      std::string("\x93\x01\x07", 3),          // an array of 3 with only 2 elements
      std::string("\xa5hello", 6),             // a string, not a message array
      std::string("\x92\x01\x07", 3),          // StatusRequest without its request id
      std::string("\x93\x01\x07\x05\x00", 5),  // trailing bytes after the message
      std::string(),                           // an empty frame
  };
  for (const auto& frame : frames) {
    SCOPED_TRACE("frame of " + std::to_string(frame.size()) + " bytes");
    expect_error_reply(frame, proto::ErrorCode::kMalformed);
  }
  EXPECT_EQ(decode_errors(), decode_errors_before_ + frames.size());
  expect_still_serving();
}

TEST_F(IntegrationBadInput, UnknownProtocolVersionGetsAnUnknownVersionError) {
  // [2, 7, 42]: a StatusRequest of protocol version 2.
  expect_error_reply(std::string("\x93\x02\x07\x2a", 4), proto::ErrorCode::kUnknownVersion);
  EXPECT_EQ(decode_errors(), decode_errors_before_ + 1);
  expect_still_serving();
}

TEST_F(IntegrationBadInput, BatchWithOneBadMessageGetsAReplyForEachMessage) {
  // [1, 12, [[1, 7, 5], [2, 7, 6]]]: a good StatusRequest, then one of version 2.
  const std::string batch("\x93\x01\x0c\x92\x93\x01\x07\x05\x93\x02\x07\x06", 12);
  HubProbe peer(hub_.endpoint);
  peer.send_frames({batch});
  const auto reply = peer.receive_frame(kPatience);
  ASSERT_TRUE(reply);
  const auto decoded = proto::decode_frame(*reply);
  ASSERT_TRUE(decoded.batched);
  ASSERT_EQ(decoded.items.size(), 2u);
  const auto* good = std::get_if<proto::Message>(&decoded.items[0]);
  ASSERT_NE(good, nullptr);
  ASSERT_TRUE(std::holds_alternative<proto::StatusReply>(*good));
  EXPECT_EQ(std::get<proto::StatusReply>(*good).request_id, 5u);
  const auto* bad = std::get_if<proto::Message>(&decoded.items[1]);
  ASSERT_NE(bad, nullptr);
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(*bad));
  EXPECT_EQ(std::get<proto::ErrorReply>(*bad).code, proto::ErrorCode::kUnknownVersion);
  EXPECT_EQ(decode_errors(), decode_errors_before_ + 1);
}

}  // namespace
}  // namespace cascade::integration
