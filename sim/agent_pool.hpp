#pragma once
// The agent processes of a simulation: one AgentCore per running agent, with
// the adapter and application around it.
//
// The pool plays what an agent's I/O thread and its application would: it
// fires the core's timer at next_deadline, hands the core's messages to the
// owner's Send (which puts them on the network), feeds it what the network
// delivers, re-queries a service whose query timed out, and resolves every
// used service each use interval (so subscriptions stay alive). The
// application's calls show through report_failure (a call failed, as
// Client::report_failure says it) and candidates() (what a pick chooses from;
// sim/call_load.hpp makes the calls). Lifecycles: start (a new epoch), kill
// (silence), graceful stop (Deregister until acknowledged or stop_timeout).
//
// Which hub an Outgoing's index names is the owner's business
// (AgentWorld::hub_address_for: World has one hub, TieredWorld gives each
// agent the L1 hubs of its datacenter).
//
// Config groups an agent follows (AgentSpec::configs) are pinned at each
// start; the core's config_changed actions go to the owner's ConfigChanged
// hook (AgentWorld hands them to its observer).
// Thread-safety: none.

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/common/random.hpp"
#include "cascade/sim/core_time.hpp"
#include "cascade/sim/event_queue.hpp"
#include "cascade/sim/network.hpp"

namespace cascade::sim {

// What one agent process is configured with; it survives restarts.
struct AgentSpec {
  std::string node_id;
  std::vector<proto::Registration> provides;
  std::vector<proto::ServiceKey> uses;  // queried at start, then resolved every use interval
  // What the hub sees its requests come through (its rack's proxy, a subnet),
  // for eviction protection; "" = the agent is its own source.
  std::string source{};
  // Config groups the application follows (AgentCore::pin_config at every
  // start, so they never expire): the beats declare them from the first on.
  std::vector<std::string> configs{};
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

// An agent keeps its address across restarts, as a node id routed by a proxy
// would: a reply to one incarnation still on the way reaches the next.
// Address 0 is left to World's hub.
inline Address agent_address(std::size_t agent) {
  return static_cast<Address>(agent + 1);
}

struct AgentPoolConfig {
  agent::AgentCoreConfig agent{};  // shared by every agent; node_id, epoch, hub_count per agent
  Duration use_interval{10'000};   // how often a consumer reads each service it uses
  Duration stop_timeout{2000};     // a stopping agent exits after this even without an ack
  MonoTime start{};                // the simulation's start, for wall-clock stamps
  WallMs wall_at_start = 0;
};

struct AgentPoolStats {
  std::uint64_t queries_retried = 0;
  std::uint64_t stops_timed_out = 0;  // stopping agents that exited without an ack
  CoreTime core_time{};               // the cores' on_timer and on_message, when timed
};

class AgentPool {
 public:
  // Puts one of the agent's messages on the network.
  using Send = std::function<void(std::size_t agent, const agent::Outgoing&)>;
  // The values of a config group the agent follows changed (or first came).
  using ConfigChanged = std::function<void(std::size_t agent, const std::string& group)>;

  AgentPool(AgentPoolConfig config, std::uint64_t seed, EventQueue& events, Send send);
  AgentPool(const AgentPool&) = delete;
  AgentPool& operator=(const AgentPool&) = delete;
  void on_config_changed(ConfigChanged hook) { config_changed_ = std::move(hook); }

  // Added down; start() brings it up. `hub_count`: how many hubs it may fail over between.
  std::size_t add(AgentSpec spec, std::size_t hub_count = 1);
  void start(std::size_t agent);  // a new incarnation (epoch + 1) starts now
  void start_at(std::size_t agent, MonoTime when);
  void kill(std::size_t agent);     // crash: stops at once, says nothing
  void stop(std::size_t agent);     // graceful: AgentCore::shutdown, down once acknowledged
  void restart(std::size_t agent);  // kill (if running) and start again with a new epoch
  // Adds to the agent's set (kept across restarts); a running agent beats it at once.
  void add_registration(std::size_t agent, proto::Registration reg);

  // A message from the agent's hub `hub` arrived. False if nobody listens (down).
  bool deliver(std::size_t agent, std::size_t hub, const proto::Message& message);

