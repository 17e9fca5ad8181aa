#pragma once
// A tiered cascade network in one deterministic process: hubs of several
// tiers (each a HubCore whose uplink beats to the hubs above it), agents
// beating to the L1 hubs of their datacenter, the simulated network between
// all of them and each hub's disk.
//
// The sibling of sim/world.hpp, built from the same pieces: the clock, the
// network and the agents (an AgentPool) with their API are AgentWorld's
// (sim/agent_world.hpp); every hub lives in a HubProcess (which also routes
// its uplink's messages up, the upstream's replies back into the uplink, and
// deferred cross-tier answers to whoever asked). Every message, between an
// agent and its L1 or between two hubs, crosses the network: it can be lost,
// delayed, reordered or cut by a partition.
//
// Lock step (TieredWorldConfig::partitions): the hubs and the agents as two
// partitions, each with its own queue and network (and its own draws), run
// millisecond by millisecond (sim/lock_step.hpp), the hubs on a thread of
// their own if asked. A message between them (every message has a delay of
// at least 1 ms) crosses at the end of the millisecond it was sent in;
// at()'s events run then too, with both partitions still. The same run on
// one thread or two, and another run than the one queue's. In it hub hooks
// (TieredObserver::on_hub_*) run on the hubs' thread: they may read only hubs.
//
// Addresses: agent i is agent_address(i) as in World; hub h is hub_address(h).
// Everything random comes from generators seeded from TieredWorldConfig::seed
// (the uplinks draw from their hub's epoch and id, as in a real hub), so one
// seed gives one run.
// Thread-safety: none.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/uplink.hpp"
#include "cascade/sim/agent_hubs.hpp"
#include "cascade/sim/agent_pool.hpp"
#include "cascade/sim/agent_world.hpp"
#include "cascade/sim/event_queue.hpp"
#include "cascade/sim/hub_process.hpp"
#include "cascade/sim/lock_step.hpp"
#include "cascade/sim/memory_hub_store.hpp"
#include "cascade/sim/network.hpp"
#include "cascade/sim/tiered_observer.hpp"

namespace cascade::sim {

// One hub of the topology.
struct TierHubSpec {
  std::string id{};
  std::uint32_t tier = 1;
  Duration lease{6000};                  // what it grants to agents and lower hubs
  std::vector<std::size_t> upstreams{};  // hubs added earlier: the uplink's endpoints, in order
  std::string zone{};
  // Lock step only: the hub runs in the agents' partition (their queue,
  // network and thread) instead of the hubs'. Its agents' messages then stay
  // in one queue; the bench moves a few L1s across so neither thread waits.
  bool beside_agents = false;
};

enum class Partitions : std::uint8_t {
  kOneQueue,          // every event in one queue (what the tests' worlds run)
  kLockStep,          // hubs and agents in lock step, one after the other
  kLockStepThreaded,  // ... the hubs on a thread of their own: the same run, sooner
};

struct TieredWorldConfig {
  std::uint64_t seed = 1;
  MonoTime start = mono_from_ms(1'000'000);
  WallMs wall_at_start = 1'700'000'000'000;
  NetworkConfig network{};
  agent::AgentCoreConfig agent{};       // every agent; node_id, epoch and hub_count are per agent
  hub::UplinkConfig uplink{};           // every hub with upstreams; endpoints are set per hub
  hub::EvictionGuardConfig eviction{};  // every hub's eviction protection
  std::uint32_t min_local_up = 1;
  Duration flush_interval{20};  // every hub's write-behind period
  // Simulated time between audits of each hub's running totals (HubProcess;
  // the result is in hub_stats()); 0: never.
  Duration audit_interval{0};
  Duration use_interval{10'000};  // how often a consumer resolves each service it uses
  Duration stop_timeout{2000};    // a stopping agent exits after this even without an ack
  // Time the cores' calls: hub_stats(h).core_time, agent_stats().core_time (sim/core_time.hpp).
  bool time_cores = false;
  Partitions partitions = Partitions::kOneQueue;  // lock step needs network.min_delay >= 1 ms
};

class TieredWorld final : public AgentWorld<TieredObserver> {
 public:
  explicit TieredWorld(TieredWorldConfig config);
  ~TieredWorld() override;

  void run_until(MonoTime until) override;
  void at(MonoTime when, EventQueue::Action probe) override;

