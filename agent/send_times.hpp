#pragma once
// When each of a stream of numbered messages went out, kept until the answer
// that names its number: the beats' round trips (by seq; a DownBeat names it
// in ack_seq) and the first lookups' latencies (by request id).
//
// A fixed ring indexed by the number: no allocation and no search per
// message, so timing costs the sender a clock read and a store. The numbers
// of a stream are consecutive, so a slot is reused only `Slots` messages
// later; an answer whose message's slot was reused meanwhile, or that came
// already, is not timed. Thread-safety: none.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace cascade::agent {

template <std::size_t Slots>
class SendTimes {
 public:
  using Clock = std::chrono::steady_clock;

  void sent(std::uint64_t number, Clock::time_point at) { slots_[number % Slots] = {number, at}; }

  // The time from `number`'s sending to `at`, once; nullopt when it is not
  // remembered (never sent, answered already, or its slot reused).
  std::optional<Clock::duration> answered(std::uint64_t number, Clock::time_point at) {
    Slot& slot = slots_[number % Slots];
    if (slot.number != number) return std::nullopt;
    slot.number = kNone;
    return at - slot.at;
  }

 private:
  static constexpr std::uint64_t kNone = ~std::uint64_t{0};  // no message number is this
  struct Slot {
    std::uint64_t number = kNone;
    Clock::time_point at{};
  };
  std::array<Slot, Slots> slots_{};
};

}  // namespace cascade::agent
