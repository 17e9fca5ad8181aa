#pragma once
// The ten-datacenter scenario of issue 16 (docs/benchmarks.md, "Ten
// datacenters, three tiers (simulation)"), shared by cascade_scale_sim_bench
// (full scale) and tests/sim/scale_sim_test.cpp (a few thousand agents).
//
// Topology (a TieredWorld): `datacenters` datacenters of `l1_per_dc` L1 hubs,
// spread over `regions` regions of `l2_per_region` L2 hubs, under `l3_hubs`
// L3 hubs. Every hub beats its tier to every hub above it (upstream mode
// `all`, as deploy/topologies/two-dc does), so each L2 holds its region and
// each L3 everything. Every agent is a real AgentCore with its own beat and
// lease: a provider registers one instance of a service of its datacenter; a
// consumer uses
// services of its datacenter and some use one of the `cross_dc_share` of
// services used from other datacenters. Every agent beats to the first L1
// of its datacenter and fails over to the second, the product's default
// (hub mode `failover`, as deploy/tiers-demo.sh starts its agents). The
// network loses and delays messages but keeps each link in order, as the
// product's ZeroMQ-over-TCP connections do (NetworkConfig::in_order).
//
// Phases, in order (churn runs from its phase to the end):
//   registration  every agent starts within one beat interval
//   steady        nothing changes
//   churn         `churn_per_minute` of the providers replaced per minute
//                 (half killed, half stopped; each replaced by a new agent
//                 with a new instance of the same service)
//   l2-restart    an L2 hub crashes, losing its unflushed batch, and restarts
//   dc-cut        a datacenter's L1s are cut from their region's L2s for
//                 two L2 leases, then healed
//   l1-restart    an L1 hub crashes and restarts
//   settle        churn stops; one zombie bound passes
//
// Measured: messages and bytes in and out of each tier, time inside each
// tier's cores, for every change the time until every consumer of the
// service held it (ChangeTracker), instances still held anywhere past their
// zombie bound, and live instances missing from their datacenter's L1s (at
// every audit) and from any hub or consumer at the end.
// The world runs hubs and agents in lock step, the hubs on a second thread
// (ScaleConfig::partitions; sim/tiered_world.hpp): the tracker follows the
// agents' side only, traffic is counted by the sender's side, and every
// scenario action (churn, crashes, cuts, audits) runs between two windows.
// Thread-safety: one thread drives run(); the world's worker is its own.

#include <array>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cascade/common/random.hpp"
#include "cascade/sim/core_time.hpp"
#include "cascade/sim/tiered_world.hpp"

