#include "cascade/bench/virtual_deployment.hpp"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <functional>
#include <stdexcept>

#include "cascade/bench/thread_cpu.hpp"
#include "cascade/common/codec.hpp"

namespace cascade::bench {

namespace {
constexpr int kMaxPassesPerInstant = 8;  // work scheduled "now" by work done now
}  // namespace

VirtualDeployment::VirtualDeployment(MonoTime start, Duration flush_interval)
    : now_(start), flush_interval_(flush_interval), next_flush_(start + flush_interval) {}

std::size_t VirtualDeployment::add_hub(hub::HubCoreConfig config,
                                       std::optional<std::size_t> upstream) {
  if (upstream && *upstream >= hubs_.size())
    throw std::invalid_argument("an upstream must be added before the hubs below it");
  if (upstream.has_value() != config.uplink.has_value())
    throw std::invalid_argument("a hub has an upstream exactly when its config has an uplink");
  const auto epoch = hubs_.size() + 1;
  hubs_.push_back(
      HubSlot{std::make_unique<hub::HubCore>(std::move(config), epoch, now_), upstream, Traffic{}});
  return hubs_.size() - 1;
}

std::size_t VirtualDeployment::add_agent(std::size_t hub, agent::AgentCoreConfig config,
                                         const std::vector<proto::Registration>& registrations,
                                         const std::vector<proto::ServiceKey>& pinned,
                                         std::uint64_t seed, MonoTime first_beat) {
  auto slot = std::make_unique<AgentSlot>(std::move(config), seed);
  slot->hub = hub;
  for (const auto& reg : registrations)
    slot->core.add_registration(now_, reg);
  for (const auto& key : pinned)
    slot->core.pin(key);
  // A new core's first beat is due at once; the bench spreads them instead.
  slot->queued = true;
  slot->scheduled_at = std::max(first_beat, now_);
  agents_.push_back(std::move(slot));
  const auto index = agents_.size() - 1;
  due_.push_back(Due{agents_.back()->scheduled_at, index});
  std::push_heap(due_.begin(), due_.end(), std::greater<>{});
  return index;
}

void VirtualDeployment::add_registration(std::size_t agent, proto::Registration reg) {
  deliver(agent, agents_.at(agent)->core.add_registration(now_, std::move(reg)));
}

void VirtualDeployment::remove_registration(std::size_t agent, const proto::InstanceKey& key) {
  deliver(agent, agents_.at(agent)->core.remove_registration(now_, key.service, key.id));
}

void VirtualDeployment::reset_traffic(Duration window) {
  for (auto& h : hubs_)
    h.traffic = Traffic{};
  window_ = window;
  window_start_ = now_;
}

void VirtualDeployment::run_until(MonoTime until) {
  for (;;) {
    for (int pass = 0; pass < kMaxPassesPerInstant && process_due(); ++pass) {
    }
    const MonoTime next = std::max(next_event(), now_ + Duration{1});
    if (next > until) break;
    now_ = next;
  }
  now_ = std::max(now_, until);
}

MonoTime VirtualDeployment::next_event() const {
  MonoTime next = next_flush_;
  if (!due_.empty()) next = std::min(next, due_.front().at);
  for (const auto& h : hubs_)
    if (auto at = h.core->next_deadline()) next = std::min(next, *at);
  return next;
}

bool VirtualDeployment::process_due() {
  bool worked = false;
  while (!due_.empty() && due_.front().at <= now_) {
    std::pop_heap(due_.begin(), due_.end(), std::greater<>{});
    const Due due = due_.back();
    due_.pop_back();
    auto& slot = *agents_[due.agent];
    if (!slot.queued || due.at != slot.scheduled_at) continue;  // superseded by a newer entry
    slot.queued = false;
    if (slot.core.next_deadline() > now_) {
      schedule(due.agent);
      continue;
    }
    worked = true;
    deliver(due.agent, slot.core.on_timer(now_));
    settle();
  }
  for (auto& h : hubs_) {
    if (auto at = h.core->next_deadline(); at && *at <= now_) {
      h.core->tick(now_);
      worked = true;
    }
  }
  settle();
  if (now_ >= next_flush_) {
    for (auto& h : hubs_)
      h.core->take_persist_batch();  // no disk: what would be written is dropped
    next_flush_ = now_ + flush_interval_;
  }
  return worked;
}

void VirtualDeployment::schedule(std::size_t agent) {
  auto& slot = *agents_[agent];
  const auto at = slot.core.next_deadline();
  if (slot.queued && at == slot.scheduled_at) return;
  // A stopped agent's deadline is "never"; it needs no entry.
  if (at - now_ > std::chrono::hours(24 * 365)) {
    slot.queued = false;
    return;
  }
  slot.queued = true;
  slot.scheduled_at = at;
  due_.push_back(Due{at, agent});
  std::push_heap(due_.begin(), due_.end(), std::greater<>{});
}

void VirtualDeployment::deliver(std::size_t agent, agent::AgentActions actions) {
  auto& slot = *agents_[agent];
  for (const auto& out : actions.send) {
    auto result = receive(slot.hub, out.message, /*from_hub=*/false);
    if (result.deferred != 0) {
      deferred_[{slot.hub, result.deferred}] = DeferredTarget{false, agent, 0};
      continue;
    }
    answered(slot.hub, result.reply);
    deliver(agent, slot.core.on_message(now_, 0, result.reply));
  }
  schedule(agent);
}

hub::HandleResult VirtualDeployment::receive(std::size_t hub, const proto::Message& message,
                                             bool from_hub) {
  Traffic& t = hubs_[hub].traffic;
  ++(from_hub ? t.from_hubs : t.from_agents);
  t.bytes_in += proto::encode(message).size();
  const auto* beat = std::get_if<proto::UpBeat>(&message);
  const bool carries_set = beat != nullptr && (beat->registrations || beat->delta);
  if (carries_set) {
    ++t.carrying_sets;
    if (beat->registrations) t.registrations += beat->registrations->size();
    if (beat->delta) t.registrations += beat->delta->upserts.size() + beat->delta->removed.size();
  } else if (std::holds_alternative<proto::Query>(message)) {
    ++t.queries;
  }
  if (window_.count() > 0) {
    const auto index = static_cast<std::size_t>((now_ - window_start_) / window_);
    if (t.per_window.size() <= index) t.per_window.resize(index + 1, 0);
    ++t.per_window[index];
  }
  if (!hubs_[hub].timed) return hubs_[hub].core->handle(now_, message);
  const auto started = cpu_ns(CLOCK_THREAD_CPUTIME_ID);
  auto result = hubs_[hub].core->handle(now_, message);
  const auto ns = cpu_ns(CLOCK_THREAD_CPUTIME_ID) - started;
  t.handle_ns += ns;
  t.handle_ns_max = std::max(t.handle_ns_max, ns);
  if (carries_set) t.handle_ns_sets += ns;
  return result;
}

void VirtualDeployment::answered(std::size_t hub, const proto::Message& reply) {
  Traffic& t = hubs_[hub].traffic;
  t.bytes_out += proto::encode(reply).size();
  if (const auto* down = std::get_if<proto::DownBeat>(&reply); down && down->send_full)
    ++t.send_full;
  if (std::holds_alternative<proto::ErrorReply>(reply)) ++t.errors;
}

void VirtualDeployment::settle() {
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t h = 0; h < hubs_.size(); ++h) {
      for (auto& out : hubs_[h].core->take_upstream_messages()) {
        moved = true;
        const std::size_t parent = *hubs_[h].upstream;
        auto result = receive(parent, out.message, /*from_hub=*/true);
        if (result.deferred != 0) {
          deferred_[{parent, result.deferred}] = DeferredTarget{true, h, out.upstream};
          continue;
        }
        answered(parent, result.reply);
        hubs_[h].core->on_upstream_message(now_, out.upstream, result.reply);
      }
      for (auto& reply : hubs_[h].core->take_deferred_replies()) {
        moved = true;
        auto it = deferred_.find({h, reply.token});
        if (it == deferred_.end()) continue;
        const DeferredTarget target = it->second;
        deferred_.erase(it);
        answered(h, reply.reply);
        if (target.to_hub)
          hubs_[target.index].core->on_upstream_message(now_, target.upstream, reply.reply);
        else
          deliver(target.index, agents_[target.index]->core.on_message(now_, 0, reply.reply));
      }
    }
  }
}

}  // namespace cascade::bench
