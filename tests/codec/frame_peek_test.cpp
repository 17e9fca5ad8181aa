// proto::peek_ref (common/frame_peek.hpp): the seq or request id a shed frame
// names, read without decoding, agrees with the decoder on every golden
// sample and never reads past a frame however it is cut.

#include "cascade/common/frame_peek.hpp"

#include <gtest/gtest.h>

#include <limits>
#include <string>

#include "cascade/common/codec.hpp"
#include "cascade/tests/codec/golden_messages.hpp"

namespace cascade::proto {
namespace {

std::string_view view(const Bytes& bytes) {
  return {bytes.data(), bytes.size()};
}

// What the full decode says the message refers to: its seq or request id.
std::uint64_t decoded_ref(const Message& message) {
  return std::visit(
      [](const auto& m) -> std::uint64_t {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, UpBeat> || std::is_same_v<T, Deregister>)
          return m.seq;
        else if constexpr (std::is_same_v<T, Query> || std::is_same_v<T, StatusRequest> ||
                           std::is_same_v<T, ServicesRequest> || std::is_same_v<T, FailureReport> ||
                           std::is_same_v<T, AdminRequest> || std::is_same_v<T, ConfigRequest>)
          return m.request_id;
        else
          return 0;
      },
      message);
}

std::vector<Message> every_sample() {
  std::vector<Message> all;
  for (const auto& s : golden::single_samples())
    all.push_back(s.message);
  for (const auto& s : golden::variant_samples())
    all.push_back(s.message);
  return all;
}

TEST(FramePeekTest, EveryGoldenSampleNamesWhatTheDecoderReads) {
  std::size_t named = 0;
  for (const auto& message : every_sample()) {
    const auto bytes = encode(message);
    const auto expected = decoded_ref(message);
    EXPECT_EQ(peek_ref(view(bytes)), expected) << view(bytes).size() << "-byte frame";
    named += expected != 0 ? 1 : 0;
  }
  EXPECT_GE(named, 10u);  // beats, deregistrations and every kind of request
}

TEST(FramePeekTest, ACutFrameNamesNothingOrTheRightThing) {
  for (const auto& message : every_sample()) {
    const auto bytes = encode(message);
    const auto expected = decoded_ref(message);
    for (std::size_t cut = 0; cut < bytes.size(); ++cut) {
      const std::string prefix(bytes.data(), cut);  // its own buffer: ASan sees any overread
      const auto ref = peek_ref(prefix);
      EXPECT_TRUE(ref == 0 || ref == expected) << "cut at " << cut << " of " << bytes.size();
    }
  }
}

TEST(FramePeekTest, EveryGoldenSampleShowsItsTypeAndABatchIsABatch) {
  for (const auto& message : every_sample())
    EXPECT_EQ(peek_type(view(encode(message))), type_of(message));
  const std::vector<Message> beats{golden::upbeat(), golden::upbeat()};
  EXPECT_EQ(peek_type(view(encode_batch(beats))), MsgType::kBatch);
  EXPECT_EQ(peek_type("\x81\xa1k\x01"), std::nullopt);
  EXPECT_EQ(peek_type("\x93\x02\x01"), std::nullopt) << "another version";
}

TEST(FramePeekTest, ABatchNamesNothing) {
  const std::vector<Message> beats{golden::upbeat(), golden::upbeat()};
  const auto bytes = encode_batch(beats);
  EXPECT_EQ(peek_ref(view(bytes)), 0u);
}

TEST(FramePeekTest, LongNodeIdsAndLargeSeqsAreRead) {
  for (std::size_t id_bytes : {1, 31, 32, 255}) {
    UpBeat beat = golden::upbeat();
    beat.node_id = std::string(id_bytes, 'n');
    beat.seq = std::numeric_limits<std::uint64_t>::max();
    EXPECT_EQ(peek_ref(view(encode(beat))), beat.seq) << id_bytes << "-byte node id";
  }
}

TEST(FramePeekTest, AnotherVersionOrTypeOrShapeNamesNothing) {
  auto beat = encode(golden::upbeat());
  auto other_version = beat;
  other_version[1] = 2;  // [fixarray, version=1, type=1, ...]: version 2
  EXPECT_EQ(peek_ref(view(other_version)), 0u);
  auto unknown_type = beat;
  unknown_type[2] = 0x7f;
  EXPECT_EQ(peek_ref(view(unknown_type)), 0u);
  EXPECT_EQ(peek_ref("\x93\x01\x01"), 0u);   // a beat of three fields has no seq
  EXPECT_EQ(peek_ref("\x81\xa1k\x01"), 0u);  // a map, not a message
  EXPECT_EQ(peek_ref(std::string_view{}), 0u);
}

}  // namespace
}  // namespace cascade::proto
