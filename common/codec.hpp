#pragma once
// MessagePack codec for protocol v1 (schemas/protocol-v1.md).
//
// A frame is either one message [version, type, ...] or a batch
// [version, 12, [message, message, ...]]. Batches let a busy sender or a proxy
// carry many beats in one ZeroMQ frame; the reply to a batch is a batch of
// replies in the same order (except queries a tiered hub forwards upstream,
// answered later on their own: schemas/protocol-v1.md, section 1). Decoding never throws and never
// trusts sizes from the wire: every malformed shape becomes a DecodeFailure with a code the peer
// can be told (ErrorReply) and a text for the log.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::proto {

using Bytes = std::string;

struct DecodeFailure {
  ErrorCode code = ErrorCode::kMalformed;
  std::string what;
  std::uint64_t ref = 0;  // seq / request id when it could be read
  bool operator==(const DecodeFailure&) const = default;
};

using DecodedMessage = std::variant<Message, DecodeFailure>;

struct DecodedFrame {
  bool batched = false;
  std::vector<DecodedMessage> items;  // one item unless batched
};

struct DecodeLimits {
  std::size_t max_frame_bytes = kDefaultMaxFrameBytes;
};

// Decodes one frame. Frame-level failures (too large, not MessagePack, unknown
// version) yield a single DecodeFailure item; inside a batch each message
// succeeds or fails on its own.
DecodedFrame decode_frame(std::string_view bytes, const DecodeLimits& limits = {});

// Encodes one message as a frame.
Bytes encode(const Message& message);
// Appends one encoded message to `out` (hot path: reuse the buffer).
void encode_into(const Message& message, Bytes& out);
// Encodes many messages as one batch frame.
Bytes encode_batch(std::span<const Message> messages);

// Fields a message of this type must have after [version, type]; any beyond
// are optional trailing fields (added in later revisions of v1).
std::size_t required_field_count(MsgType type);

// Builds the ErrorReply that tells a peer what was wrong with its message.
ErrorReply to_error_reply(const DecodeFailure& failure);

}  // namespace cascade::proto