  // ---- hubs (indexes in order of add_hub); a hub serves from the moment it is added
  std::size_t add_hub(TierHubSpec spec);
  std::size_t hub_count() const { return hubs_.size(); }
  const hub::HubCore& hub(std::size_t hub) const { return process(hub).core(); }  // while up
  bool hub_up(std::size_t hub) const { return process(hub).up(); }
  // Crashes the hub and starts a new one (epoch + 1) from its disk after `downtime`.
  // May be called from TieredObserver::on_hub_received (the crash then hits
  // right after that message was handled, before any flush).
  void restart_hub(std::size_t hub, HubCrash crash, Duration downtime = Duration{0}) {
    process(hub).restart(crash, downtime);
  }
  const MemoryHubStore& disk(std::size_t hub) const { return process(hub).disk(); }
  // An operator's edit of the hub's own keys of a config group (HubProcess::
  // edit_config): its followers get it pushed; the hub must be up.
  hub::ConfigGroups::Outcome edit_config(std::size_t hub, std::string_view group,
                                         const std::vector<proto::ConfigEdit>& edits,
                                         const std::string& author = "ops") {
    return process(hub).edit_config(group, edits, author);
  }
  const HubProcessStats& hub_stats(std::size_t hub) const { return process(hub).stats(); }
  static Address hub_address(std::size_t hub);
  std::optional<std::size_t> hub_at(Address address) const;

  // Partitions between two hubs, both directions (e.g. a datacenter's L1 and its L2).
  void cut(std::size_t hub_a, std::size_t hub_b);
  void heal(std::size_t hub_a, std::size_t hub_b);

  // Whether the process at `address` runs in the hubs' partition (lock step:
  // every hub not beside_agents); false for agents, and for all in one queue.
  bool in_hub_partition(Address address) const;
  // Told of every message sent by an agent or a hub (Network::SendTap); in
  // threaded lock step, from the sender's partition's thread
  // (in_hub_partition(from) says which).
  void set_send_tap(const Network::SendTap& tap);
  // The run's trace (Network::trace_hash), both networks' in lock step.
  std::uint64_t trace_hash() const;
  // Lock step (first partition: the agents'); zeros in one queue.
  LockStep::Balance lock_step_balance() const {
    return lock_step_ ? lock_step_->balance() : LockStep::Balance{};
  }
  NetworkStats network_stats() const;  // summed over both networks

  // ---- agents (indexes in order of add_agent); driven and viewed through AgentWorld
  // Added down; start() brings it up. `hubs`: the L1 hubs it beats to, in failover order.
  std::size_t add_agent(AgentSpec spec, std::vector<std::size_t> hubs);
  const AgentHubs& hubs_of(std::size_t agent) const { return agent_hubs_.at(agent); }

  // ---- views for assertions
  std::vector<proto::Instance> hub_instances(std::size_t hub,
                                             const proto::ServiceKey& service) const {
    return process(hub).instances(service);
  }
  bool hub_has(std::size_t hub, const proto::ServiceKey& service,
               const std::string& instance_id) const {
    return process(hub).has(service, instance_id);
  }

  const TieredWorldConfig& config() const { return config_; }

 private:
  HubProcess& process(std::size_t hub) { return *hubs_.at(hub); }
  const HubProcess& process(std::size_t hub) const { return *hubs_.at(hub); }
  hub::HubCoreConfig core_config(const TierHubSpec& spec) const;
  Address hub_address_for(std::size_t agent, std::size_t place) const override;
  void receive(Address from, Address to, const proto::Message& message) override;
  void partition();  // lock step: the hubs' queue and network, the runner
  void hand_over();  // what each partition sent the other, into the other's queue

  TieredWorldConfig config_;
  // Lock step only: the hubs' partition, at()'s events, and what runs both.
  std::unique_ptr<EventQueue> hub_events_;
  std::unique_ptr<Network> hub_network_;
  EventQueue between_windows_;
  std::unique_ptr<LockStep> lock_step_;
  std::vector<AgentHubs> agent_hubs_;              // by agent: its hubs, in failover order
  std::vector<std::unique_ptr<HubProcess>> hubs_;  // stable: hooks capture their index
  std::vector<bool> in_hub_partition_;             // by hub; set before the run, read by both
};

}  // namespace cascade::sim
