// HubCore, part two: fast-fail reports, isolation and pushes between beats.
// (The beat, query and lease paths are in hub_core.cpp.)
//
// A failure signal names an address. The hub whose registry holds the
// instance at that address through its own agent decides (the owning tier);
// every other hub only routes: down to the lower-tier hub that reported the
// instance, or up when the address came from the upper tier. The decision
// then travels like any change: pushed to this tier's consumers at once,
// beaten up as part of the tier's aggregate, and pushed down again by every
// tier that serves the service.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>

#include "cascade/common/list_version.hpp"
#include "cascade/hub/hub_core.hpp"

namespace cascade::hub {

namespace {

constexpr std::uint32_t kMaxFailuresPerSignal = 1000;  // one signal cannot outvote a window

// The cap is a share of the instances consumers can rely on: unconfirmed
// ones (held through a partition) do not count, so reports during a
// partition cannot isolate every confirmed instance.
ServiceLoad load_of(const ServiceEntry& svc) {
  const auto confirmed_up = svc.up > svc.unconfirmed ? svc.up - svc.unconfirmed : 0;
  return {confirmed_up, svc.isolated};
}

// The service's instances at `address`, by id: a reported address is
// counted against each in the same order whatever the map's layout.
std::vector<const InstanceSlot*> at_address(const ServiceEntry& svc, std::string_view address) {
  std::vector<const InstanceSlot*> found;
  for (const InstanceSlot& slot : svc.instances)
    if (slot.entry().address() == address) found.push_back(&slot);
  std::sort(found.begin(), found.end(), InstanceSlot::id_less);
  return found;
}

}  // namespace

// With keys, a report is signed by its key: the isolation quorum counts
// distinct keys, so one compromised agent cannot isolate anything alone. A
// lower-tier hub's report keeps the reporters that hub signed its callers' as.
HandleResult HubCore::on_failure_report(MonoTime now, const proto::FailureReport& report,
                                        const Caller& caller) {
  proto::ReportAck ack;
  ack.request_id = report.request_id;
  const bool sign = !caller.open() && caller.role != access::Role::kHub;
  for (const auto& signal : report.signals) {
    if (!sign) {
      route_signal(now, signal, report.hops, ack);
      continue;
    }
    auto signed_signal = signal;
    signed_signal.reporter = caller.name;
    route_signal(now, signed_signal, report.hops, ack);
  }
  if (report.request_id == 0) return {proto::Message{}, false, 0, true};
  return {ack};
}

void HubCore::route_signal(MonoTime now, const proto::FailureSignal& signal, std::uint32_t hops,
                           proto::ReportAck& ack) {
  ++counters_.failure_signals;
  bool held_here = false;
  std::vector<std::string> dead;  // expired after the walk over the service's instances
  if (ServiceEntry* svc = registry_.find(signal.service)) {
    for (const InstanceSlot* slot : at_address(*svc, signal.address)) {
      const std::string id(slot->id());
      const InstanceEntry& entry = slot->entry();
      held_here = true;
      const Node* owner = nodes_.find(entry.owner);
      if (refused_at_held(signal, owner)) dead.push_back(owner->id.str());
      if (owner == nullptr || owner->tier == 0) {
        count_signal(now, *svc, id, signal, ack);
      } else if (may_forward(hops)) {
        node_messages_.push_back({owner->id.str(), proto::FailureReport{0, {signal}, hops + 1}});
        ++counters_.signals_sent_down;
        ++ack.forwarded;
      } else {
        ++counters_.signals_dropped;
      }
    }
  }
  for (const auto& node_id : dead)
    expire_dead(now, node_id);
  if (held_here) return;
  if (forward_up(now, signal, hops)) {
    ++ack.forwarded;
    return;
  }
  ++counters_.signals_unknown;
  ++ack.unknown;
}

// A caller found nothing listening at an address of a held node: evidence
// of death, like a refused probe (hub/liveness_probes.hpp).
bool HubCore::refused_at_held(const proto::FailureSignal& signal, const Node* owner) {
  return owner != nullptr && owner->held && owner->tier == 0 &&
         signal.kind == proto::FailureKind::kConnectionRefused &&
         probes_.on_refused_report(owner->id, signal.address);
}

bool HubCore::may_forward(std::uint32_t hops) const {
  // hops comes from the wire: hops + 1 must not wrap to 0 and restart the count.
  return hops < config_.max_report_hops && hops + 1 < config_.max_report_hops;
}

bool HubCore::forward_up(MonoTime now, const proto::FailureSignal& signal, std::uint32_t hops) {
  if (!uplink_ || !uplink_->knows_address(now, signal.service, signal.address)) return false;
  if (!may_forward(hops)) {
    ++counters_.signals_dropped;
    return true;  // known above, but this report has travelled far enough
  }
  uplink_->send_report(now, proto::FailureReport{0, {signal}, hops + 1});
  ++counters_.signals_sent_up;
  return true;
}

void HubCore::count_signal(MonoTime now, ServiceEntry& svc, const std::string& id,
                           const proto::FailureSignal& signal, proto::ReportAck& ack) {
  ++counters_.signals_counted;
  ++ack.accepted;
  const proto::InstanceKey key{svc.key, id};
  const InstanceEntry& entry = svc.instances.find(id)->entry();
  // The tracker outlives a registry entry that left and came back: an
  // isolation the registry no longer shows is stale.
  if (isolation_.is_isolated(key) && entry.verdict().health != proto::Health::kIsolated)
    isolation_.forget(key);
  const auto count = std::clamp<std::uint32_t>(signal.count, 1, kMaxFailuresPerSignal);
  auto outcome = isolation_.on_report(now, key, signal.reporter, count, load_of(svc));
  if (outcome.verdict == ReportVerdict::kCapped) {
    ++counters_.isolations_capped;
    return;
  }
  if (outcome.verdict != ReportVerdict::kIsolate) return;
  registry_.begin_txn();
  registry_.set_verdict(svc, id, {proto::Health::kIsolated, outcome.reason});
  ++counters_.isolations;
  ++ack.isolated;
  log_event(spdlog::level::warn, "instance isolated after failure reports",
            {{"hub", config_.hub_id},
             {"service", svc.key.name},
             {"group", svc.key.group},
             {"instance", id},
             {"address", entry.address()},
             {"isolation_ms", outcome.isolation.count()},
             {"reason", outcome.reason}});
}

void HubCore::readmit_due(MonoTime now) {
  const auto due = isolation_.due(now);
  if (due.empty()) return;
  registry_.begin_txn();
  for (const auto& key : due) {
    ServiceEntry* svc = registry_.find(key.service);
    const InstanceSlot* slot = svc != nullptr ? svc->instances.find(key.id) : nullptr;
    if (slot == nullptr) continue;
    if (registry_.set_verdict(*svc, key.id, verdict_after_isolation(slot->entry())))
      ++counters_.readmissions;
    log_event(spdlog::level::info, "instance readmitted after isolation (on probation)",
              {{"hub", config_.hub_id},
               {"service", key.service.name},
               {"group", key.service.group},
               {"instance", key.id}});
  }
}

// A provider that restarted is a new process: under readmit_on_restart its
// isolations end now instead of at their time.
void HubCore::readmit_restarted(MonoTime now, Node& node) {
  registry_.begin_txn();
  for (const auto& owned : in_key_order(node.owned)) {  // versions replay from a seed
    if (!isolation_.readmit(now, {owned.service->key, std::string(owned.id())})) continue;
    if (registry_.set_verdict(*owned.service, owned.id(), verdict_after_isolation(owned.entry())))
      ++counters_.readmissions;
  }
}

// What an instance is served as once its isolation ends: unconfirmed if its
// node's lease ran out meanwhile and eviction protection holds it, else ok.
Verdict HubCore::verdict_after_isolation(const InstanceEntry& entry) const {
  const Node* owner = nodes_.find(entry.owner);
  if (owner != nullptr && owner->held)
    return {proto::Health::kUnconfirmed, std::string(kUnconfirmedReason)};
  return {};
}

// Every change of a served list (a registration, a deregistration, an
// expiry, a status or health change, an operator's mark or rules) is pushed
// to the service's consumers between beats: they learn it within the push
// delay, not at their next beat. A service nobody follows here is not marked.
void HubCore::drain_served_changes(MonoTime now) {
  for (const auto* svc : registry_.take_served_changes())
    if (consumers_.contains(svc)) push_gate_.mark(now, svc);
}

void HubCore::after_changes(MonoTime now) {
  drain_served_changes(now);
  if (uplink_) feed_uplink(now);
  registry_.stamp_noted(now, config_.empty_service_ttl);
}

// An entry a consumer follows stays (its last consumer's leaving notes it
// again); a pending push of one nobody follows would reach nobody.
void HubCore::reclaim_services(MonoTime now) {
  counters_.services_reclaimed +=
      registry_.reclaim(now, config_.max_reclaims_per_tick, [this](const ServiceEntry& svc) {
        if (consumers_.contains(&svc)) return false;
        push_gate_.forget(&svc);
        return true;
      });
  registry_.stamp_noted(now, config_.empty_service_ttl);  // those still in a change list
}

// One pushed DownBeat per consumer, with every pushed service it uses.
// Services go in key order and consumers in id order (consumers_), never in
// the order of pointer-keyed containers, so a flush replays from a seed.
void HubCore::flush_pushes(MonoTime now) {
  auto services = push_gate_.take(now, push_budget_);
  if (services.empty()) return;
  std::sort(services.begin(), services.end(),
            [](const ServiceEntry* a, const ServiceEntry* b) { return a->key < b->key; });
  std::map<std::string_view, std::pair<Node*, std::vector<proto::ServiceUpdate>>> per_node;
  for (const auto* svc : services) {
    auto consumers = consumers_.find(svc);
    if (consumers == consumers_.end()) continue;
    // Consumers of a service mostly hold the same version: its update is
    // built (a delta walked from the log, a composed list) once per flush.
    std::map<std::uint64_t, std::vector<proto::ServiceUpdate>> built;  // held -> update
    std::size_t ordinal = 0;
    bool sent = false;
    for (Node* node : consumers->second) {
      if (!push_gate_.admit(push_budget_, ordinal++)) continue;
      auto& [who, updates] = per_node[node->id];
      who = node;
      for (auto& use : node->uses()) {
        if (use.service != svc) continue;
        auto [update, first] = built.try_emplace(use.held);
        if (first)
          add_update(now, proto::ServiceUse{svc->key, use.held}, update->second);
        else
          count_sent(update->second);
        if (update->second.empty()) continue;
        updates.push_back(update->second.front());
        use.held = update->second.front().version;
        sent = true;
      }
    }
    if (sent) push_gate_.pushed(now, svc);
  }
  for (auto& [id, entry] : per_node)
    if (!entry.second.empty()) push_to(*entry.first, std::move(entry.second));
}

// Every update sent downstream is counted here, by kind: once when built
// (add_update) and again each time a flush sends it to another consumer.
void HubCore::count_sent(std::span<const proto::ServiceUpdate> updates) {
  for (const auto& u : updates) {
    if (u.kind == proto::UpdateKind::kDelta)
      ++counters_.updates_delta;
    else if (u.kind == proto::UpdateKind::kGone)
      ++counters_.updates_gone;
    else if ((u.version & proto::kCrossTierVersionBit) != 0)
      ++counters_.updates_cross_tier;
    else
      ++counters_.updates_full;
  }
}

void HubCore::push_to(Node& node, std::vector<proto::ServiceUpdate> updates) {
  auto push = push_for(node.id.str());
  push.updates = std::move(updates);
  node_messages_.push_back({node.id.str(), std::move(push)});
  ++counters_.pushes;
}

// Config changes go out on pushes of their own (a DownBeat with only
// config_updates), one per follower, in node-id order.
void HubCore::flush_config_pushes(MonoTime now) {
  for (auto& [node, updates] :
       config_centre_.take_pushes(now, push_budget_, config_awaits_upper(now))) {
    auto push = push_for(node);
    push.config_updates = std::move(updates);
    node_messages_.push_back({node, std::move(push)});
    ++counters_.config_pushes;
  }
}

proto::DownBeat HubCore::push_for(const std::string& node_id) const {
  proto::DownBeat push;
  push.hub_id = config_.hub_id;
  push.hub_epoch = epoch_;
  push.node_id = node_id;
  push.push = true;
  return push;
}

}  // namespace cascade::hub
