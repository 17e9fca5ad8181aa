#include "hub/hub_core.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "common/digest.hpp"

namespace cascade::hub {

HubCore::HubCore(HubCoreConfig config, std::uint64_t hub_epoch, MonoTime started)
    : config_(std::move(config)),
      epoch_(hub_epoch),
      started_(started),
      registry_(hub_epoch, config_.change_log_per_service) {}

void HubCore::restore(const HubSnapshot& snapshot, MonoTime now) {
  for (const auto& rec : snapshot.services)
    registry_.restore_version(rec.service, rec.version);
  for (const auto& rec : snapshot.nodes) {
    auto [it, inserted] = nodes_.try_emplace(rec.node_id);
    Node& node = it->second;
    node.id = rec.node_id;
    node.epoch = rec.epoch;
    node.digest = rec.digest;
    node.set_known = true;
    if (inserted) {
      node.lease = leases_.add(&node, now + config_.lease);
      index_.insert(&node);
    }
  }
  for (const auto& rec : snapshot.instances) {
    auto node = nodes_.find(rec.owner);
    if (node == nodes_.end()) continue;  // its agent was deleted; the row is an orphan
    registry_.restore_instance(rec.service, rec.instance, rec.owner);
    node->second.owned.push_back({registry_.find(rec.service), rec.instance.id});
  }
  for (auto& [id, node] : nodes_)
    std::sort(node.owned.begin(), node.owned.end());
  registry_.stamp_unversioned();
  spdlog::info("restored {} agents, {} services, {} instances; grace until lease expiry ({} ms)",
               nodes_.size(), registry_.service_count(), registry_.instance_count(),
               config_.lease.count());
}

HandleResult HubCore::handle(MonoTime now, const proto::Message& message) {
  return std::visit(
      [&](const auto& m) -> HandleResult {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::UpBeat>) {
          return on_upbeat(now, m);
        } else if constexpr (std::is_same_v<T, proto::Query>) {
          return on_query(m);
        } else if constexpr (std::is_same_v<T, proto::Deregister>) {
          return on_deregister(now, m);
        } else if constexpr (std::is_same_v<T, proto::StatusRequest>) {
          return {status(now, m.request_id)};
        } else if constexpr (std::is_same_v<T, proto::ServicesRequest>) {
          return {services(m.request_id)};
        } else {
          ++counters_.unexpected_messages;
          return {proto::ErrorReply{
              proto::ErrorCode::kUnknownType,
              std::string("a hub does not accept ") + proto::to_string(proto::type_of(message)),
              0}};
        }
      },
      message);
}

proto::ErrorReply HubCore::on_decode_failure(const proto::DecodeFailure& failure) {
  ++counters_.decode_errors;
  return proto::to_error_reply(failure);
}

HandleResult HubCore::reject(proto::ErrorCode code, std::string message, std::uint64_t ref) {
  ++counters_.invalid_messages;
  return {proto::ErrorReply{code, std::move(message), ref}};
}

void HubCore::prefetch(const proto::Message& message) const {
  if (const auto* beat = std::get_if<proto::UpBeat>(&message)) index_.prefetch(beat->node_id);
}

HubCore::Node& HubCore::admit(MonoTime now, const proto::UpBeat& beat, Node* known,
                              bool& state_changed) {
  Node& node = known ? *known : nodes_.try_emplace(beat.node_id).first->second;
  if (!known) {
    node.id = beat.node_id;
    index_.insert(&node);
    node.epoch = beat.epoch;
    node.lease = leases_.add(&node, now + config_.lease);
    state_changed = true;
    return node;
  }
  if (beat.epoch > node.epoch) {
    // A restarted agent: its sequence starts over. Its instances stay until
    // its set is known: a matching digest keeps them without any churn.
    node.epoch = beat.epoch;
    node.last_seq = 0;
    state_changed = true;
  }
  leases_.renew(node.lease, now + config_.lease);
  return node;
}

