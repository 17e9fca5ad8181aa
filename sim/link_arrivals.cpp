#include "cascade/sim/link_arrivals.hpp"

#include <algorithm>

namespace cascade::sim {

MonoTime LinkArrivals::arrival(Address from, Address to, MonoTime now, Duration delay) {
  MonoTime* last = slotted(from, to);
  if (last == nullptr) last = &mapped(from, to, now);
  *last = std::max(*last, now + delay);
  return *last;
}

MonoTime* LinkArrivals::slotted(Address from, Address to) {
  const Address owner = std::min(from, to);
  const Address peer = std::max(from, to);
  if (owner >= kSlotted) return nullptr;
  if (slots_.size() <= owner) slots_.resize(owner + 1);  // grows geometrically
  for (Peer& p : slots_[owner]) {
    if (p.peer == kNoPeer) p.peer = peer;
    if (p.peer == peer) return from == owner ? &p.up : &p.down;
  }
  return nullptr;
}

// A stale entry (its arrival passed) constrains nothing, so dropping it
// changes no delay.
MonoTime& LinkArrivals::mapped(Address from, Address to, MonoTime now) {
  if (now >= next_prune_) {
    std::erase_if(map_, [&](const auto& link) { return link.second <= now; });
    next_prune_ = now + kPruneEvery;
  }
  return map_[std::uint64_t{from} << 32 | to];
}

}  // namespace cascade::sim
