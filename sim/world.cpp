#include "sim/world.hpp"

#include <cassert>
#include <stdexcept>
#include <utility>

namespace cascade::sim {

namespace {

// SplitMix64: spreads (seed, agent, epoch) into independent generator seeds.
std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

constexpr std::uint64_t kNetworkStream = 1;
constexpr std::uint64_t kWorldStream = 2;

}  // namespace

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

World::World(WorldConfig config)
    : config_(std::move(config)),
      events_(config_.start),
      network_(config_.network, mix(config_.seed ^ kNetworkStream), events_,
               [this](Address from, Address to, const proto::Message& m) { receive(from, to, m); }),
      rng_(mix(config_.seed ^ kWorldStream)) {
  if (config_.agent.hub_count != 1) throw std::invalid_argument("a World has exactly one hub");
  boot_hub();
}

void World::set_observer(WorldObserver* observer) {
  observer_ = observer != nullptr ? observer : &default_observer_;
}

// ---------------------------------------------------------------- agents

std::size_t World::add_agent(AgentSpec spec) {
  slots_.push_back(Slot{});
  slots_.back().spec = std::move(spec);
  return slots_.size() - 1;
}

std::uint64_t World::agent_seed(std::size_t agent, std::uint64_t epoch) const {
  return mix(mix(config_.seed) ^ mix(agent) ^ (epoch << 48));
}

agent::AgentCore& World::agent(std::size_t agent) {
  return const_cast<agent::AgentCore&>(std::as_const(*this).agent(agent));
}

const agent::AgentCore& World::agent(std::size_t agent) const {
  const Slot& slot = slots_.at(agent);
  if (!slot.core) throw std::logic_error("agent " + slot.spec.node_id + " was never started");
  return *slot.core;
}

void World::start_at(std::size_t agent, MonoTime when) {
  events_.at(when, [this, agent] { start(agent); });
}

void World::start(std::size_t agent) {
  Slot& slot = slots_.at(agent);
  if (beating(agent)) end_process(agent);
  agent::AgentCoreConfig config = config_.agent;
  config.node_id = slot.spec.node_id;
  config.epoch = ++slot.epoch;
  slot.core = std::make_unique<agent::AgentCore>(config, agent_seed(agent, slot.epoch));
  slot.state = AgentState::kRunning;
  ++slot.life;
  slot.queries.clear();
  for (const auto& reg : slot.spec.provides)
    slot.core->add_registration(now(), reg);
  apply(agent, slot.core->start(now()));
  for (const auto& service : slot.spec.uses)
    query(agent, service);
  if (!slot.spec.uses.empty())
    schedule_use(agent, Duration{rng_.uniform(1, config_.use_interval.count())});
}

void World::add_registration(std::size_t agent, proto::Registration reg) {
  Slot& slot = slots_.at(agent);
  slot.spec.provides.push_back(reg);
  if (running(agent)) apply(agent, slot.core->add_registration(now(), std::move(reg)));
}

void World::kill(std::size_t agent) {
  if (beating(agent)) end_process(agent);
}

void World::stop(std::size_t agent) {
  if (!running(agent)) return;
  Slot& slot = slots_[agent];
  slot.state = AgentState::kStopping;
  apply(agent, slot.core->shutdown(now()));
  events_.after(config_.stop_timeout, [this, agent, life = slot.life] {
    if (slots_[agent].life != life || state(agent) != AgentState::kStopping) return;
    ++stats_.stops_timed_out;
    end_process(agent);  // the process exits anyway; the lease cleans up
  });
}

void World::restart(std::size_t agent) {
  start(agent);
}

void World::end_process(std::size_t agent) {
  Slot& slot = slots_[agent];
  slot.state = AgentState::kDown;
  ++slot.life;
  ++slot.timer_gen;
  slot.armed.reset();
}

void World::send_from_agent(std::size_t agent, const proto::Message& message) {
  observer_->on_agent_sent(now(), agent, message);
  network_.send(address_of(agent), kHubAddress, message);
}

void World::query(std::size_t agent, const proto::ServiceKey& service) {
  Slot& slot = slots_[agent];
  std::uint64_t id = 0;
  auto actions = slot.core->query(now(), service, id);
  slot.queries.emplace(id, service);
  apply(agent, std::move(actions));
}

// Carries out what the agent asked for, as its adapter and application would.
void World::apply(std::size_t agent, agent::AgentActions actions) {
  Slot& slot = slots_[agent];
  for (const auto& out : actions.send) {
    assert(out.hub == 0);
    send_from_agent(agent, out.message);
  }
  for (auto id : actions.answered)
    slot.queries.erase(id);
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
  arm_agent_timer(agent);
}

bool World::beating(std::size_t agent) const {
  return state(agent) == AgentState::kRunning || state(agent) == AgentState::kStopping;
}

void World::arm_agent_timer(std::size_t agent) {
  Slot& slot = slots_[agent];
  if (!beating(agent)) return;
  const MonoTime next = slot.core->next_deadline();
  if (slot.armed && *slot.armed == next) return;
  slot.armed = next;
  events_.at(next, [this, agent, gen = ++slot.timer_gen] { on_agent_timer(agent, gen); });
}

void World::on_agent_timer(std::size_t agent, std::uint64_t gen) {
  Slot& slot = slots_[agent];
  if (gen != slot.timer_gen || !beating(agent)) return;
  slot.armed.reset();
  apply(agent, slot.core->on_timer(now()));
  // A timer that leaves its deadline due would fire again at the same instant
  // forever; fail the run instead of hanging it.
  if (beating(agent) && slot.core->next_deadline() <= now())
    throw std::logic_error("agent " + slot.spec.node_id + ": on_timer left next_deadline() due");
}

void World::schedule_use(std::size_t agent, Duration delay) {
  events_.after(delay, [this, agent, life = slots_[agent].life] {
    Slot& slot = slots_[agent];
    if (slot.life != life || slot.state != AgentState::kRunning) return;
    for (const auto& service : slot.spec.uses)
      slot.core->lookup_any(now(), wall_ms(), service);
    schedule_use(agent, config_.use_interval);
  });
}

void World::on_agent_message(std::size_t agent, const proto::Message& message) {
  if (!beating(agent)) return;  // nobody listens at a dead address
  apply(agent, slots_[agent].core->on_message(now(), 0, message));
  observer_->on_agent_received(now(), agent, message);
}

// ---------------------------------------------------------------- network

void World::receive(Address from, Address to, const proto::Message& message) {
  if (to == kHubAddress)
    on_hub_message(from, message);
  else
    on_agent_message(to - 1, message);
}

// ---------------------------------------------------------------- hub

void World::boot_hub() {
  hub_ = std::make_unique<hub::HubCore>(config_.hub, disk_.next_epoch(), now());
  hub_->restore(disk_.load(), now());
  ++hub_life_;
  schedule_flush();
  arm_hub_timer();
  observer_->on_hub_started(now());
}

void World::restart_hub(HubCrash crash, Duration downtime) {
  if (!hub_) throw std::logic_error("the hub is already down");
  if (crash == HubCrash::kAfterFlush) {
    flush();
  } else {
    stats_.replies_lost_in_crash += held_replies_.size();
    held_replies_.clear();
  }
  hub_.reset();
  hub_armed_.reset();
  ++hub_life_;
  ++hub_timer_gen_;
  ++stats_.hub_restarts;
  if (downtime.count() == 0) {
    boot_hub();
    return;
  }
  events_.after(downtime, [this, life = hub_life_] {
    if (life == hub_life_) boot_hub();
  });
}

void World::on_hub_message(Address from, const proto::Message& message) {
  if (!hub_) {
    ++stats_.lost_while_hub_down;
    return;
  }
  auto result = hub_->handle(now(), message);
  if (result.durable)
    held_replies_.push_back({from, std::move(result.reply)});
  else
    network_.send(kHubAddress, from, result.reply);
  arm_hub_timer();
  observer_->on_hub_received(now(), from - 1, message);  // last: it may crash the hub
}

// Like the hub server: one batch per flush interval, then the replies it held.
void World::flush() {
  disk_.apply(hub_->take_persist_batch());
  auto replies = std::move(held_replies_);
  held_replies_.clear();
  for (const auto& reply : replies)
    network_.send(kHubAddress, reply.to, reply.message);
}

void World::schedule_flush() {
  events_.after(config_.flush_interval, [this, life = hub_life_] {
    if (life != hub_life_) return;
    flush();
    schedule_flush();
  });
}

// Lease deadlines only move later, except when one is added to an empty queue
// or the front is removed; an early wake-up just re-arms.
void World::arm_hub_timer() {
  const auto next = hub_->next_deadline();
  if (!next || (hub_armed_ && *hub_armed_ <= *next)) return;
  hub_armed_ = *next;
  events_.at(*next, [this, gen = ++hub_timer_gen_] { on_hub_timer(gen); });
}

void World::on_hub_timer(std::uint64_t gen) {
  if (gen != hub_timer_gen_ || !hub_) return;
  hub_armed_.reset();
  const auto next = hub_->next_deadline();
  if (next && *next <= now()) {
    hub_->tick(now());
    observer_->on_hub_tick(now());
  }
  arm_hub_timer();
}

// ---------------------------------------------------------------- views

std::vector<proto::Instance> World::hub_instances(const proto::ServiceKey& service) const {
  std::vector<proto::Instance> out;
  const hub::ServiceEntry* entry = hub_ ? hub_->registry().find(service) : nullptr;
  if (entry == nullptr) return out;
  out.reserve(entry->instances.size());
  for (const auto& [id, in] : entry->instances)
    out.push_back(in.instance);
  return out;
}

bool World::hub_has(const proto::ServiceKey& service, const std::string& instance_id) const {
  const hub::ServiceEntry* entry = hub_ ? hub_->registry().find(service) : nullptr;
  return entry != nullptr && entry->instances.contains(instance_id);
}

std::optional<std::vector<proto::Instance>> World::cached_instances(
    std::size_t agent, const proto::ServiceKey& service) const {
  auto r = this->agent(agent).peek(now(), wall_ms(), service);
  if (!r) return std::nullopt;
  return std::move(r->instances);
}

}  // namespace cascade::sim