HandleResult HubCore::on_upbeat(MonoTime now, const proto::UpBeat& beat) {
  ++counters_.beats;
  // Refused: an older incarnation of a known node, or an incarnation that has
  // deregistered (its late beat must not bring it back).
  Node* known = index_.find(beat.node_id);
  if (known ? beat.epoch < known->epoch : departed_.refuses(beat.node_id, beat.epoch, now)) {
    ++counters_.stale_epoch;
    return {proto::ErrorReply{proto::ErrorCode::kStaleEpoch,
                              "a newer or deregistered incarnation of this node is known",
                              beat.seq}};
  }
  if (beat.registrations && beat.registrations->size() > config_.max_registrations_per_node)
    return reject(proto::ErrorCode::kInvalid, "too many registrations in one set", beat.seq);

  bool state_changed = false;
  Node& node = admit(now, beat, known, state_changed);
  const bool in_order = beat.seq > node.last_seq;
  if (in_order) {
    node.last_seq = beat.seq;
    if (beat.registrations) state_changed |= apply_registration_set(node, *beat.registrations);
  } else {
    ++counters_.beats_stale_seq;  // delayed or duplicated: renew, but never apply an older set
  }
  if (state_changed) dirty_nodes_.push_back(node.id);

  proto::DownBeat reply;
  reply.hub_id = config_.hub_id;
  reply.hub_epoch = epoch_;
  reply.node_id = node.id;
  reply.ack_seq = beat.seq;
  reply.lease_ms = static_cast<std::uint32_t>(config_.lease.count());
  reply.send_full = !(node.set_known && node.digest == beat.digest);
  if (reply.send_full) ++counters_.full_sets_requested;
  collect_updates(node, beat.uses, reply.updates);
  // A carried set is acknowledged by this reply even when it changed nothing
  // in memory: the change it repeats may still be waiting for its commit.
  return {std::move(reply), state_changed || beat.registrations.has_value()};
}

bool HubCore::apply_registration_set(Node& node, std::vector<proto::Registration> regs) {
  ++counters_.full_sets_received;
  registry_.begin_txn();
  proto::canonicalize(regs);
  const std::uint64_t digest = proto::digest_of(regs);
  bool changed = digest != node.digest || !node.set_known;
  std::vector<OwnedInstance> now_owned;
  now_owned.reserve(regs.size());
  for (const auto& reg : regs) {
    ServiceEntry& svc = registry_.service(reg.service);
    std::string taken_from;
    changed |= registry_.upsert(svc, reg.instance, node.id, &taken_from);
    // Two agents register the same instance: the newer set wins, and the
    // other agent is asked for its set again, so that when the new owner
    // drops the instance the old one re-claims it instead of it vanishing.
    if (!taken_from.empty())
      if (Node* previous = index_.find(taken_from)) previous->set_known = false;
    now_owned.push_back({&svc, reg.instance.id});
  }
  std::sort(now_owned.begin(), now_owned.end());
  now_owned.erase(std::unique(now_owned.begin(), now_owned.end()), now_owned.end());
  std::vector<OwnedInstance> dropped;
  std::set_difference(node.owned.begin(), node.owned.end(), now_owned.begin(), now_owned.end(),
                      std::back_inserter(dropped));
  for (const auto& gone : dropped)
    changed |= registry_.remove(*gone.service, gone.id, node.id);
  node.owned = std::move(now_owned);
  node.digest = digest;
  node.set_known = true;
  return changed;
}

void HubCore::collect_updates(Node& node, const std::vector<proto::ServiceUse>& uses,
                              std::vector<proto::ServiceUpdate>& out) {
  node.uses.clear();
  for (const auto& use : uses) {
    const ServiceEntry* svc = registry_.find(use.service);
    if (svc == nullptr) {
      if (use.version != 0) {
        out.push_back(
            proto::ServiceUpdate{use.service, use.version, 0, proto::UpdateKind::kGone, {}, {}});
        ++counters_.updates_gone;
      }
      continue;
    }
    node.uses.push_back(svc);
    auto update = registry_.update_for(*svc, use.version);
    if (!update) continue;
    if (update->kind == proto::UpdateKind::kFull)
      ++counters_.updates_full;
    else
      ++counters_.updates_delta;
    out.push_back(std::move(*update));
  }
}

HandleResult HubCore::on_query(const proto::Query& query) {
  ++counters_.queries;
  proto::QueryReply reply;
  reply.request_id = query.request_id;
  reply.hub_id = config_.hub_id;
  reply.hub_epoch = epoch_;
  reply.service = query.service;
  reply.tier = config_.tier;
  reply.source = proto::AnswerSource::kLocal;
  const ServiceEntry* svc = registry_.find(query.service);
  if (svc != nullptr) {
    reply.version = svc->version;
    reply.instances = registry_.full_update(*svc, 0).upserts;
  }
  reply.found = !reply.instances.empty();
  if (!reply.found) ++counters_.queries_not_found;
  return {std::move(reply)};
}

