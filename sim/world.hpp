#pragma once
// A whole cascade deployment in one deterministic process: one HubCore, any
// number of AgentCores, the simulated network between them and the hub's disk.
//
// The World plays the part of the adapters around the cores: it fires each
// agent's timer at its next_deadline, carries Outgoing messages to the hub and
// the hub's replies back, ticks the hub at its next_deadline, and flushes the
// hub's PersistBatch to the in-memory disk every flush interval. Like the hub
// server, it holds a reply that acknowledges a state change (durable) until the
// batch holding that change is on disk. It also plays the applications on top
// of the agents: a consumer queries the services it uses when it starts (and
// again when a query times out), then resolves them every use interval. The
// agents' side is sim/agent_pool.hpp and the hub's sim/hub_process.hpp, shared
// with the tiered simulation (sim/tiered_world.hpp); so are the clock, the
// network and the agents' API (sim/agent_world.hpp). World adds one hub.
//
// Everything random (network fate, delays, beat jitter) comes from generators
// seeded from WorldConfig::seed, so one seed gives one run.
// Thread-safety: none.

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/sim/agent_pool.hpp"
#include "cascade/sim/agent_world.hpp"
#include "cascade/sim/event_queue.hpp"
#include "cascade/sim/hub_process.hpp"
#include "cascade/sim/memory_hub_store.hpp"
#include "cascade/sim/network.hpp"
#include "cascade/sim/world_observer.hpp"

namespace cascade::sim {

inline constexpr Address kHubAddress = 0;

struct WorldConfig {
  std::uint64_t seed = 1;
  MonoTime start = mono_from_ms(1'000'000);
  WallMs wall_at_start = 1'700'000'000'000;
  NetworkConfig network;
  hub::HubCoreConfig hub;
  agent::AgentCoreConfig agent;  // shared by every agent; node_id and epoch are set per agent
  Duration flush_interval{20};   // the hub's write-behind period
  // Simulated time between audits of the hub's running totals (HubProcess;
  // the result is in hub_stats()); 0: never.
  Duration audit_interval{0};
  Duration use_interval{10'000};  // how often a consumer resolves each service it uses
  Duration stop_timeout{2000};    // a stopping agent exits after this even without an ack
};

struct WorldStats {
  std::uint64_t hub_restarts = 0;
  std::uint64_t lost_while_hub_down = 0;  // messages that reached a hub that was not running
  std::uint64_t replies_lost_in_crash = 0;
  std::uint64_t queries_retried = 0;
  std::uint64_t stops_timed_out = 0;  // stopping agents that exited without an ack
};

class World final : public AgentWorld<WorldObserver> {
 public:
  explicit World(WorldConfig config);

  // ---- agents (indexes in order of add_agent); driven and viewed through AgentWorld
  std::size_t add_agent(AgentSpec spec) { return agents_.add(std::move(spec)); }

  // ---- hub
  const hub::HubCore& hub() const { return hub_.core(); }  // valid while hub_up()
  bool hub_up() const { return hub_.up(); }
  // Crashes the hub and starts a new one (epoch + 1) from the disk after `downtime`.
  // May be called from WorldObserver::on_hub_received: the crash then hits
  // right after that message was handled, before any flush.
  void restart_hub(HubCrash crash, Duration downtime = Duration{0}) {
    hub_.restart(crash, downtime);
  }
  const MemoryHubStore& disk() const { return hub_.disk(); }
  const HubProcessStats& hub_stats() const { return hub_.stats(); }

  // ---- views for assertions
  std::vector<proto::Instance> hub_instances(const proto::ServiceKey& service) const {
    return hub_.instances(service);
  }
  bool hub_has(const proto::ServiceKey& service, const std::string& instance_id) const {
    return hub_.has(service, instance_id);
  }

  const WorldConfig& config() const { return config_; }
  WorldStats stats() const;

 private:
  Address hub_address_for(std::size_t agent, std::size_t place) const override;
  void receive(Address from, Address to, const proto::Message& message) override;

  WorldConfig config_;
  HubProcess hub_;
};

}  // namespace cascade::sim
