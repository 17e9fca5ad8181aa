#pragma once
// A mass change at one hub, for cascade_push_bench: a tenth of a large
// service's providers die at once (kill -9). Their leases run out within one
// beat interval of each other, so every tick of that interval changes the
// list and every consumer of the service is owed a push. What is measured:
// the hub's outgoing pushes against its cap (--push-max-per-second), the
// round trip of every consumer beat answered meanwhile against the steady
// state before (and of a prober's queries, from a thread of its own), and
// when the last consumer held the list without the dead.

#include <cstdint>
#include <string>
#include <vector>

#include "cascade/bench/bench_util.hpp"
#include "cascade/common/clock.hpp"

namespace cascade::bench {

struct MassChangeOptions {
  std::size_t instances = 5000;  // of the one service, one provider agent each
  std::size_t consumers = 1000;  // following it, a DEALER each
  double killed_share = 0.1;     // of the providers, killed at once
  std::size_t provider_sockets = 50;
  Duration baseline{4000};  // steady beats measured before the kill
};

struct MassChangeResult {
  std::size_t killed = 0;
  double expiry_spread_s = 0;  // first to last lease end of the killed
  std::uint64_t pushes = 0;    // the hub's counters over the change
  std::uint64_t pushes_over_rate = 0;
  std::uint64_t pushes_by_switch = 0;
  std::uint64_t updates_full = 0;  // whole lists the hub sent (replies and pushes)
  std::uint64_t updates_delta = 0;
  std::uint32_t push_cap = 0;      // pushes per second the hub allows
  double push_seconds = 0;         // first to last push the consumers received
  double peak_pushes_per_s = 0;    // the busiest 1 s window at the consumers
  Percentiles beat_rtt_before_ms;  // consumers' beats answered in the steady state
  Percentiles beat_rtt_during_ms;  // ... from the first lease end to every consumer current
  Percentiles hub_rtt_before_ms;   // the hub's answers to a prober of its own (LatencyProber)
  Percentiles hub_rtt_during_ms;
  std::size_t hub_probes_unanswered = 0;
  double last_consumer_after_last_expiry_s = 0;
};

// Throws std::runtime_error when the fleets never reach their steady state.
MassChangeResult run_mass_change(const MassChangeOptions& options,
                                 std::vector<std::string>& problems);

}  // namespace cascade::bench