  std::size_t size() const { return slots_.size(); }
  AgentState state(std::size_t agent) const { return slots_.at(agent).state; }
  bool running(std::size_t agent) const { return state(agent) == AgentState::kRunning; }
  const AgentSpec& spec(std::size_t agent) const { return slots_.at(agent).spec; }
  std::uint64_t epoch(std::size_t agent) const { return slots_.at(agent).epoch; }
  // The current (or last) incarnation's core; requires a started agent.
  agent::AgentCore& core(std::size_t agent);
  const agent::AgentCore& core(std::size_t agent) const;
  // What the agent's cache holds for the service (AgentCore::peek: not a use).
  std::optional<std::vector<proto::Instance>> cached_instances(
      std::size_t agent, const proto::ServiceKey& service) const;
  // Whether the agent's cache lists the instance (nullopt: the service is not
  // cached), without copying the list (AgentCore::cache_lists).
  std::optional<bool> cache_lists(std::size_t agent, const proto::ServiceKey& service,
                                  const std::string& instance_id) const {
    return core(agent).cache_lists(service, instance_id);
  }
  // The health the agent's cache shows for the instance at `address`
  // (nullopt: not cached, or not listed).
  std::optional<proto::Health> cached_health(std::size_t agent, const proto::ServiceKey& service,
                                             const std::string& address) const;
  // What a pick would choose from now, in the cache's order: the eligible
  // instances (UP, weighted, not isolated), confirmed ones first, nearest
  // tier (agent/picker.hpp). Empty when nothing is cached.
  std::vector<proto::Instance> candidates(std::size_t agent,
                                          const proto::ServiceKey& service) const;
  // The entry of `key` in the agent's copy of a config group it follows
  // (nullptr: not held); valid until the agent next handles an event.
  const proto::ConfigEntry* config_value(std::size_t agent, std::string_view group,
                                         std::string_view key) const;

  // The application's call to `address` failed: the agent reports it
  // (AgentCore::report_failure). Ignored unless the agent is running.
  void report_failure(std::size_t agent, const proto::ServiceKey& service,
                      const std::string& address,
                      proto::FailureKind kind = proto::FailureKind::kTimeout);
  const AgentPoolStats& stats() const { return stats_; }
  // Times every core's on_timer and on_message calls (AgentPoolStats::core_time).
  void time_cores(bool on) { time_cores_ = on; }

  // The simulation's clock, and the wall clock the agents stamp with.
  MonoTime now() const { return events_.now(); }
  WallMs wall_ms() const { return config_.wall_at_start + (now() - config_.start).count(); }

 private:
  struct Slot {
    AgentSpec spec;
    std::size_t hub_count = 1;
    std::unique_ptr<agent::AgentCore> core;
    AgentState state = AgentState::kNew;
    std::uint64_t epoch = 0;
    // 32 bits (with the agent's index) keep the events' captures small.
    std::uint32_t life = 0;       // bumped whenever the process starts or ends
    std::uint32_t timer_gen = 0;  // bumped whenever the armed timer is replaced
    std::optional<MonoTime> armed;
    std::map<std::uint64_t, proto::ServiceKey> queries;  // outstanding, by request id
  };

  void apply(std::size_t agent, agent::AgentActions actions);
  void query(std::size_t agent, const proto::ServiceKey& service);
  bool beating(std::size_t agent) const;  // running or stopping: its timer is driven
  void arm_timer(std::size_t agent);
  void on_timer(std::size_t agent, std::uint32_t gen);
  // An agent's index as events capture it (add() keeps indexes below 2^32).
  static std::uint32_t narrow(std::size_t agent) { return static_cast<std::uint32_t>(agent); }
  void schedule_use(std::size_t agent, Duration delay);
  void end_process(std::size_t agent);

  AgentPoolConfig config_;
  std::uint64_t seed_;
  EventQueue& events_;
  Send send_;
  ConfigChanged config_changed_;
  Rng rng_;  // the applications' draws (when consumers resolve); agents have their own
  std::vector<Slot> slots_;
  AgentPoolStats stats_;
  bool time_cores_ = false;
};

}  // namespace cascade::sim
