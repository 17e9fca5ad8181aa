#include "cascade/common/codec.hpp"

#include <limits>
#include <msgpack.hpp>
#include <stdexcept>
#include <utility>

#include "cascade/common/field_reader.hpp"
#include "cascade/common/field_writer.hpp"

namespace cascade::proto {
namespace {

using wire::DecodeError;
using wire::fail;

void pack_header(wire::Packer& pk, std::uint32_t fields, MsgType type) {
  pk.pack_array(fields + 2);
  pk.pack_uint32(kProtocolVersion);
  pk.pack_uint8(static_cast<std::uint8_t>(type));
}

void pack_message(wire::Packer& pk, const Message& message) {
  std::visit(
      [&](const auto& m) {
        pack_header(pk, wire::count_fields(m).all, type_of(message));
        wire::FieldWriter writer(pk);
        describe(writer, m);
      },
      message);
}

template <std::size_t... Alternative>
Message blank_alternative(std::size_t alternative, std::index_sequence<Alternative...>) {
  static constexpr Message (*kMake[])() = {
      []() { return Message(std::in_place_index<Alternative>); }...};
  return kMake[alternative]();
}

// A default-valued message of a type other than kBatch.
Message blank_message(MsgType type) {
  // Alternatives are in MsgType order from UpBeat = 1, skipping Batch.
  auto alternative = static_cast<std::size_t>(type) - 1;
  if (type > MsgType::kBatch) --alternative;
  return blank_alternative(alternative, std::make_index_sequence<std::variant_size_v<Message>>{});
}

// The id a peer can match an error against, read without trusting the shape.
std::uint64_t best_effort_ref(std::span<const msgpack::object> items, MsgType t) {
  const auto index = ref_field_index(t);
  if (index == 0) return 0;
  if (items.size() > index && items[index].type == msgpack::type::POSITIVE_INTEGER)
    return items[index].via.u64;
  return 0;
}

MsgType read_type(std::span<const msgpack::object> items) {
  if (items.size() < 2) fail(ErrorCode::kMalformed, "message: fewer than 2 fields");
  if (items[0].type != msgpack::type::POSITIVE_INTEGER)
    fail(ErrorCode::kMalformed, "message: version is not an unsigned integer");
  if (items[0].via.u64 != kProtocolVersion)
    fail(ErrorCode::kUnknownVersion,
         "unsupported protocol version " + std::to_string(items[0].via.u64));
  if (items[1].type != msgpack::type::POSITIVE_INTEGER)
    fail(ErrorCode::kMalformed, "message: type is not an unsigned integer");
  const auto t = items[1].via.u64;
  if (t < 1 || t > kMaxMsgType)
    fail(ErrorCode::kUnknownType, "unknown message type " + std::to_string(t));
  return static_cast<MsgType>(t);
}

Message read_body(MsgType type, const msgpack::object& whole) {
  if (type == MsgType::kBatch) fail(ErrorCode::kMalformed, "a batch cannot be nested");
  auto message = blank_message(type);
  std::visit(
      [&](auto& m) {
        wire::FieldReader reader(whole, to_string(type));
        reader.skip(2);  // version and type
        describe(reader, m);
      },
      message);
  return message;
}

DecodedMessage decode_message(const msgpack::object& o) {
  std::span<const msgpack::object> items;
  MsgType type{};
  try {
    items = wire::as_array(o, "message");
    type = read_type(items);
  } catch (const DecodeError& e) {
    return DecodeFailure{e.code, e.what, 0};
  }
  try {
    return read_body(type, o);
  } catch (const DecodeError& e) {
    return DecodeFailure{e.code, e.what, best_effort_ref(items, type)};
  }
}

msgpack::unpack_limit wire_limits(std::size_t frame_bytes, std::size_t max_frame_bytes) {
  // Every element takes at least one byte, so no array may claim more items
  // than the frame has bytes; the parser reserves memory per claimed item
  // before reading any, so this bound is what keeps a 35-byte frame from
  // reserving a gigabyte. Strings are taken (referenced in the frame) only
  // once all their bytes are present, so they (and byte strings, revision 6)
  // may be checked against the frame limit. No field is an ext.
  return msgpack::unpack_limit(/*array=*/frame_bytes, /*map=*/kMaxMetadataEntries * 16,
                               /*str=*/max_frame_bytes, /*bin=*/max_frame_bytes, /*ext=*/0,
                               /*depth=*/8);
}

// The decoding zone's first chunk, kept between frames.
constexpr std::size_t kZoneChunkBytes = 256 * 1024;

// Strings and byte strings stay in the frame's buffer (the parser's
// reference callback: true = do not copy).
bool reference_in_place(msgpack::type::object_type /*type*/, std::size_t /*length*/,
                        void* /*user_data*/) {
  return true;
}

DecodedFrame single_failure(ErrorCode code, std::string what) {
  DecodedFrame frame;
  frame.items.emplace_back(DecodeFailure{code, std::move(what), 0});
  return frame;
}

}  // namespace

DecodedFrame decode_frame(std::string_view bytes, const DecodeLimits& limits) {
  if (bytes.size() > limits.max_frame_bytes)
    return single_failure(ErrorCode::kTooLarge, "frame of " + std::to_string(bytes.size()) +
                                                    " bytes exceeds the limit of " +
                                                    std::to_string(limits.max_frame_bytes));
  // One zone per thread, cleared per frame, its first chunk kept: a batch of
  // 64 beats fits in it, so a frame allocates nothing for its objects (with
  // 8 KiB chunks a registration batch took ~6 and freed them again, ~3% of a
  // registration wave's serving thread). Strings point into `bytes` instead
  // of being copied into the zone: decoded messages copy what they keep
  // before this function returns.
  static thread_local msgpack::zone zone(kZoneChunkBytes);
  zone.clear();
  msgpack::object root_object;
  try {
    std::size_t offset = 0;
    bool referenced = false;
    root_object =
        msgpack::unpack(zone, bytes.data(), bytes.size(), offset, referenced, reference_in_place,
                        nullptr, wire_limits(bytes.size(), limits.max_frame_bytes));
    if (offset != bytes.size())
      return single_failure(ErrorCode::kMalformed, "trailing bytes after the message");
  } catch (const msgpack::array_size_overflow&) {
    return single_failure(ErrorCode::kMalformed, "an array claims more items than the frame holds");
  } catch (const msgpack::size_overflow& e) {
    return single_failure(ErrorCode::kTooLarge,
                          std::string("an element exceeds a limit: ") + e.what());
  } catch (const std::exception& e) {
    return single_failure(ErrorCode::kMalformed, std::string("not valid MessagePack: ") + e.what());
  }
  const msgpack::object& root = root_object;
  try {
    auto items = wire::as_array(root, "message");
    if (read_type(items) != MsgType::kBatch) return DecodedFrame{false, {decode_message(root)}};
    if (items.size() < 3) fail(ErrorCode::kMalformed, "batch: too few fields");
    auto inner = wire::as_array(items[2], "batch");
    if (inner.size() > kMaxBatchMessages)
      fail(ErrorCode::kTooLarge, "batch holds too many messages");
    DecodedFrame frame{true, {}};
    frame.items.reserve(inner.size());
    for (const auto& m : inner)
      frame.items.push_back(decode_message(m));
    return frame;
  } catch (const DecodeError& e) {
    return single_failure(e.code, e.what);
  }
}

void encode_into(const Message& message, Bytes& out) {
  wire::StringSink sink{out};
  wire::Packer pk(sink);
  pack_message(pk, message);
}

Bytes encode(const Message& message) {
  Bytes out;
  encode_into(message, out);
  return out;
}

Bytes encode_batch(std::span<const Message> messages) {
  Bytes out;
  wire::StringSink sink{out};
  wire::Packer pk(sink);
  pack_header(pk, 1, MsgType::kBatch);
  pk.pack_array(static_cast<std::uint32_t>(messages.size()));
  for (const auto& m : messages)
    encode_into(m, out);
  return out;
}

std::size_t required_field_count(MsgType type) {
  if (type == MsgType::kBatch) return 1;
  return std::visit([](const auto& m) -> std::size_t { return wire::count_fields(m).required; },
                    blank_message(type));
}

ErrorReply to_error_reply(const DecodeFailure& failure) {
  return ErrorReply{failure.code, clip_message(failure.what), failure.ref};
}

}  // namespace cascade::proto