namespace cascade::sim {

class ChangeTracker;

struct ScaleShape {
  std::size_t datacenters = 10;
  std::size_t l1_per_dc = 2;
  std::size_t regions = 2;  // datacenters are split evenly between them
  std::size_t l2_per_region = 2;
  std::size_t l3_hubs = 2;
  std::size_t agents = 1'000'000;
  std::size_t services = 10'000;     // spread evenly over the datacenters
  double cross_dc_share = 0.05;      // of the services, each used from other datacenters
  std::size_t consumer_every = 10;   // one agent in this many is a consumer
  std::size_t own_uses = 2;          // services of its own datacenter each consumer uses
  std::size_t cross_user_every = 4;  // one consumer in this many also uses a cross-dc service
};

// The product's defaults: beats 2 s, L1 lease 3 beats; upper leases grow
// upwards (so an upper tier never expires a live lower one) and uplinks beat
// twice per interval.
struct ScaleTiming {
  Duration beat{2000};
  double loss = 0.01;
  Duration max_delay{50};
  Duration l1_lease() const { return 3 * beat; }
  Duration l2_lease() const { return 9 * beat / 2; }
  Duration l3_lease() const { return 6 * beat; }
  // A change at an L1 reaches every consumer: pushed up twice, pulled down
  // three times, each exchange possibly losing one round trip (as
  // tests/sim/tier_fleet.hpp derives it).
  Duration cross_tier_bound() const;
  // A crashed agent's instance is gone from every hub and consumer within this.
  Duration zombie_bound() const { return max_delay + l1_lease() + cross_tier_bound(); }
};

struct ScalePhases {
  Duration registration{30'000};
  Duration steady{60'000};
  Duration churn{60'000};
  double churn_per_minute = 0.01;  // of the providers
  Duration l2_restart{30'000};     // the phase, from the crash
  Duration l2_downtime{5000};
  Duration cut_leases_x2{0};    // 0: two L2 leases (the cut)
  Duration after_heal{30'000};  // the dc-cut phase runs on this long after the heal
  Duration l1_restart{30'000};
  Duration l1_downtime{2000};
  Duration audit_interval{10'000};  // how often live instances and zombies are checked
};

struct ScaleConfig {
  std::uint64_t seed = 1;
  ScaleShape shape{};
  ScaleTiming timing{};
  ScalePhases phases{};
  bool time_cores = false;  // report the time inside each tier's cores
  // The bench runs the hubs and the agents in lock step on two threads
  // (TieredWorld); one thread gives the same run.
  Partitions partitions = Partitions::kLockStepThreaded;
  // Lock step: this share of the L1 hubs (the first datacenters') runs in
  // the agents' partition instead of the hubs', for a run whose hubs' thread
  // keeps the agents' waiting (the bench's threads line says which waits).
  // None by default: since a hub keeps routes to readers only, the agents'
  // thread is the busier one (docs/benchmarks.md).
  double l1_share_beside_agents = 0.0;
};

// What crossed the links of one tier: messages a hub of that tier received
// (from the tier below, or from the agents for L1) and sent back down, and
// the exchanges with the tier above as seen from there (the tier above counts them).
struct TierTraffic {
  std::uint64_t messages_in = 0;
  std::uint64_t messages_out = 0;
  std::uint64_t bytes_in = 0;
  std::uint64_t bytes_out = 0;
};

inline constexpr std::size_t kTiers = 3;

TierTraffic plus(const TierTraffic& a, const TierTraffic& b);
TierTraffic minus(const TierTraffic& a, const TierTraffic& b);
CoreTime minus(const CoreTime& a, const CoreTime& b);

struct PhaseReport {
  std::string name;
  Duration length{0};
  std::array<TierTraffic, kTiers> traffic{};  // by tier - 1
  std::array<CoreTime, kTiers> hub_time{};    // by tier - 1
  CoreTime agent_time{};
  // Threaded lock step: the phase's milliseconds, and those in which the
  // agents' partition finished first and waited for the hubs'.
  LockStep::Balance threads{};
  std::size_t changes = 0;               // instances added or removed in the phase
  std::vector<double> convergence_ms{};  // of those every consumer saw
  std::size_t unseen = 0;                // changes some consumer never saw
  std::size_t undone = 0;                // additions removed again before every consumer saw them
  std::size_t late = 0;                  // seen by every consumer, after their deadline
};

struct ScaleReport {
  std::vector<PhaseReport> phases;
  std::size_t providers = 0;  // at the end
  std::size_t consumers = 0;
  std::size_t hubs = 0;
  std::size_t registration_ms = 0;  // until every L3 held every instance (0: never)
  std::size_t zombies = 0;          // removed instances held by a hub past their deadline
  std::size_t zombie_caches = 0;    // removals a consumer still had not seen past their deadline
  std::size_t lost_at_l1 = 0;       // live registered instances missing from their L1s, distinct
  std::size_t lost_above = 0;       // live instances an up L2 or L3 lacked at the end
  std::size_t consumers_off_live =
      0;  // (consumer, service) pairs not holding the live set at the end
  std::size_t audits = 0;
  std::vector<std::string> examples{};  // the first few failures found, for the messages
  std::uint64_t trace_hash = 0;
  std::uint64_t messages = 0;
  std::uint64_t bytes = 0;
  Duration max_deadline{0};  // the longest bound a change was given (fault windows included)
};

// The world, its agents and the checks; run() drives every phase.
class ScaleScenario {
 public:
  explicit ScaleScenario(ScaleConfig config);
  ~ScaleScenario();
  ScaleScenario(const ScaleScenario&) = delete;
  ScaleScenario& operator=(const ScaleScenario&) = delete;

  // Runs every phase; `on_phase` (may be empty) is told each phase as it ends.
  ScaleReport run(const std::function<void(const PhaseReport&)>& on_phase = {});

  const TieredWorld& world() const { return *world_; }
  std::uint32_t tier_of_hub(std::size_t hub) const { return hub_tier_.at(hub); }

 private:
  void build_topology();  // hubs and services
  void build_agents();
  void add_provider(std::size_t dc, std::size_t service, std::size_t start_in_ms);
  void run_phase(const std::string& name, Duration length, const std::function<void()>& begin,
                 ScaleReport& report, const std::function<void(const PhaseReport&)>& on_phase);
  void note_registration(ScaleReport& report) const;
  std::array<CoreTime, kTiers> hub_time() const;
  void start_churn();
  void churn_step();
  void replace_provider(std::size_t victim);
  bool held_by_l1(std::size_t provider) const;
  bool dc_up(std::size_t dc) const;
  void audit(ScaleReport& report);
  void final_checks(ScaleReport& report);
  void judge_changes(ScaleReport& report) const;
  void count_traffic(Address from, Address to, std::size_t bytes);

  ScaleConfig config_;
  std::unique_ptr<TieredWorld> world_;
  std::unique_ptr<ChangeTracker> tracker_;
  Rng rng_;                                             // the churn's draws
  std::vector<std::uint32_t> hub_tier_;                 // by hub
  std::vector<std::vector<std::size_t>> l1_of_dc_;      // by datacenter
  std::vector<std::vector<std::size_t>> l2_of_region_;  // by region
  std::vector<std::size_t> l3s_;
  std::vector<proto::ServiceKey> services_;  // service k belongs to dc k % datacenters
  std::unordered_map<std::string, std::uint32_t> service_index_;  // by name
  std::vector<std::size_t> providers_;  // agent indexes, replaced ones included
  std::size_t initial_providers_ = 0;
  std::vector<std::size_t> dc_of_agent_;
  std::size_t next_instance_ = 0;
  // Counted by the sender's partition: in threaded lock step, each from its own
  // thread (a cache line apart).
  using Traffic = std::array<TierTraffic, kTiers>;
  Traffic traffic() const;
  alignas(64) Traffic sent_in_agent_partition_{};
  alignas(64) Traffic sent_in_hub_partition_{};
  std::size_t phase_ = 0;  // the phase running, by index in the report
  bool churning_ = false;
  double churn_carry_ = 0;
  bool stop_next_ = false;  // replacements alternate between a crash and a graceful stop
  std::unordered_set<std::size_t> lost_;  // providers an audit found missing from their L1s
};

}  // namespace cascade::sim
