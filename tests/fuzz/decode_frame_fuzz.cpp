// Fuzz target: proto::decode_frame of arbitrary bytes (common/codec.cpp).
// Properties: decoding never throws or reads out of bounds (the sanitizers
// watch); every message that decodes encodes again and decodes to an equal
// message, alone and in a batch; every failure becomes an ErrorReply that
// decodes; the result depends on the bytes alone. Seeds: schemas/golden/*.msgpack.

#include "cascade/common/codec.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

// A frame of an array of 256 copies of one MessagePack value: decoding it
// fills the decoder's arena (its first 4 KiB: 16-byte objects) with objects of that type.
std::string filler(std::string_view value) {
  std::string frame{'\xDC', '\x01', '\x00'};
  for (int i = 0; i < 256; ++i)
    frame.append(value);
  return frame;
}

bool same(const proto::DecodedFrame& a, const proto::DecodedFrame& b) {
  return a.batched == b.batched && a.items == b.items;
}

// The decoder keeps its MessagePack arena from frame to frame (codec.cpp), so
// a read past the end of an array finds what an earlier frame left there,
// inside memory the sanitizers see as valid. Decoding the input again after
// frames that leave strings and integers behind shows such a read: the
// results differ.
void check_depends_on_bytes_alone(std::string_view bytes, const proto::DecodedFrame& first) {
  static const std::string strings = filler("\xA1x");  // "x"
  static const std::string integers = filler("\x05");  // 5
  for (const auto* stale : {&strings, &integers}) {
    (void)proto::decode_frame(*stale);
    CASCADE_FUZZ_CHECK(same(proto::decode_frame(bytes), first));
  }
}

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cascade;
  const auto bytes = fuzz::as_text(data, size);
  const auto frame = proto::decode_frame(bytes);
  fuzz::check_depends_on_bytes_alone(bytes, frame);
  CASCADE_FUZZ_CHECK(!frame.items.empty() || frame.batched);
  CASCADE_FUZZ_CHECK(frame.items.size() <= proto::kMaxBatchMessages);
  for (const auto& item : frame.items) {
    if (const auto* message = std::get_if<proto::Message>(&item))
      fuzz::check_round_trip(*message);
    else
      fuzz::check_round_trip(proto::to_error_reply(std::get<proto::DecodeFailure>(item)));
  }
  if (frame.batched) fuzz::check_batch_round_trip(fuzz::messages_of(frame));
  return 0;
}
