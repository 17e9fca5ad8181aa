#include "cascade/sim/network.hpp"

#include <algorithm>
#include <stdexcept>
#include <variant>

namespace cascade::sim {

namespace {
constexpr std::int64_t kFateDropped = -1;
constexpr std::int64_t kFateCut = -2;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
// A slot's buffer past this is given back when delivered: a beat and its
// reply take tens of bytes, a registration wave's full lists tens of
// kilobytes, which every slot they passed would otherwise keep (at 20,000
// agents after the wave: 44 MiB more heap than unpooled with 64 KiB kept, 12 with 4).
constexpr std::size_t kKeptBufferBytes = 4 * 1024;
}  // namespace

Network::Network(NetworkConfig config, std::uint64_t seed, EventQueue& events, Receiver receiver)
    : config_(config), rng_(seed), events_(events), receiver_(std::move(receiver)) {}

void Network::cut_both_ways(Address a, Address b) {
  cut(a, b);
  cut(b, a);
}

void Network::heal_both_ways(Address a, Address b) {
  heal(a, b);
  heal(b, a);
}

void Network::send(Address from, Address to, const proto::Message& message) {
  ++stats_.sent;
  proto::Bytes& bytes = scratch_;
  bytes.clear();
  proto::encode_into(message, bytes);
  stats_.bytes += bytes.size();
  if (tap_) tap_(from, to, bytes.size());
  if (is_cut(from, to)) {
    ++stats_.cut;
    trace(from, to, bytes, kFateCut);
    return;
  }
  // Draw the delay even for a dropped message, so that changing the drop
  // probability does not shift every later delay of the run.
  bool lost = rng_.unit() < config_.drop_probability;
  Duration delay{rng_.uniform(config_.min_delay.count(), config_.max_delay.count())};
  if (script_) {
    const Fault fault = script_(from, to, message);
    if (fault.delay) delay = *fault.delay;
    lost = fault.lose || (lost && !fault.delay);
  }
  if (lost) {
    ++stats_.dropped;
    trace(from, to, bytes, kFateDropped);
    return;
  }
  if (config_.in_order) delay = in_order_delay(from, to, delay);
  trace(from, to, bytes, delay.count());
  if (remote_ && remote_(to)) {
    cross(from, to, delay);
    return;
  }
  events_.after(delay, [this, slot = hold(from, to, scratch_)] { deliver(slot); });
}

void Network::cross(Address from, Address to, Duration delay) {
  if (delay < kMinCrossingDelay)
    throw std::logic_error("a message between partitions needs a delay of at least 1 ms");
  if (outbox_used_ == outbox_.size()) outbox_.emplace_back();
  Crossing& out = outbox_[outbox_used_++];
  out.arrival = events_.now() + delay;
  out.from = from;
  out.to = to;
  out.bytes.swap(scratch_);
}

void Network::accept(Crossing& crossing) {
  const std::uint32_t slot = hold(crossing.from, crossing.to, crossing.bytes);
  events_.at(crossing.arrival, [this, slot] { deliver(slot); });
}

// The message's bytes move into a free slot (their buffer swapped with the
// slot's, so neither allocates once warm); the event captures 12 bytes,
// which std::function keeps without allocating either.
std::uint32_t Network::hold(Address from, Address to, proto::Bytes& bytes) {
  std::uint32_t slot;
  if (free_slots_.empty()) {
    slot = static_cast<std::uint32_t>(in_flight_.size());
    in_flight_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  InFlight& held = in_flight_[slot];
  held.from = from;
  held.to = to;
  held.bytes.swap(bytes);
  return slot;
}

Duration Network::in_order_delay(Address from, Address to, Duration delay) {
  const MonoTime now = events_.now();
  return arrivals_.arrival(from, to, now, delay) - now;
}

void Network::deliver(std::uint32_t slot) {
  InFlight& held = in_flight_[slot];
  const Address from = held.from;
  const Address to = held.to;
  // Decoded (owning its strings) before the slot is freed: what the receiver
  // sends may take the slot again.
  auto frame = proto::decode_frame(held.bytes);
  if (held.bytes.capacity() > kKeptBufferBytes) proto::Bytes{}.swap(held.bytes);
  free_slots_.push_back(slot);
  for (const auto& item : frame.items) {
    if (const auto* message = std::get_if<proto::Message>(&item)) {
      ++stats_.delivered;
      receiver_(from, to, *message);
    } else {
      ++stats_.decode_failures;
    }
  }
}

void Network::trace(Address from, Address to, const proto::Bytes& bytes, std::int64_t fate) {
  auto mix_u64 = [this](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      trace_hash_ ^= (v >> (8 * i)) & 0xff;
      trace_hash_ *= kFnvPrime;
    }
  };
  mix_u64(static_cast<std::uint64_t>(to_ms(events_.now())));
  mix_u64(from);
  mix_u64(to);
  mix_u64(static_cast<std::uint64_t>(fate));
  mix_u64(bytes.size());
  for (unsigned char c : bytes) {
    trace_hash_ ^= c;
    trace_hash_ *= kFnvPrime;
  }
}

}  // namespace cascade::sim