HandleResult HubCore::on_deregister(MonoTime now, const proto::Deregister& msg) {
  auto it = nodes_.find(msg.node_id);
  if (it != nodes_.end() && msg.epoch < it->second.epoch) {
    ++counters_.stale_epoch;
    return {proto::ErrorReply{proto::ErrorCode::kStaleEpoch,
                              "a newer incarnation of this node is registered", msg.seq}};
  }
  ++counters_.deregistrations;
  std::uint32_t removed = 0;
  if (it != nodes_.end()) {
    registry_.begin_txn();
    leases_.remove(it->second.lease);
    removed = static_cast<std::uint32_t>(drop_node(it->second));
    spdlog::info("agent {} deregistered {} instances", msg.node_id, removed);
  }
  departed_.add(msg.node_id, msg.epoch, now + config_.lease);
  return {proto::DeregisterAck{msg.node_id, msg.seq, removed}, true};
}

std::size_t HubCore::drop_node(Node& node) {
  std::size_t removed = 0;
  for (const auto& owned : node.owned)
    if (registry_.remove(*owned.service, owned.id, node.id)) ++removed;
  dirty_nodes_.push_back(node.id);
  index_.erase(node.id);
  nodes_.erase(node.id);  // `node` is gone after this line
  return removed;
}

void HubCore::tick(MonoTime now) {
  departed_.prune(now);
  registry_.begin_txn();
  std::vector<Node*> expired;
  const auto n = leases_.expire(now, config_.max_expirations_per_tick,
                                [&](Node* node) { expired.push_back(node); });
  if (n == config_.max_expirations_per_tick && leases_.next_deadline() &&
      *leases_.next_deadline() <= now)
    ++counters_.expiry_deferred;
  for (Node* node : expired) {
    const std::string id = node->id;
    const auto removed = drop_node(*node);
    ++counters_.nodes_expired;
    counters_.instances_expired += removed;
    spdlog::info("agent {} expired: lease of {} ms ran out, {} instances removed", id,
                 config_.lease.count(), removed);
  }
}

std::optional<MonoTime> HubCore::next_deadline() const {
  return leases_.next_deadline();
}

std::size_t HubCore::subscription_count() const {
  std::size_t n = 0;
  for (const auto& [id, node] : nodes_)
    n += node.uses.size();
  return n;
}

proto::StatusReply HubCore::status(MonoTime now, std::uint64_t request_id) const {
  proto::StatusReply s;
  s.request_id = request_id;
  s.hub_id = config_.hub_id;
  s.tier = config_.tier;
  s.hub_epoch = epoch_;
  s.uptime_ms = (now - started_).count();
  s.nodes = nodes_.size();
  s.services = registry_.service_count();
  s.instances = registry_.instance_count();
  s.counters = counters_.list();
  s.counters.emplace_back("subscriptions", subscription_count());
  return s;
}

proto::ServicesReply HubCore::services(std::uint64_t request_id) const {
  proto::ServicesReply reply;
  reply.request_id = request_id;
  registry_.for_each_service([&](const ServiceEntry& svc) {
    if (svc.instances.empty()) return;
    reply.services.push_back(
        {svc.key, svc.version, static_cast<std::uint32_t>(svc.instances.size()), svc.up_count()});
  });
  std::sort(reply.services.begin(), reply.services.end(),
            [](const auto& a, const auto& b) { return a.service < b.service; });
  return reply;
}

void HubCore::requeue(const PersistBatch& failed) {
  for (const auto& n : failed.node_upserts)
    dirty_nodes_.push_back(n.node_id);
  for (const auto& id : failed.node_deletes)
    dirty_nodes_.push_back(id);
  for (const auto& i : failed.instance_upserts)
    registry_.mark_dirty(i.service, i.instance.id);
  for (const auto& k : failed.instance_deletes)
    registry_.mark_dirty(k.service, k.id);
  for (const auto& s : failed.service_versions)
    registry_.mark_dirty(s.service, std::nullopt);
}

PersistBatch HubCore::take_persist_batch() {
  PersistBatch batch;
  std::sort(dirty_nodes_.begin(), dirty_nodes_.end());
  dirty_nodes_.erase(std::unique(dirty_nodes_.begin(), dirty_nodes_.end()), dirty_nodes_.end());
  for (const auto& id : dirty_nodes_) {
    auto it = nodes_.find(id);
    if (it == nodes_.end())
      batch.node_deletes.push_back(id);
    else
      batch.node_upserts.push_back({id, it->second.epoch, it->second.digest});
  }
  dirty_nodes_.clear();
  for (const auto& dirty : registry_.take_dirty_instances()) {
    auto it = dirty.service->instances.find(dirty.id);
    if (it == dirty.service->instances.end())
      batch.instance_deletes.push_back({dirty.service->key, dirty.id});
    else
      batch.instance_upserts.push_back({dirty.service->key, it->second.instance, it->second.owner});
  }
  for (const auto* svc : registry_.take_dirty_services())
    batch.service_versions.push_back({svc->key, svc->version});
  return batch;
}

}  // namespace cascade::hub
