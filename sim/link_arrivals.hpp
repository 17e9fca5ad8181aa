#pragma once
// When the last message in flight on each link of a simulated network
// arrives, so that a link can keep its order (NetworkConfig::in_order).
//
// Most links join an agent to one of its few hubs, and agents have small,
// dense addresses: such a link lives in the agent's slot (found by index, no
// hashing, both directions on one cache line). Links between two large
// addresses (hub to hub), and an agent's links past its first kPeersPerSlot
// peers, live in a map that keeps only links with a message still in flight
// (pruned as time passes): with one entry per link ever used it missed the
// cache on every send (10% of a 50,000-agent run; 6.5% at 100,000 with the
// pruning).
// Thread-safety: none.

#include <array>
#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::sim {

using Address = std::uint32_t;

class LinkArrivals {
 public:
  // Addresses below this get a slot of their own (agents: 1, 2, ... in order).
  static constexpr Address kSlotted = Address{1} << 24;
  static constexpr std::size_t kPeersPerSlot = 2;

  // The arrival time of a message sent now from `from` to `to` after `delay`,
  // made no earlier than the link's last one, which it becomes.
  MonoTime arrival(Address from, Address to, MonoTime now, Duration delay);

 private:
  static constexpr Address kNoPeer = std::numeric_limits<Address>::max();
  static constexpr Duration kPruneEvery{1000};
  struct Peer {
    Address peer = kNoPeer;
    MonoTime up{};    // the slot's address -> peer
    MonoTime down{};  // peer -> the slot's address
  };
  using Slot = std::array<Peer, kPeersPerSlot>;

  MonoTime* slotted(Address from, Address to);  // nullptr: the map's
  MonoTime& mapped(Address from, Address to, MonoTime now);

  std::vector<Slot> slots_;  // by the smaller address of a link
  std::unordered_map<std::uint64_t, MonoTime> map_;
  MonoTime next_prune_{};
};

}  // namespace cascade::sim
