#include "cascade/sim/network.hpp"

#include <algorithm>
#include <variant>

namespace cascade::sim {

namespace {
constexpr std::int64_t kFateDropped = -1;
constexpr std::int64_t kFateCut = -2;
constexpr std::uint64_t kFnvPrime = 0x100000001b3ULL;
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
  proto::Bytes bytes = proto::encode(message);
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
  events_.after(delay, [this, from, to, bytes = std::move(bytes)] { deliver(from, to, bytes); });
}

// No earlier than the link's last arrival. Only links with a message still
// in flight constrain a send, so the map keeps only those (pruned once per
// virtual second): with one entry per link ever used it missed the cache on
// every send (10% of a 50,000-agent run).
Duration Network::in_order_delay(Address from, Address to, Duration delay) {
  const MonoTime now = events_.now();
  if (now >= next_arrival_prune_) {
    std::erase_if(last_arrival_, [&](const auto& link) { return link.second <= now; });
    next_arrival_prune_ = now + kArrivalPruneEvery;
  }
  MonoTime& last = last_arrival_[std::uint64_t{from} << 32 | to];
  last = std::max(last, now + delay);
  return last - now;
}

void Network::deliver(Address from, Address to, const proto::Bytes& bytes) {
  auto frame = proto::decode_frame(bytes);
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
