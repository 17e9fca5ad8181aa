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
// again when a query times out), then resolves them every use interval.
//
// Everything random (network fate, delays, beat jitter) comes from generators
// seeded from WorldConfig::seed, so one seed gives one run.
// Thread-safety: none.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "agent/agent_core.hpp"
#include "common/clock.hpp"
#include "common/protocol.hpp"
#include "hub/hub_core.hpp"
#include "sim/event_queue.hpp"
#include "sim/memory_hub_store.hpp"
#include "sim/network.hpp"
#include "sim/world_observer.hpp"

namespace cascade::sim {

inline constexpr Address kHubAddress = 0;

// What one agent process is configured with; it survives restarts.
struct AgentSpec {
  std::string node_id;
  std::vector<proto::Registration> provides;
  std::vector<proto::ServiceKey> uses;  // queried at start, then resolved every use interval
};

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

enum class AgentState : std::uint8_t {
  kNew,       // added, never started
  kRunning,   // beating
  kStopping,  // shut down: repeats its Deregister until acknowledged or stop_timeout
  kDown,      // crashed or stopped; receives nothing
};

const char* to_string(AgentState state);
inline std::ostream& operator<<(std::ostream& os, AgentState state) {
  return os << to_string(state);
}

enum class HubCrash : std::uint8_t {
  kAfterFlush,            // the last batch reached the disk before the crash
  kLosingUnflushedBatch,  // changes since the last flush, and the replies they held, are lost
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
  std::size_t add_agent(AgentSpec spec);  // added down; start() brings it up
  void start(std::size_t agent);          // a new incarnation (epoch + 1) starts now
  void start_at(std::size_t agent, MonoTime when);
  void kill(std::size_t agent);     // crash: stops at once, says nothing
  void stop(std::size_t agent);     // graceful: AgentCore::shutdown, down once acknowledged
  void restart(std::size_t agent);  // kill (if running) and start again with a new epoch
  // Adds to the agent's set (kept across restarts); a running agent beats it at once.
  void add_registration(std::size_t agent, proto::Registration reg);

  std::size_t agent_count() const { return slots_.size(); }
  AgentState state(std::size_t agent) const { return slots_.at(agent).state; }
  bool running(std::size_t agent) const { return state(agent) == AgentState::kRunning; }
  const AgentSpec& spec(std::size_t agent) const { return slots_.at(agent).spec; }
  std::uint64_t epoch(std::size_t agent) const { return slots_.at(agent).epoch; }
  // The current (or last) incarnation's core; requires a started agent.
  agent::AgentCore& agent(std::size_t agent);
  const agent::AgentCore& agent(std::size_t agent) const;
  // An agent keeps its address across restarts, as a node id routed by a proxy
  // would: a reply to one incarnation still on the way reaches the next.
  static Address address_of(std::size_t agent) { return static_cast<Address>(agent + 1); }

  // ---- hub
  const hub::HubCore& hub() const { return *hub_; }  // valid while hub_up()
  bool hub_up() const { return hub_ != nullptr; }
  // Crashes the hub and starts a new one (epoch + 1) from the disk after `downtime`.
  // May be called from WorldObserver::on_hub_received: the crash then hits
  // right after that message was handled, before any flush.
  void restart_hub(HubCrash crash, Duration downtime = Duration{0});
  const MemoryHubStore& disk() const { return disk_; }

  // ---- time
  MonoTime now() const { return events_.now(); }
  WallMs wall_ms() const { return config_.wall_at_start + (now() - config_.start).count(); }
  void run_until(MonoTime until) { events_.run_until(until); }
  void run_for(Duration d) { events_.run_until(now() + d); }
  // Runs `probe` at `when`, after the events already due then (for assertions).
  void at(MonoTime when, EventQueue::Action probe) { events_.at(when, std::move(probe)); }

  // ---- views for assertions
  std::vector<proto::Instance> hub_instances(const proto::ServiceKey& service) const;
  bool hub_has(const proto::ServiceKey& service, const std::string& instance_id) const;
  // What the agent's cache holds for the service (AgentCore::peek: not a use).
  std::optional<std::vector<proto::Instance>> cached_instances(
      std::size_t agent, const proto::ServiceKey& service) const;

  Network& network() { return network_; }
  const WorldConfig& config() const { return config_; }
  const WorldStats& stats() const { return stats_; }
  void set_observer(WorldObserver* observer);  // not owned; nullptr restores the default

 private:
  struct Slot {
    AgentSpec spec;
    std::unique_ptr<agent::AgentCore> core;
    AgentState state = AgentState::kNew;
    std::uint64_t epoch = 0;
    std::uint64_t life = 0;       // bumped whenever the process starts or ends
    std::uint64_t timer_gen = 0;  // bumped whenever the armed timer is replaced
    std::optional<MonoTime> armed;
    std::map<std::uint64_t, proto::ServiceKey> queries;  // outstanding, by request id
  };
  struct HeldReply {
    Address to;
    proto::Message message;
  };

  void receive(Address from, Address to, const proto::Message& message);
  void on_hub_message(Address from, const proto::Message& message);
  void on_agent_message(std::size_t agent, const proto::Message& message);

  void apply(std::size_t agent, agent::AgentActions actions);
  void send_from_agent(std::size_t agent, const proto::Message& message);
  void query(std::size_t agent, const proto::ServiceKey& service);
  bool beating(std::size_t agent) const;  // running or stopping: its timer is driven
  void arm_agent_timer(std::size_t agent);
  void on_agent_timer(std::size_t agent, std::uint64_t gen);
  void schedule_use(std::size_t agent, Duration delay);
  void end_process(std::size_t agent);
  std::uint64_t agent_seed(std::size_t agent, std::uint64_t epoch) const;

  void boot_hub();
  void flush();
  void schedule_flush();
  void arm_hub_timer();
  void on_hub_timer(std::uint64_t gen);

  WorldConfig config_;
  EventQueue events_;
  Network network_;
  Rng rng_;  // the World's own draws (when consumers resolve); agents and network have theirs
  MemoryHubStore disk_;
  std::unique_ptr<hub::HubCore> hub_;
  std::uint64_t hub_life_ = 0;
  std::uint64_t hub_timer_gen_ = 0;
  std::optional<MonoTime> hub_armed_;
  std::vector<HeldReply> held_replies_;  // durable replies waiting for the next flush
  std::vector<Slot> slots_;
  WorldObserver default_observer_;
  WorldObserver* observer_ = &default_observer_;
  WorldStats stats_;
};

}  // namespace cascade::sim
