// Fuzz target: proto::decode_frame of arbitrary bytes (common/codec.cpp).
// Properties: decoding never throws or reads out of bounds (the sanitizers
// watch); every message that decodes encodes again and decodes to an equal
// message, alone and in a batch; every failure becomes an ErrorReply that
// decodes. Seeds: schemas/golden/*.msgpack.

#include "cascade/common/codec.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cascade;
  const auto frame = proto::decode_frame(fuzz::as_text(data, size));
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
