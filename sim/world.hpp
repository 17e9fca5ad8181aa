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
// with the tiered simulation (sim/tiered_world.hpp); World wires one of each
// to the network and its observer.
//
// Everything random (network fate, delays, beat jitter) comes from generators
// seeded from WorldConfig::seed, so one seed gives one run.
// Thread-safety: none.

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "agent/agent_core.hpp"
#include "common/clock.hpp"
#include "common/protocol.hpp"
#include "hub/hub_core.hpp"
#include "sim/agent_pool.hpp"
#include "sim/event_queue.hpp"
#include "sim/hub_process.hpp"
#include "sim/memory_hub_store.hpp"
#include "sim/network.hpp"
#include "sim/world_observer.hpp"

namespace cascade::sim {

inline constexpr Address kHubAddress = 0;

struct WorldConfig {
  std::uint64_t seed = 1;
  MonoTime start = mono_from_ms(1'000'000);
  WallMs wall_at_start = 1'700'000'000'000;
  NetworkConfig network;
  hub::HubCoreConfig hub;
  agent::AgentCoreConfig agent;   // shared by every agent; node_id and epoch are set per agent
  Duration flush_interval{20};    // the hub's write-behind period
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

class World {
 public:
  explicit World(WorldConfig config);
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // ---- agents (indexes in order of add_agent)
  std::size_t add_agent(AgentSpec spec) { return agents_.add(std::move(spec)); }
  void start(std::size_t agent) { agents_.start(agent); }  // a new incarnation (epoch + 1)
  void start_at(std::size_t agent, MonoTime when) { agents_.start_at(agent, when); }
  void kill(std::size_t agent) { agents_.kill(agent); }  // crash: stops at once, says nothing
  void stop(std::size_t agent) { agents_.stop(agent); }  // graceful: Deregister, down once acked
  void restart(std::size_t agent) { agents_.restart(agent); }  // new epoch
  // Adds to the agent's set (kept across restarts); a running agent beats it at once.
  void add_registration(std::size_t agent, proto::Registration reg) {
    agents_.add_registration(agent, std::move(reg));
  }

  std::size_t agent_count() const { return agents_.size(); }
  AgentState state(std::size_t agent) const { return agents_.state(agent); }
  bool running(std::size_t agent) const { return agents_.running(agent); }
  const AgentSpec& spec(std::size_t agent) const { return agents_.spec(agent); }
  std::uint64_t epoch(std::size_t agent) const { return agents_.epoch(agent); }
  // The current (or last) incarnation's core; requires a started agent.
  agent::AgentCore& agent(std::size_t agent) { return agents_.core(agent); }
  const agent::AgentCore& agent(std::size_t agent) const { return agents_.core(agent); }
  static Address address_of(std::size_t agent) { return agent_address(agent); }

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

  // ---- time
  MonoTime now() const { return events_.now(); }
  WallMs wall_ms() const { return config_.wall_at_start + (now() - config_.start).count(); }
  void run_until(MonoTime until) { events_.run_until(until); }
  void run_for(Duration d) { events_.run_until(now() + d); }
  // Runs `probe` at `when`, after the events already due then (for assertions).
  void at(MonoTime when, EventQueue::Action probe) { events_.at(when, std::move(probe)); }

  // ---- views for assertions
  std::vector<proto::Instance> hub_instances(const proto::ServiceKey& service) const {
    return hub_.instances(service);
  }
  bool hub_has(const proto::ServiceKey& service, const std::string& instance_id) const {
    return hub_.has(service, instance_id);
  }
  // What the agent's cache holds for the service (AgentCore::peek: not a use).
  std::optional<std::vector<proto::Instance>> cached_instances(
      std::size_t agent, const proto::ServiceKey& service) const {
    return agents_.cached_instances(agent, service);
  }
  // The health the agent's cache shows for the instance at `address` (nullopt: not listed).
  std::optional<proto::Health> cached_health(std::size_t agent, const proto::ServiceKey& service,
                                             const std::string& address) const {
    return agents_.cached_health(agent, service, address);
  }
  // What the agent's pick would choose from now (AgentPool::candidates).
  std::vector<proto::Instance> candidates(std::size_t agent,
                                          const proto::ServiceKey& service) const {
    return agents_.candidates(agent, service);
  }
  // The agent's call to `address` failed; it reports it (AgentCore::report_failure).
  void report_failure(std::size_t agent, const proto::ServiceKey& service,
                      const std::string& address,
                      proto::FailureKind kind = proto::FailureKind::kTimeout) {
    agents_.report_failure(agent, service, address, kind);
  }

  Network& network() { return network_; }
  const WorldConfig& config() const { return config_; }
  WorldStats stats() const;
  void set_observer(WorldObserver* observer);  // not owned; nullptr restores the default

 private:
  void receive(Address from, Address to, const proto::Message& message);
  std::string source_of(Address from) const;  // the sending agent's AgentSpec::source

  WorldConfig config_;
  EventQueue events_;
  Network network_;
  WorldObserver default_observer_;
  WorldObserver* observer_ = &default_observer_;
  AgentPool agents_;
  HubProcess hub_;
};

}  // namespace cascade::sim
