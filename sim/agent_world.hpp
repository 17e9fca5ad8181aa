#pragma once
// What World and TieredWorld share: the virtual clock, the network, the agent
// processes (sim/agent_pool.hpp) and the observer, with the API a scenario
// drives the agents and time through and asserts on their caches with.
//
// The two worlds differ only in their hubs: how many there are, which one an
// agent's Outgoing names (hub_address_for) and who on the network a message is
// for (receive). Each world adds its hubs' API; everything here behaves the
// same in both, so a scenario or a helper written against these calls
// (sim/call_load.hpp) runs in either.
//
// `Observer` is the world's hook interface (WorldObserver, TieredObserver);
// the agents' hooks in it are AgentObserver's, which this class calls.
// Everything random comes from generators seeded from the config's seed, in
// streams of their own (sim/seed.hpp), so one seed gives one run.
// Thread-safety: none.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/sim/agent_pool.hpp"
#include "cascade/sim/event_queue.hpp"
#include "cascade/sim/network.hpp"
#include "cascade/sim/seed.hpp"

namespace cascade::sim {

template <typename Observer>
class AgentWorld {
 public:
  AgentWorld(const AgentWorld&) = delete;
  AgentWorld& operator=(const AgentWorld&) = delete;
  virtual ~AgentWorld() = default;

  // ---- agents (indexes in order of the world's add_agent)
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
  // Whose address it is; nullopt for a hub's (0, or far above any agent's) or nobody's.
  std::optional<std::size_t> agent_at(Address address) const {
    if (address == 0 || address - 1 >= agents_.size()) return std::nullopt;
    return address - 1;
  }
  const AgentPoolStats& agent_stats() const { return agents_.stats(); }

  // ---- time
  MonoTime now() const { return events_.now(); }
  WallMs wall_ms() const { return agents_.wall_ms(); }
  // Runs every event due up to `until` (TieredWorld's lock step: millisecond by millisecond).
  virtual void run_until(MonoTime until) { events_.run_until(until); }
  void run_for(Duration d) { run_until(now() + d); }
  // Runs `probe` at `when`, after the events already due then (for assertions).
  virtual void at(MonoTime when, EventQueue::Action probe) { events_.at(when, std::move(probe)); }

  // ---- the agents' caches, and the applications' calls through them
  // What the agent's cache holds for the service (AgentCore::peek: not a use).
  std::optional<std::vector<proto::Instance>> cached_instances(
      std::size_t agent, const proto::ServiceKey& service) const {
    return agents_.cached_instances(agent, service);
  }
  // Whether the agent's cache lists the instance (nullopt: not cached); no copy.
  std::optional<bool> cache_lists(std::size_t agent, const proto::ServiceKey& service,
                                  const std::string& instance_id) const {
    return agents_.cache_lists(agent, service, instance_id);
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
  // The entry of `key` in the agent's copy of a config group it follows
  // (AgentSpec::configs); nullptr when not held. Valid until the next event.
  const proto::ConfigEntry* config_value(std::size_t agent, std::string_view group,
                                         std::string_view key) const {
    return agents_.config_value(agent, group, key);
  }
  // The agent's call to `address` failed; it reports it (AgentCore::report_failure).
  void report_failure(std::size_t agent, const proto::ServiceKey& service,
                      const std::string& address,
                      proto::FailureKind kind = proto::FailureKind::kTimeout) {
    agents_.report_failure(agent, service, address, kind);
  }

  Network& network() { return network_; }
  const Network& network() const { return network_; }
  // Not owned; nullptr restores the default (which does nothing).
  void set_observer(Observer* observer) {
    observer_ = observer != nullptr ? observer : &default_observer_;
  }

 protected:
  // `config` is the world's (WorldConfig, TieredWorldConfig): both name the
  // seed, the network, and what every agent gets, alike.
  template <typename Config>
  explicit AgentWorld(const Config& config)
      : events_(config.start),
        network_(
            config.network, stream_seed(config.seed, kNetworkStream), events_,
            [this](Address from, Address to, const proto::Message& m) { receive(from, to, m); }),
        agents_(AgentPoolConfig{config.agent, config.use_interval, config.stop_timeout,
                                config.start, config.wall_at_start},
                config.seed, events_, [this](std::size_t agent, const agent::Outgoing& out) {
                  send_from_agent(agent, out);
                }) {
    agents_.on_config_changed([this](std::size_t agent, const std::string& group) {
      observer_->on_agent_config_changed(now(), agent, group);
    });
  }

  // The address of the hub at `place` in the agent's own list (Outgoing::hub).
  virtual Address hub_address_for(std::size_t agent, std::size_t place) const = 0;
  // The network delivers `message` to `to`, a hub or an agent (deliver_to_agent).
  virtual void receive(Address from, Address to, const proto::Message& message) = 0;

  // `message` came from the hub at `place` in the agent's list. Observed only
  // if the agent took it: a down agent hears nothing.
  void deliver_to_agent(std::size_t agent, std::size_t place, const proto::Message& message) {
    if (agents_.deliver(agent, place, message)) observer_->on_agent_received(now(), agent, message);
  }
  // What a hub takes a request from `from` to come through (HubProcessConfig::
  // source_of): the agent's AgentSpec::source; "" for a hub, its own source.
  std::string_view source_of(Address from) const {
    const auto agent = agent_at(from);
    return agent ? std::string_view(agents_.spec(*agent).source) : std::string_view{};
  }

  EventQueue events_;
  Network network_;
  Observer default_observer_;
  Observer* observer_ = &default_observer_;
  AgentPool agents_;

 private:
  void send_from_agent(std::size_t agent, const agent::Outgoing& out) {
    observer_->on_agent_sent(now(), agent, out.message);
    network_.send(agent_address(agent), hub_address_for(agent, out.hub), out.message);
  }
};

}  // namespace cascade::sim
