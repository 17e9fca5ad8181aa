#pragma once
// The load an upper tier carries, measured on a virtual clock: L1 hubs with
// their agents under one L2 (tiered), or every agent beating to one registry
// (flat). See bench/tier_bench.cpp, step [3], and docs/benchmarks.md, "Tiers".

#include <cstdint>
#include <string>
#include <vector>

#include "cascade/bench/virtual_deployment.hpp"
#include "cascade/common/clock.hpp"

namespace cascade::bench {

struct LoadConfig {
  std::size_t l1_hubs = 10;
  std::size_t agents_per_hub = 1000;
  std::size_t instances_per_agent = 100;
  std::size_t services_per_hub = 1000;  // a hub's instances spread over this many services
  // One consumer agent per L1 keeps this many services of other datacenters
  // fresh, so the uplink beats carry `uses` (0: none).
  std::size_t cross_tier_uses = 20;
  // ... and this many services that exist nowhere (waited for, never registered).
  std::size_t missing_uses = 0;
  std::size_t flat_agents = 10'000;  // the reduced flat fleet (one instance per agent)
  Duration beat{2000};
  Duration lease{6000};
  double churn_per_minute = 0.01;  // share of instances replaced per minute in the churn phase
  Duration steady{60'000};
  Duration churn{20'000};
  std::size_t max_warmup_intervals = 30;
  std::uint64_t seed = 1;
};

// What the hub under measurement (the L2, or the flat registry) received in one phase.
struct LoadPhase {
  double seconds = 0;  // virtual
  Traffic traffic;
  std::uint64_t changes = 0;  // instances replaced by agents during the phase
  // Messages received per beat interval, over the phase's whole intervals.
  std::uint64_t min_per_interval = 0;
  std::uint64_t max_per_interval = 0;
  double per_interval(Duration beat) const;
  double per_second() const;
  double bytes_in_per_second() const;
  double bytes_out_per_second() const;
};

struct LoadResult {
  bool tiered = true;
  std::size_t hubs = 0;  // L1 hubs (tiered) or 1 (flat)
  std::size_t agents = 0;
  std::size_t instances = 0;
  double warmup_seconds = 0;  // virtual, until the measured hub held everything
  LoadPhase warmup;           // what the measured hub received meanwhile
  LoadPhase steady;
  LoadPhase churn;
  std::uint64_t agent_beats_at_l1 = 0;  // tiered, steady phase: beats the L1s answered
  double agent_beat_bytes = 0;          // mean encoded agent UpBeat in steady state
  double wall_seconds = 0;              // the whole run: warm-up, phases, checks
  double churn_wall_seconds = 0;
  std::vector<std::string> problems;  // failed correctness checks; empty when all held
};

LoadResult run_tiered_load(const LoadConfig& config);
LoadResult run_flat_load(const LoadConfig& config);

}  // namespace cascade::bench
