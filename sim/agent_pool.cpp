#include "cascade/sim/agent_pool.hpp"

#include <limits>
#include <stdexcept>
#include <utility>

#include "cascade/agent/picker.hpp"
#include "cascade/sim/seed.hpp"

namespace cascade::sim {

const char* to_string(AgentState state) {
  switch (state) {
    case AgentState::kNew:
      return "new";
    case AgentState::kRunning:
      return "running";
    case AgentState::kStopping:
      return "stopping";
    case AgentState::kDown:
      return "down";
  }
  return "unknown";
}

AgentPool::AgentPool(AgentPoolConfig config, std::uint64_t seed, EventQueue& events, Send send)
    : config_(std::move(config)),
      seed_(seed),
      events_(events),
      send_(std::move(send)),
      rng_(stream_seed(seed, kApplicationStream)) {}

std::size_t AgentPool::add(AgentSpec spec, std::size_t hub_count) {
  // Addresses and the events' captures are 32-bit (agent_address, narrow).
  if (slots_.size() >= std::numeric_limits<std::uint32_t>::max() - 1)
    throw std::length_error("a simulation holds fewer than 2^32 - 1 agents");
  slots_.push_back(Slot{});
  slots_.back().spec = std::move(spec);
  slots_.back().hub_count = hub_count;
  return slots_.size() - 1;
}

agent::AgentCore& AgentPool::core(std::size_t agent) {
  return const_cast<agent::AgentCore&>(std::as_const(*this).core(agent));
}

const agent::AgentCore& AgentPool::core(std::size_t agent) const {
  const Slot& slot = slots_.at(agent);
  if (!slot.core) throw std::logic_error("agent " + slot.spec.node_id + " was never started");
  return *slot.core;
}

std::optional<std::vector<proto::Instance>> AgentPool::cached_instances(
    std::size_t agent, const proto::ServiceKey& service) const {
  auto r = core(agent).peek(now(), wall_ms(), service);
  if (!r) return std::nullopt;
  return std::move(r->instances);
}

std::optional<proto::Health> AgentPool::cached_health(std::size_t agent,
                                                      const proto::ServiceKey& service,
                                                      const std::string& address) const {
  const auto cached = cached_instances(agent, service);
  if (!cached) return std::nullopt;
  for (const auto& in : *cached)
    if (in.address == address) return in.health;
  return std::nullopt;
}

std::vector<proto::Instance> AgentPool::candidates(std::size_t agent,
                                                   const proto::ServiceKey& service) const {
  auto cached = cached_instances(agent, service);
  if (!cached) return {};
  return agent::nearest_tier(agent::confirmed_first(agent::eligible_instances(*cached)));
}

const proto::ConfigEntry* AgentPool::config_value(std::size_t agent, std::string_view group,
                                                  std::string_view key) const {
  const auto* held = core(agent).configs().find(group);
  if (held == nullptr) return nullptr;
  const auto it = held->entries.find(key);
  return it == held->entries.end() ? nullptr : &it->second;
}

void AgentPool::report_failure(std::size_t agent, const proto::ServiceKey& service,
                               const std::string& address, proto::FailureKind kind) {
  if (!running(agent)) return;
  slots_[agent].core->report_failure(now(), service, address, kind);
  arm_timer(agent);  // the report's batch delay may be due before the armed deadline
}

void AgentPool::start_at(std::size_t agent, MonoTime when) {
  events_.at(when, [this, agent] { start(agent); });
}

void AgentPool::start(std::size_t agent) {
  Slot& slot = slots_.at(agent);
  if (beating(agent)) end_process(agent);
  agent::AgentCoreConfig config = config_.agent;
  config.node_id = slot.spec.node_id;
  config.epoch = ++slot.epoch;
  config.hub_count = slot.hub_count;
  slot.core = std::make_unique<agent::AgentCore>(config, agent_seed(seed_, agent, slot.epoch));
  slot.state = AgentState::kRunning;
  ++slot.life;
  slot.queries.clear();
  for (const auto& reg : slot.spec.provides)
    slot.core->add_registration(now(), reg);
  for (const auto& group : slot.spec.configs)
    slot.core->pin_config(now(), group);
  apply(agent, slot.core->start(now()));
  for (const auto& service : slot.spec.uses)
    query(agent, service);
  if (!slot.spec.uses.empty())
    schedule_use(agent, Duration{rng_.uniform(1, config_.use_interval.count())});
}

void AgentPool::add_registration(std::size_t agent, proto::Registration reg) {
  Slot& slot = slots_.at(agent);
  slot.spec.provides.push_back(reg);
  if (running(agent)) apply(agent, slot.core->add_registration(now(), std::move(reg)));
}

void AgentPool::kill(std::size_t agent) {
  if (beating(agent)) end_process(agent);
}

void AgentPool::stop(std::size_t agent) {
  if (!running(agent)) return;
  Slot& slot = slots_[agent];
  slot.state = AgentState::kStopping;
  apply(agent, slot.core->shutdown(now()));
  events_.after(config_.stop_timeout, [this, agent = narrow(agent), life = slot.life] {
    if (slots_[agent].life != life || state(agent) != AgentState::kStopping) return;
    ++stats_.stops_timed_out;
    end_process(agent);  // the process exits anyway; the lease cleans up
  });
}

void AgentPool::restart(std::size_t agent) {
  start(agent);
}

void AgentPool::end_process(std::size_t agent) {
  Slot& slot = slots_[agent];
  slot.state = AgentState::kDown;
  ++slot.life;
  ++slot.timer_gen;
  slot.armed.reset();
}

void AgentPool::query(std::size_t agent, const proto::ServiceKey& service) {
  Slot& slot = slots_[agent];
  std::uint64_t id = 0;
  auto actions = slot.core->query(now(), service, id);
  slot.queries.emplace(id, service);
  apply(agent, std::move(actions));
}

// Carries out what the agent asked for, as its adapter and application would.
void AgentPool::apply(std::size_t agent, agent::AgentActions actions) {
  Slot& slot = slots_[agent];
  for (const auto& out : actions.send)
    send_(agent, out);
  for (auto id : actions.answered)
    slot.queries.erase(id);
  if (config_changed_)
    for (const auto& group : actions.config_changed)
      config_changed_(agent, group);
  if (actions.deregistered && slot.state == AgentState::kStopping) {
    end_process(agent);
    return;
  }
  for (auto id : actions.timed_out) {
    auto it = slot.queries.find(id);
    if (it == slot.queries.end()) continue;
    const proto::ServiceKey service = it->second;
    slot.queries.erase(it);
    ++stats_.queries_retried;
    query(agent, service);
  }
  arm_timer(agent);
}

bool AgentPool::beating(std::size_t agent) const {
  return state(agent) == AgentState::kRunning || state(agent) == AgentState::kStopping;
}

void AgentPool::arm_timer(std::size_t agent) {
  Slot& slot = slots_[agent];
  if (!beating(agent)) return;
  const MonoTime next = slot.core->next_deadline();
  if (slot.armed && *slot.armed == next) return;
  slot.armed = next;
  // Two 32-bit captures and `this` fit std::function's own storage: no
  // allocation per timer (a 64-bit agent and generation made every one allocate).
  events_.at(next, [this, index = narrow(agent), gen = ++slot.timer_gen] { on_timer(index, gen); });
}

void AgentPool::on_timer(std::size_t agent, std::uint32_t gen) {
  Slot& slot = slots_[agent];
  if (gen != slot.timer_gen || !beating(agent)) return;
  slot.armed.reset();
  apply(agent,
        timed_call(time_cores_, stats_.core_time, [&] { return slot.core->on_timer(now()); }));
  // A timer that leaves its deadline due would fire again at the same instant
  // forever; fail the run instead of hanging it.
  if (beating(agent) && slot.core->next_deadline() <= now())
    throw std::logic_error("agent " + slot.spec.node_id + ": on_timer left next_deadline() due");
}

void AgentPool::schedule_use(std::size_t agent, Duration delay) {
  events_.after(delay, [this, agent = narrow(agent), life = slots_[agent].life] {
    Slot& slot = slots_[agent];
    if (slot.life != life || slot.state != AgentState::kRunning) return;
    // What the application's reads do to the agent: keep the service in its
    // uses. The copy of the list a read returns is the application's cost,
    // not the registry's (14% of the samples in a profile of 50,000 agents).
    for (const auto& service : slot.spec.uses)
      slot.core->touch(now(), service);
    schedule_use(agent, config_.use_interval);
  });
}

bool AgentPool::deliver(std::size_t agent, std::size_t hub, const proto::Message& message) {
  if (!beating(agent)) return false;  // nobody listens at a dead address
  apply(agent, timed_call(time_cores_, stats_.core_time,
                          [&] { return slots_[agent].core->on_message(now(), hub, message); }));
  return true;
}

}  // namespace cascade::sim
