#include "cascade/sim/hub_process.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>

namespace cascade::sim {

HubProcess::HubProcess(HubProcessConfig config, EventQueue& events, Network& network,
                       HubHooks hooks)
    : config_(std::move(config)), events_(events), network_(network), hooks_(std::move(hooks)) {
  if (config_.audit_interval.count() > 0) next_audit_ = now();
}

void HubProcess::boot() {
  core_ = std::make_unique<hub::HubCore>(config_.core, disk_.next_epoch(), now());
  core_->restore(disk_.load(), now());
  audit_totals(/*force=*/true);  // restore() sets every total at once
  ++life_;
  route_core_output();
  schedule_flush();
  arm_timer();
  if (hooks_.started) hooks_.started();
}

void HubProcess::restart(HubCrash crash, Duration downtime) {
  if (!core_) throw std::logic_error("hub " + config_.core.hub_id + " is already down");
  if (crash == HubCrash::kAfterFlush) {
    flush();
  } else {
    stats_.replies_lost_in_crash += held_replies_.size();
    held_replies_.clear();
  }
  // The askers of deferred questions wait in vain; their own timeouts retry.
  stats_.deferred_lost_in_crash += deferred_.size();
  deferred_.clear();
  routes_.clear();  // the connections went with the process
  core_.reset();
  armed_.reset();
  ++life_;
  ++timer_gen_;
  ++stats_.restarts;
  if (downtime.count() == 0) {
    boot();
    return;
  }
  events_.after(downtime, [this, life = life_] {
    if (life == life_) boot();
  });
}

std::optional<std::size_t> HubProcess::upstream_index(Address from) const {
  const auto it = std::find(config_.upstreams.begin(), config_.upstreams.end(), from);
  if (it == config_.upstreams.end()) return std::nullopt;
  return static_cast<std::size_t>(it - config_.upstreams.begin());
}

std::vector<proto::Instance> HubProcess::instances(const proto::ServiceKey& service) const {
  std::vector<proto::Instance> out;
  const hub::ServiceEntry* entry = core_ ? core_->registry().find(service) : nullptr;
  if (entry == nullptr) return out;
  out.reserve(entry->instances.size());
  for (const hub::InstanceSlot* slot : entry->instances.sorted())
    out.push_back(slot->entry().served(slot->id()));
  return out;
}

bool HubProcess::has(const proto::ServiceKey& service, const std::string& instance_id) const {
  const hub::ServiceEntry* entry = core_ ? core_->registry().find(service) : nullptr;
  return entry != nullptr && entry->instances.contains(instance_id);
}

void HubProcess::receive(Address from, const proto::Message& message) {
  if (!core_) {
    ++stats_.lost_while_down;
    return;
  }
  if (const auto upstream = upstream_index(from)) {
    timed_call(config_.time_core, stats_.core_time,
               [&] { core_->on_upstream_message(now(), *upstream, message); });
  } else {
    // As the server does: a route back only to a node the core may push to.
    if (const auto* beat = std::get_if<proto::UpBeat>(&message);
        beat != nullptr && hub::HubCore::may_push_to(*beat))
      routes_.insert_or_assign(beat->node_id, from);
    const std::string_view source = config_.source_of ? config_.source_of(from) : "";
    auto result = timed_call(config_.time_core, stats_.core_time,
                             [&] { return core_->handle(now(), message, source); });
    if (result.deferred != 0)
      deferred_.emplace(result.deferred, from);
    else if (result.durable)
      held_replies_.push_back({from, std::move(result.reply)});
    else
      send(from, result.reply);
  }
  route_core_output();
  arm_timer();
  audit_totals();
  if (hooks_.received) hooks_.received(from, message);  // last: it may crash the hub
}

hub::ConfigGroups::Outcome HubProcess::edit_config(std::string_view group,
                                                   const std::vector<proto::ConfigEdit>& edits,
                                                   const std::string& author) {
  if (!core_) throw std::logic_error("hub " + config_.core.hub_id + " is down: no config edit");
  auto outcome = core_->edit_config(now(), group, edits, author, /*wall_ms=*/0);
  route_core_output();
  arm_timer();
  return outcome;
}

// What the core produced besides the reply: beats and questions for the
// upstreams, answers to questions it had deferred, and messages for nodes.
void HubProcess::route_core_output() {
  for (const auto& out : core_->take_upstream_messages())
    send(config_.upstreams.at(out.upstream), out.message);
  for (const auto& out : core_->take_node_messages()) {
    const auto route = routes_.find(out.node_id);
    if (route == routes_.end()) {
      ++stats_.node_messages_unroutable;
      continue;
    }
    ++stats_.node_messages_sent;
    send(route->second, out.message);
  }
  for (const auto& deferred : core_->take_deferred_replies()) {
    const auto it = deferred_.find(deferred.token);
    if (it == deferred_.end())
      throw std::logic_error("hub " + config_.core.hub_id + " released deferred token " +
                             std::to_string(deferred.token) + " that nobody waits for");
    send(it->second, deferred.reply);
    deferred_.erase(it);
  }
}

// Like the hub server: one batch per flush interval, then the replies it held.
void HubProcess::flush() {
  auto batch = core_->take_persist_batch();
  disk_.apply(batch);
  core_->reuse(std::move(batch));
  auto replies = std::move(held_replies_);
  held_replies_.clear();
  for (const auto& reply : replies)
    send(reply.to, reply.message);
}

void HubProcess::schedule_flush() {
  events_.after(config_.flush_interval, [this, life = life_] {
    if (life != life_) return;
    flush();
    schedule_flush();
  });
}

// Lease deadlines only move later, except when one is added to an empty queue
// or the front is removed (and an uplink's beat moves earlier on a change); an
// early wake-up just re-arms.
void HubProcess::arm_timer() {
  if (!core_) return;
  const auto next = core_->next_deadline();
  if (!next || (armed_ && *armed_ <= *next)) return;
  armed_ = *next;
  events_.at(*next, [this, gen = ++timer_gen_] { on_timer(gen); });
}

void HubProcess::on_timer(std::uint64_t gen) {
  if (gen != timer_gen_ || !core_) return;
  armed_.reset();
  const auto next = core_->next_deadline();
  if (next && *next <= now()) {
    timed_call(config_.time_core, stats_.core_time, [&] { core_->tick(now()); });
    route_core_output();
    audit_totals();
    if (hooks_.ticked) hooks_.ticked();
  }
  arm_timer();
}

void HubProcess::audit_totals(bool force) {
  if (!next_audit_ || !core_ || (!force && now() < *next_audit_)) return;
  next_audit_ = now() + config_.audit_interval;
  ++stats_.audits;
  const auto mismatch = core_->recount_mismatch();
  if (!mismatch) return;
  if (stats_.audit_failures++ > 0) return;  // the first says where it began
  stats_.first_audit_failure = "at " + std::to_string(to_ms(now())) + " ms: " + *mismatch;
  spdlog::error("hub {}: running totals drifted: {}", config_.core.hub_id, *mismatch);
}

}  // namespace cascade::sim
