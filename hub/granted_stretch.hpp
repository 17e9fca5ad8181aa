#pragma once
// The longest interval stretch a node may still hold, remembered across a
// crash so that a restarted hub's grace covers it.
//
// Why: the load governor (hub/load_governor.hpp) grants nodes a longer
// interval and lease when the hub falls behind (a stretch of 2, 4, 8), and a
// node keeps its grant until a reply changes it. A hub restarted from its
// store knew nothing of it and restored every node with one lease at the
// base interval: at 1M instances, stretched to 16 s, 200,000 live agents
// had no beat within the 6 s grace and expired (docs/benchmarks.md, "Hub
// restart at 1M instances"). The hub now persists the stretch any node may
// hold and restores with that many leases of grace.
//
// The stored value rises with the governor at once; it falls only when no
// node can hold more: one lease of the old stretch after the governor last
// granted it (a node granted a stretch beats within its interval and renews
// within its lease, each time taking the current grant).
//
//   if (auto store = granted.on_pass(now, governor.stretch())) persist(*store);
//   ... after a restart:
//   granted.restore(stored);  grace = lease * granted.held();
//
// Deterministic and clock-free. Thread-safety: none (the core's).

#include <cstdint>
#include <optional>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

class GrantedStretch {
 public:
  explicit GrantedStretch(Duration lease) : lease_(lease) {}

  // The governor's stretch after a pass ending at `now`; returns the value
  // to persist when the one held changed.
  std::optional<std::uint32_t> on_pass(MonoTime now, std::uint32_t stretch);
  // The value a restarted hub read from its store; a node may hold it.
  void restore(std::uint32_t stored);
  // The longest stretch a node may hold now (1: none is stretched).
  std::uint32_t held() const { return held_; }

 private:
  Duration lease_;
  std::uint32_t held_ = 1;
  // While the governor grants less than held_: when the last node granted
  // held_ has had a lease of it, and the most granted since the wait began.
  std::optional<MonoTime> lower_at_;
  std::uint32_t granted_while_waiting_ = 1;
};

}  // namespace cascade::hub
