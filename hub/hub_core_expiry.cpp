// HubCore, part three: lease expiry under eviction protection.
//
// A node whose lease ran out is not simply dropped: the eviction guard
// (hub/eviction_guard.hpp) may hold it when dropping it would expire too
// large a share of a service or of the registry within a window, or when its
// whole source (a proxy, a subnet, a lower-tier hub) went quiet at once. A
// held node stays listed with its instances marked `unconfirmed`, so
// consumers prefer confirmed instances while a partition lasts and get them
// all back, without churn, when it heals. Every hold ends: the node beats
// again, or the guard releases it (the window has room, max_hold passed, or
// protection was switched off).

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cassert>
#include <map>

#include "cascade/hub/hub_core.hpp"

namespace cascade::hub {

// Only a change of source (a first beat through a shared one included) and a
// held node's return tell the guard anything: the steady beat costs a string
// comparison.
void HubCore::note_source(MonoTime now, Node& node, std::string_view source) {
  if (!node.held && node.source == source) return;
  [[maybe_unused]] const bool was_held = guard_.on_node_seen(node.id, node.source.str(), source);
  if (node.source != source) node.source = SharedText(source, node_texts_);
  assert(was_held == node.held);  // the guard holds exactly the held nodes (guard_mismatch)
  if (node.held) {
    node.held = false;
    probes_.forget(node.id);
    mark_unconfirmed(node, false);
    std::uint64_t suppressed = 0;
    if (confirmed_log_.allow(now, suppressed))
      log_event(spdlog::level::info, "held agent beat again: its instances are confirmed",
                {{"hub", config_.hub_id},
                 {"node", node.id},
                 {"instances", node.owned.size()},
                 {"suppressed", suppressed}});
  }
}

MonoTime HubCore::lease_deadline(MonoTime now) const {
  return lease_deadline(now, governor_.stretch());
}

MonoTime HubCore::lease_deadline(MonoTime now, std::uint32_t stretch) const {
  const auto granted = now + config_.lease * stretch;
  const auto latest = leases_.last_deadline();
  return latest ? std::max(granted, *latest) : granted;
}

void HubCore::expire_leases(MonoTime now) {
  std::vector<Node*> expired;
  const auto n = leases_.expire(now, config_.max_expirations_per_tick,
                                [&](Node& node) { expired.push_back(&node); });
  if (n == config_.max_expirations_per_tick && leases_.next_deadline() &&
      *leases_.next_deadline() <= now)
    ++counters_.expiry_deferred;
  for (Node* node : expired) {
    if (postpone_expiry(now, *node)) continue;
    const auto verdict = guard_.on_lease_expired(now, expiry_request(*node));
    if (verdict == ExpiryVerdict::kExpire)
      expire(now, *node, "lease ran out");
    else
      hold(now, *node, verdict);
  }
}

bool HubCore::postpone_expiry(MonoTime now, Node& node) {
  if (now >= shed_grace_until_) return false;
  // The queue takes deadlines in order: never before one already granted.
  leases_.add(node, std::max(shed_grace_until_, leases_.last_deadline().value_or(now)));
  ++counters_.expiries_postponed;
  return true;
}

// The sender of a shed frame asks again after retry_after, spread by its
// jitter (at most half as much again): its lease is safe until twice that.
proto::ErrorReply HubCore::on_frame_shed(MonoTime now, std::uint64_t ref, Duration waited) {
  ++counters_.frames_shed;
  const auto retry_after = std::max(config_.beat_interval, governor_.granted_interval());
  shed_grace_until_ = std::max(shed_grace_until_, now + retry_after * 2);
  std::uint64_t suppressed = 0;
  if (shed_log_.allow(now, suppressed))
    log_event(spdlog::level::warn, "hub past its queue bound: frames shed, answered busy",
              {{"hub", config_.hub_id},
               {"waited_ms", waited.count()},
               {"retry_after_ms", retry_after.count()},
               {"shed_total", counters_.frames_shed},
               {"suppressed", suppressed}});
  return proto::ErrorReply{
      proto::ErrorCode::kBusy,
      fmt::format("hub overloaded: frame waited {} ms in its queue", waited.count()), ref,
      static_cast<std::uint32_t>(retry_after.count())};
}

// Held nodes the guard lets go now (room in the window, max_hold, switched off).
void HubCore::release_held(MonoTime now) {
  for (const auto& id : guard_.due(now, config_.max_expirations_per_tick)) {
    Node* node = nodes_.find(id);
    if (node == nullptr) continue;
    expire(now, *node, "held by eviction protection, released");
  }
}

void HubCore::hold(MonoTime now, Node& node, ExpiryVerdict verdict) {
  // Asked again after another lease period if still held and silent; its
  // addresses are probed each time, so a process that died later is found too.
  leases_.add(node, lease_deadline(now));
  // Only agents' instances: a lower-tier hub's sit in another datacenter.
  if (node.tier == 0) probes_.probe(node.id, addresses_of(node));
  if (node.held) return;
  node.held = true;
  mark_unconfirmed(node, true);
  ++counters_.expiries_held;
  std::uint64_t suppressed = 0;
  if (!held_log_.allow(now, suppressed)) return;
  log_event(spdlog::level::warn, "agent missed its lease; held by eviction protection",
            {{"hub", config_.hub_id},
             {"node", node.id},
             {"held_for", verdict_name(verdict)},
             {"source", node.source.str()},
             {"instances", node.owned.size()},
             {"suppressed", suppressed}});
}

void HubCore::expire(MonoTime now, Node& node, const char* why) {
  // Asked before the node goes: in a mass expiry most lines are suppressed,
  // and their ids need not be copied.
  std::uint64_t suppressed = 0;
  const bool logged = expired_log_.allow(now, suppressed);
  const std::string id = logged ? node.id.str() : std::string{};
  const auto removed = drop_node(node);
  ++counters_.nodes_expired;
  counters_.instances_expired += removed;
  if (!logged) return;
  log_event(spdlog::level::info, "agent expired",
            {{"hub", config_.hub_id},
             {"node", id},
             {"why", why},
             {"lease_ms", config_.lease.count()},
             {"instances", removed},
             {"suppressed", suppressed}});
}

void HubCore::on_probe_result(MonoTime now, const ProbeResult& result) {
  if (!probes_.on_result(result)) return;
  registry_.begin_txn();
  expire_dead(now, result.node_id);
  after_changes(now);
}

void HubCore::expire_dead(MonoTime now, const std::string& node_id) {
  Node* node = nodes_.find(node_id);
  if (node == nullptr || !node->held) return;
  // Not a partition's casualty: forgotten like a graceful removal, so it
  // spends none of the budget that paces the expiry of nodes that may return.
  guard_.on_node_removed(node_id, node->source.str());
  ++counters_.nodes_confirmed_dead;
  expire(now, *node, "held, but every address refused connections: the process is gone");
}

std::vector<std::string> HubCore::addresses_of(const Node& node) const {
  std::vector<std::string> addresses;
  for (const auto& owned : node.owned)
    if (owned.entry().owner == node.id) addresses.emplace_back(owned.entry().address());
  return addresses;
}

ExpiryRequest HubCore::expiry_request(const Node& node) const {
  ExpiryRequest request;
  request.node_id = node.id;
  request.source = node.source.str();
  request.registry_instances = registry_.instance_count();
  std::map<const ServiceEntry*, std::uint32_t> per_service;
  for (const auto& owned : node.owned)
    ++per_service[owned.service];
  for (const auto& [svc, count] : per_service)
    request.services.push_back(
        {svc->key, count, static_cast<std::uint32_t>(svc->instances.size())});
  return request;
}

// An isolation says more than "unconfirmed" and is left as it is.
void HubCore::mark_unconfirmed(Node& node, bool unconfirmed) {
  registry_.begin_txn();
  const Verdict held{proto::Health::kUnconfirmed, std::string(kUnconfirmedReason)};
  for (const auto& owned : in_key_order(node.owned)) {
    if (owned.entry().owner != node.id) continue;
    const auto health = owned.entry().verdict().health;
    if (unconfirmed && health == proto::Health::kOk)
      registry_.set_verdict(*owned.service, owned.id(), held);
    else if (!unconfirmed && health == proto::Health::kUnconfirmed)
      registry_.set_verdict(*owned.service, owned.id(), {});
  }
}

}  // namespace cascade::hub
