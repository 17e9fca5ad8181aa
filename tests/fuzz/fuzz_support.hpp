#pragma once
// What the fuzz targets share (docs/fuzzing.md): the checks every target
// makes and the input format of the targets that drive a core through a
// session of frames.
//
// A target is one LLVMFuzzerTestOneInput. Built with CASCADE_FUZZ it is a
// libFuzzer program; otherwise replay_main.cpp runs it over its corpus and
// past findings under ctest. A broken property aborts, which both report as a
// failure of the input that was running.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::fuzz {

// The cores log bad input (rate-limited); millions of inputs would bury a finding's report.
inline const bool kLogsOff = (spdlog::set_level(spdlog::level::off), true);

[[noreturn]] inline void violated(const char* property, const char* file, int line,
                                  std::string_view detail = {}) {
  std::fprintf(stderr, "%s:%d: fuzz property violated: %s\n", file, line, property);
  if (!detail.empty())
    std::fprintf(stderr, "  %.*s\n", static_cast<int>(detail.size()), detail.data());
  std::abort();
}

// A property every input must keep; DETAIL (a string) is printed when it breaks.
#define CASCADE_FUZZ_CHECK(cond, ...) \
  ((cond) ? (void)0                   \
          : ::cascade::fuzz::violated(#cond, __FILE__, __LINE__ __VA_OPT__(, ) __VA_ARGS__))

// What a decoded item is, for messages: the type, or the failure's text.
inline std::string describe(const proto::DecodedMessage& item) {
  if (const auto* failure = std::get_if<proto::DecodeFailure>(&item)) return failure->what;
  return proto::to_string(proto::type_of(std::get<proto::Message>(item)));
}

// The messages of a decoded frame, in order; failures left out.
inline std::vector<proto::Message> messages_of(const proto::DecodedFrame& frame) {
  std::vector<proto::Message> out;
  for (const auto& item : frame.items)
    if (const auto* m = std::get_if<proto::Message>(&item)) out.push_back(*m);
  return out;
}

// Every message that leaves a core must survive the wire: encoded, it
// decodes to one message equal to it.
inline void check_round_trip(const proto::Message& message) {
  const auto frame = proto::decode_frame(proto::encode(message));
  CASCADE_FUZZ_CHECK(!frame.batched && frame.items.size() == 1);
  const auto* back = std::get_if<proto::Message>(&frame.items.front());
  CASCADE_FUZZ_CHECK(back != nullptr, proto::to_string(proto::type_of(message)) +
                                          std::string(" does not decode: ") +
                                          describe(frame.items.front()));
  CASCADE_FUZZ_CHECK(*back == message, proto::to_string(proto::type_of(message)));
}

// The same for a batch of messages sent as one frame.
inline void check_batch_round_trip(const std::vector<proto::Message>& messages) {
  const auto frame = proto::decode_frame(proto::encode_batch(messages));
  CASCADE_FUZZ_CHECK(frame.batched && frame.items.size() == messages.size());
  for (std::size_t i = 0; i < messages.size(); ++i) {
    const auto* back = std::get_if<proto::Message>(&frame.items[i]);
    CASCADE_FUZZ_CHECK(back != nullptr && *back == messages[i], describe(frame.items[i]));
  }
}

// ---------------------------------------------------------------- sessions

// The input of a target that drives a core: frames, each but the first
// preceded by 0xC1 (the one byte MessagePack never uses) and a step byte that
// says what happens before the frame arrives (the target's own meaning: time
// passing, which peer sends it).
//     FRAME (0xC1 STEP FRAME)*
// A golden sample alone is a session of one frame, and libFuzzer's cross-over
// of two inputs is a longer session.
struct SessionStep {
  std::uint8_t step = 0;  // 0 for the first frame
  std::string_view frame;
};

inline std::vector<SessionStep> split_session(std::string_view input) {
  constexpr char kSeparator = '\xC1';
  std::vector<SessionStep> steps;
  std::uint8_t step = 0;
  for (;;) {
    const auto at = input.find(kSeparator);
    steps.push_back({step, input.substr(0, at)});
    if (at == std::string_view::npos || at + 1 >= input.size()) return steps;
    step = static_cast<std::uint8_t>(input[at + 1]);
    input.remove_prefix(at + 2);
  }
}

inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

// The whole of a session target: a fresh SESSION (with a step(SessionStep)
// member) takes every step of the input.
template <typename Session>
int run_session(const std::uint8_t* data, std::size_t size) {
  Session session;
  for (const auto& step : split_session(as_text(data, size)))
    session.step(step);
  return 0;
}

}  // namespace cascade::fuzz
