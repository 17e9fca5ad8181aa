#pragma once
// What a frame is about, read from its first fields without decoding it.
//
// A hub that sheds a frame (protocol section 5.18) answers it with `busy`
// before spending a decode on it; the answer still names the message it
// refuses, so an agent can tell its beat from its query. UpBeat and
// Deregister carry their `seq` at index 4 (after node_id and epoch), every
// request its `request_id` at index 2: a few bytes in, behind at most one
// string. Anything else (a batch, another version, a frame that is not what
// it claims) peeks as 0, the ErrorReply's "could not be read".

#include <cstdint>
#include <optional>
#include <string_view>

#include "cascade/common/protocol.hpp"

namespace cascade::proto {

// The `seq` or `request_id` the frame's message carries, or 0.
std::uint64_t peek_ref(std::string_view frame);

// The frame's type (kBatch for a batch), or nullopt when its header is not
// a protocol v1 message's: lets a reader skip decoding what it ignores.
std::optional<MsgType> peek_type(std::string_view frame);

}  // namespace cascade::proto
