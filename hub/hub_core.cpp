#include "cascade/hub/hub_core.hpp"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <map>
#include <tuple>
#include <unordered_map>

#include "cascade/common/digest.hpp"
#include "cascade/common/list_version.hpp"

namespace cascade::hub {

namespace {

// The version of the service's list composed with an upper tier's list at
// `upper_version`: the same while neither list moves, else a new one from
// the registry, so composed versions grow like local ones (section 5.8 of
// schemas/protocol-v1.md) and never equal one (the top bit).
std::uint64_t composed_version(Registry& registry, ServiceEntry& svc, std::uint64_t upper_version) {
  auto& c = svc.composed;
  if (c.version == 0 || c.local != svc.version || c.upper != upper_version)
    c = {svc.version, upper_version, proto::kCrossTierVersionBit | registry.issue_version()};
  return c.version;
}

struct ComposedList {
  std::uint64_t version = 0;
  std::vector<proto::Instance> instances;
};

// This tier's instances first (tier 0), then the upper tier's that it lacks.
ComposedList compose(Registry& registry, ServiceEntry& svc, const CrossTierView& view) {
  ComposedList list;
  list.version = composed_version(registry, svc, view.version);
  list.instances = registry.full_update(svc, 0).upserts;
  for (const auto& in : view.instances)
    if (!svc.instances.contains(in.id)) list.instances.push_back(in);
  return list;
}

// The rule set of a service without an entry here: none.
std::vector<proto::RouteRuleText> no_routes() {
  return {};
}

bool has_health(const std::vector<proto::Registration>& regs) {
  return std::any_of(regs.begin(), regs.end(), [](const proto::Registration& r) {
    return r.instance.health != proto::Health::kOk || !r.instance.health_reason.empty();
  });
}

// An agent's verdict about itself would let it hide from isolation.
bool carries_health(const proto::UpBeat& beat) {
  return (beat.registrations && has_health(*beat.registrations)) ||
         (beat.delta && has_health(beat.delta->upserts));
}

// A delta is a list of changes, one per instance: no sender's journal names
// an instance twice (two upserts, or an upsert and a removal), and one that
// does cannot be applied change by change (which of them is the instance's
// state?). The sender's next full set settles it. Checked before anything is
// applied, so the delta is refused whole; the usual delta (one change) costs
// nothing.
bool names_an_instance_twice(const proto::RegistrationDelta& delta) {
  if (delta.upserts.size() + delta.removed.size() < 2) return false;
  using Named = std::tuple<std::string_view, std::string_view, std::string_view>;
  std::vector<Named> named;
  named.reserve(delta.upserts.size() + delta.removed.size());
  for (const auto& reg : delta.upserts)
    named.emplace_back(reg.service.name, reg.service.group, reg.instance.id);
  for (const auto& key : delta.removed)
    named.emplace_back(key.service.name, key.service.group, key.id);
  std::sort(named.begin(), named.end());
  return std::adjacent_find(named.begin(), named.end()) != named.end();
}

}  // namespace

HubCore::HubCore(HubCoreConfig config, std::uint64_t hub_epoch, MonoTime started)
    : config_(std::move(config)),
      epoch_(hub_epoch),
      started_(started),
      registry_(hub_epoch, config_.change_log_per_service),
      governor_(config_.governor, config_.beat_interval),
      isolation_(config_.isolation, hub_epoch ^ 0x15014710ULL),
      guard_(config_.eviction),
      probes_(config_.probes),
      push_budget_(config_.push),
      push_gate_(config_.push),
      config_centre_({config_.hub_id, config_.tier}, hub_epoch, config_.push) {
  if (config_.uplink) {
    uplink_.emplace(*config_.uplink, config_.hub_id, config_.tier, hub_epoch,
                    hub_epoch ^ std::hash<std::string>{}(config_.hub_id), started);
    registry_.track_changes();
  }
}

void HubCore::restore(const HubSnapshot& snapshot, MonoTime now) {
  restore_admin(snapshot);
  config_centre_.restore(snapshot.config_entries, snapshot.config_history);
  if (!snapshot.config_entries.empty() || !snapshot.config_history.empty())
    spdlog::info("restored {} config keys set at this hub and {} records of their history",
                 snapshot.config_entries.size(), snapshot.config_history.size());
  for (const auto& rec : snapshot.services)
    registry_.restore_version(rec.service, rec.version);
  for (const auto& rec : snapshot.nodes) {
    Node* known = nodes_.find(rec.node_id);
    Node& node = known != nullptr ? *known : nodes_.add(rec.node_id);
    node.epoch = rec.epoch;
    node.epoch_seen = now;
    node.digest = rec.digest;
    node.owner_key = SharedText(rec.owner_key, node_texts_);
    node.set_known = true;
    // Its agent keeps the interval the crashed hub granted until our reply:
    // a grace of the longest lease it may hold.
    if (known == nullptr) leases_.add(node, lease_deadline(now, granted_stretch_.held()));
  }
  if (granted_stretch_.held() > 1) governor_.resume(now, granted_stretch_.held());
  std::unordered_map<Node*, std::vector<OwnedInstance>> owned;
  for (const InstanceRow row : snapshot.instances) {
    Node* node = nodes_.find(row.owner);
    // Its agent was deleted: the row is an orphan, deleted at the first
    // batch. (Static instances, owned by kStaticOwner, were restored by
    // restore_admin.)
    if (node == nullptr) {
      if (row.owner != kStaticOwner) registry_.forget_row(row.row);
      continue;
    }
    const InstanceRecord rec = row.record();  // one at a time: the store packed a million
    registry_.restore_instance(rec.service, rec.instance, rec.owner, rec.row);
    owned[node].push_back(owned_of(*registry_.find(rec.service), rec.instance.id));
  }
  for (auto& [node, list] : owned) {
    std::sort(list.begin(), list.end());
    node->owned = std::move(list);
  }
  registry_.settle_restored_rows();
  registry_.stamp_unversioned();
  if (uplink_) {
    registry_.take_changes();  // restoring changed nothing upstream does not learn below
    registry_.for_each_service([&](const ServiceEntry& svc) {
      for (const InstanceSlot& slot : svc.instances)
        uplink_->upsert(now, {svc.key, slot.entry().served(slot.id())});
    });
  }
  registry_.stamp_noted(now, config_.empty_service_ttl);  // the services restored empty
  // The stretch the crashed hub had granted (x1: none) lengthens the grace,
  // and the governor grants it again until the load says otherwise.
  spdlog::info(
      "restored {} agents, {} services, {} instances; grace until lease expiry ({} ms: intervals "
      "stretched up to x{} before the restart; granting x{})",
      nodes_.size(), registry_.service_count(), registry_.instance_count(),
      (config_.lease * granted_stretch_.held()).count(), granted_stretch_.held(),
      governor_.stretch());
}

HandleResult HubCore::handle(MonoTime now, const proto::Message& message, const Peer& peer) {
  // Every message is a transaction of its own: a change it makes is never
  // logged under a version consumers already hold.
  registry_.begin_txn();
  auto who = caller_of(peer.principal, message);
  if (auto* refusal = std::get_if<Refusal>(&who)) return refuse(now, message, std::move(*refusal));
  const auto& caller = std::get<Caller>(who);
  auto refusal = check_message(caller, message, config_.tier);
  const auto* admin = std::get_if<proto::AdminRequest>(&message);
  if (refusal && admin == nullptr) return refuse(now, message, std::move(*refusal));
  auto result = admin ? on_admin(now, *admin, caller, peer, std::move(refusal))  // audited
                      : dispatch(now, message, caller, peer);
  after_changes(now);
  return result;
}

HandleResult HubCore::dispatch(MonoTime now, const proto::Message& message, const Caller& caller,
                               const Peer& peer) {
  return std::visit(
      [&](const auto& m) -> HandleResult {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::UpBeat>) {
          return on_upbeat(now, m, caller, peer.source);
        } else if constexpr (std::is_same_v<T, proto::Query>) {
          return on_query(now, m);
        } else if constexpr (std::is_same_v<T, proto::Deregister>) {
          return on_deregister(now, m, caller);
        } else if constexpr (std::is_same_v<T, proto::StatusRequest>) {
          return {status(now, m.request_id)};
        } else if constexpr (std::is_same_v<T, proto::ServicesRequest>) {
          return {services(m.request_id, caller)};
        } else if constexpr (std::is_same_v<T, proto::FailureReport>) {
          return on_failure_report(now, m, caller);
        } else if constexpr (std::is_same_v<T, proto::ConfigRequest>) {
          return {config_view(m)};
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

HandleResult HubCore::refuse(MonoTime now, const proto::Message& message, Refusal refusal) {
  ++counters_.forbidden;
  std::uint64_t suppressed = 0;
  if (refusal_log_.allow(now, suppressed))
    log_event(spdlog::level::warn, "message refused",
              {{"hub", config_.hub_id},
               {"type", proto::to_string(proto::type_of(message))},
               {"reason", refusal.message},
               {"suppressed", suppressed}});
  return {proto::ErrorReply{refusal.code, proto::clip_message(std::move(refusal.message)),
                            proto::ref_of(message)}};
}

std::optional<Refusal> HubCore::check_owner(const Node& node, const Caller& caller) const {
  if (caller.open() || node.owner_key.empty() || node.owner_key == caller.name) return std::nullopt;
  return Refusal{proto::ErrorCode::kForbidden,
                 fmt::format("node {} belongs to key {}, not to key {}", node.id,
                             node.owner_key.str(), caller.name)};
}

// A lower-tier hub's beat carries the uses of all its tier's consumers. One
// outside its key's query scope is left unanswered (and counted), never the
// whole beat refused: that would expire the lower tier's aggregate here.
std::vector<proto::ServiceUse> HubCore::uses_in_scope(const Caller& caller,
                                                      const std::vector<proto::ServiceUse>& uses) {
  std::vector<proto::ServiceUse> allowed;
  allowed.reserve(uses.size());
  for (const auto& use : uses) {
    if (caller.may_query(use.service.name))
      allowed.push_back(use);
    else
      ++counters_.forbidden;
  }
  return allowed;
}

bool HubCore::epoch_plausible(MonoTime now, const Node& node, std::uint64_t epoch) const {
  if (epoch <= node.epoch) return true;
  using std::chrono::microseconds;
  const auto since = std::chrono::duration_cast<microseconds>(now - node.epoch_seen).count();
  const auto margin = std::chrono::duration_cast<microseconds>(config_.max_epoch_lead).count();
  const auto allowed = static_cast<std::uint64_t>(std::max<std::int64_t>(since, 0)) +
                       static_cast<std::uint64_t>(margin);
  return epoch - node.epoch <= allowed;
}

// What changed in this tier's registry goes to the uplink's aggregate.
void HubCore::feed_uplink(MonoTime now) {
  for (const auto& change : registry_.take_changes()) {
    const InstanceSlot* slot = change.service->instances.find(change.id);
    if (slot != nullptr)
      uplink_->upsert(now, {change.service->key, slot->entry().served(change.id)});
    else
      uplink_->remove(now, {change.service->key, change.id});
  }
}

proto::ErrorReply HubCore::on_decode_failure(const proto::DecodeFailure& failure) {
  ++counters_.decode_errors;
  return proto::to_error_reply(failure);
}

HandleResult HubCore::reject(proto::ErrorCode code, std::string message, std::uint64_t ref) {
  ++counters_.invalid_messages;
  return {proto::ErrorReply{code, proto::clip_message(std::move(message)), ref}};
}

void HubCore::prefetch(const proto::Message& message) const {
  if (const auto* beat = std::get_if<proto::UpBeat>(&message)) nodes_.prefetch(beat->node_id);
}

HubCore::Node& HubCore::admit(MonoTime now, const proto::UpBeat& beat, Node* known,
                              bool& state_changed) {
  Node& node = known ? *known : nodes_.add(beat.node_id);
  if (!known) {
    node.epoch = beat.epoch;
    node.epoch_seen = now;
    leases_.add(node, lease_deadline(now));
    state_changed = true;
    return node;
  }
  if (beat.epoch > node.epoch) {
    // A restarted agent: its sequence starts over. Its instances stay until
    // its set is known: a matching digest keeps them without any churn.
    node.epoch = beat.epoch;
    node.epoch_seen = now;
    node.last_seq = 0;
    state_changed = true;
    if (config_.isolation.readmit_on_restart) readmit_restarted(now, node);
  }
  leases_.renew(node, lease_deadline(now));
  return node;
}

HandleResult HubCore::on_upbeat(MonoTime now, const proto::UpBeat& beat, const Caller& caller,
                                std::string_view source) {
  ++counters_.beats;
  // Refused: an older incarnation of a known node, or an incarnation that has
  // deregistered (its late beat must not bring it back).
  Node* known = nodes_.find(beat.node_id);
  if (known ? beat.epoch < known->epoch : departed_.refuses(beat.node_id, beat.epoch, now)) {
    ++counters_.stale_epoch;
    return {proto::ErrorReply{proto::ErrorCode::kStaleEpoch,
                              "a newer or deregistered incarnation of this node is known",
                              beat.seq}};
  }
  if (known) {
    if (auto refusal = check_owner(*known, caller)) return refuse(now, beat, std::move(*refusal));
    if (!epoch_plausible(now, *known, beat.epoch)) {
      ++counters_.epoch_jumps;
      return reject(proto::ErrorCode::kInvalid,
                    fmt::format("epoch {} of node {} is too far ahead of its epoch {}", beat.epoch,
                                beat.node_id, known->epoch),
                    beat.seq);
    }
  }
  const auto limit = beat.sender_tier > 0 ? config_.max_registrations_per_child_hub
                                          : config_.max_registrations_per_node;
  const auto carried = (beat.registrations ? beat.registrations->size() : 0) +
                       (beat.delta ? beat.delta->upserts.size() : 0);
  if (carried > limit)
    return reject(proto::ErrorCode::kInvalid, "too many registrations in one set", beat.seq);
  if (beat.sender_tier == 0 && carries_health(beat))
    return reject(proto::ErrorCode::kInvalid, "instance health is set by hubs, not by agents",
                  beat.seq);

  bool state_changed = false;
  Node& node = admit(now, beat, known, state_changed);
  set_tier(node, beat.sender_tier);
  if (!caller.open() && node.owner_key != caller.name) {
    node.owner_key = SharedText(caller.name, node_texts_);  // bound to the first key that beats
    state_changed = true;
  }
  note_source(now, node, source);
  const bool in_order = beat.seq > node.last_seq;
  if (in_order) {
    node.last_seq = beat.seq;
    if (beat.registrations)
      state_changed |= apply_registration_set(node, *beat.registrations);
    else if (beat.delta && names_an_instance_twice(*beat.delta))
      return reject(proto::ErrorCode::kInvalid, "a registration delta names an instance twice",
                    beat.seq);
    else if (beat.delta)
      state_changed |= apply_delta(node, beat.seq, *beat.delta);
    // Only a delta stages a set: the beats without one skip the lookup.
    const auto staged = beat.delta ? staged_sets_.find(&node) : staged_sets_.end();
    if (staged != staged_sets_.end() && staged->second.regs.size() > limit) {
      staged_sets_.erase(staged);
      return reject(proto::ErrorCode::kInvalid, "too many registrations in one set", beat.seq);
    }
  } else {
    ++counters_.beats_stale_seq;  // delayed or duplicated: renew, but never apply an older set
  }
  if (state_changed) dirty_nodes_.push_back(node.id.str());

  proto::DownBeat reply;
  reply.hub_id = config_.hub_id;
  reply.hub_epoch = epoch_;
  reply.node_id = node.id;
  reply.ack_seq = beat.seq;
  reply.lease_ms = static_cast<std::uint32_t>((node.lease_deadline() - now).count());
  reply.interval_ms = static_cast<std::uint32_t>(governor_.granted_interval().count());
  reply.send_full = !(node.set_known && node.digest == beat.digest);
  if (reply.send_full) ++counters_.full_sets_requested;
  if (caller.hub_with_query_scope())
    collect_updates(now, node, uses_in_scope(caller, beat.uses), reply);
  else
    collect_updates(now, node, beat.uses, reply);
  if (in_order) follow_declared_configs(now, node, beat, reply);
  // A carried set is acknowledged by this reply even when it changed nothing
  // in memory: the change it repeats may still be waiting for its commit.
  return {std::move(reply),
          state_changed || beat.registrations.has_value() || beat.delta.has_value()};
}

// A beat declares the groups it follows by their list or, while the list is
// the one it last sent, by the list's digest: when that matches what this hub
// believes the node holds, it stands for that list; when not (a reply or push
// was lost, this hub restarted), the reply asks for the list and confirms
// nothing. A beat that arrived after a newer one declares nothing: its list
// is not the node's any more.
void HubCore::follow_declared_configs(MonoTime now, Node& node, const proto::UpBeat& beat,
                                      proto::DownBeat& reply) {
  if (beat.configs.empty() && beat.configs_digest != 0) {
    auto held = config_centre_.held_by(node.id);
    if (proto::config_uses_digest(held) != beat.configs_digest) {
      reply.send_configs = true;
      config_centre_.count_list_requested();
      return;
    }
    follow_configs(now, node, held, reply);
    return;
  }
  // Beats that follow no group cost nothing here.
  if (!beat.configs.empty() || node.follows_config) follow_configs(now, node, beat.configs, reply);
}

ConfigCentre::AwaitsUpper HubCore::config_awaits_upper(MonoTime now) const {
  if (!uplink_) return {};
  return [this, now](std::string_view group) { return uplink_->config_pending(now, group); };
}

// A tiered hub follows upstream every group its followers follow. Until the
// upper tier's first answer for a group came (or the wait is over: the upper
// tier is down, or took query_timeout), the group is left out of the reply,
// own keys included, so a follower's first answer is the whole group; the
// follower gets it by push when the upper copy arrives.
void HubCore::follow_configs(MonoTime now, Node& node, const std::vector<proto::ConfigUse>& uses,
                             proto::DownBeat& reply) {
  node.follows_config = !uses.empty();
  if (!uplink_) {
    config_centre_.on_beat(node.id, uses, reply.config_updates);
    return;
  }
  for (const auto& use : uses)
    uplink_->follow_config(now, use.group);
  config_centre_.on_beat(node.id, uses, reply.config_updates, config_awaits_upper(now));
  // As for cross-tier lists (section 5.14): a group whose upper copy is past
  // its TTL is still served, and the reply says how old it is rather than
  // confirming it.
  for (const auto& use : uses) {
    if (const auto age = uplink_->config_stale_age(now, use.group)) {
      reply.stale_configs.push_back({use.group, static_cast<std::uint64_t>(age->count())});
      config_centre_.count_served_stale();
    }
  }
}

void HubCore::take_upper_configs(MonoTime now) {
  for (const auto& group : uplink_->take_config_changes())
    config_centre_.set_upper(now, group, uplink_->upper_config(group));
}

// Past kMaxConfigUsesPerBeat groups followed here, the least recently used
// are not declared upstream: they keep the upper copy last received, if any,
// over this hub's own keys.
void HubCore::log_configs_left_out(MonoTime now) {
  const auto left_out = uplink_->config_groups_left_out();
  if (left_out == configs_left_out_logged_) return;
  std::uint64_t suppressed = 0;
  if (!config_cap_log_.allow(now, suppressed)) return;
  log_event(spdlog::level::warn,
            "more config groups followed than one beat may declare upstream: the least recently "
            "used are not followed upstream",
            {{"hub", config_.hub_id},
             {"cap", proto::kMaxConfigUsesPerBeat},
             {"left_out", left_out - configs_left_out_logged_},
             {"suppressed", suppressed}});
  configs_left_out_logged_ = left_out;
}

bool HubCore::apply_registration_set(Node& node, const std::vector<proto::Registration>& set) {
  ++counters_.full_sets_received;
  registry_.begin_txn();
  const auto regs = proto::canonical_order(set);  // the copy was ~6% of a registration wave
  proto::SetDigest running;
  for (const auto* reg : regs)
    running.add(*reg);
  const std::uint64_t digest = running.value();
  bool changed = digest != node.digest || !node.set_known;
  std::vector<OwnedInstance> now_owned;
  now_owned.reserve(regs.size());
  for (const auto* reg : regs) {
    ServiceEntry& svc = registry_.service(reg->service);
    const auto upserted = registry_.upsert(svc, reg->instance, node.id);
    changed |= upserted.changed;
    now_owned.push_back({&svc, upserted.slot});
  }
  std::sort(now_owned.begin(), now_owned.end());
  now_owned.erase(std::unique(now_owned.begin(), now_owned.end()), now_owned.end());
  std::vector<OwnedInstance> dropped;
  std::set_difference(node.owned.begin(), node.owned.end(), now_owned.begin(), now_owned.end(),
                      std::back_inserter(dropped));
  for (const auto& gone : in_key_order(std::move(dropped))) {
    std::string ask_again;
    changed |= registry_.remove(*gone.service, gone.id(), node.id, &ask_again);
    ask_for_set(ask_again);
  }
  node.owned = std::move(now_owned);
  node.digest = digest;
  // Kept only for a node that sent deltas before: most re-send whole sets,
  // and the first delta of one that did not rebuilds it from `owned`.
  node.running_known = node.extras != nullptr;
  if (node.running_known) node.extras->running = running;
  node.set_known = true;
  return changed;
}

// A node that took over an instance whose content it may report differently:
// ask for its set, so the registry learns what it reports.
void HubCore::ask_for_set(const std::string& node_id) {
  if (node_id.empty()) return;
  if (Node* other = nodes_.find(node_id)) other->set_known = false;
}

bool HubCore::apply_delta(Node& node, std::uint64_t seq, proto::RegistrationDelta delta) {
  ++counters_.deltas_received;
  auto staged = staged_sets_.find(&node);
  if (delta.reset) {
    staged = staged_sets_.insert_or_assign(&node, StagedSet{}).first;
  } else if (staged != staged_sets_.end() && seq != staged->second.next_seq) {
    // A chunk missing in between (lost, or overtaken): the staged set is not
    // whole. Drop it; the digest will not match and the sender starts over.
    staged_sets_.erase(staged);
    return false;
  }
  if (staged != staged_sets_.end()) {  // a chunked full set: applied whole after its last chunk
    staged->second.next_seq = seq + 1;
    auto& regs = staged->second.regs;
    regs.insert(regs.end(), std::make_move_iterator(delta.upserts.begin()),
                std::make_move_iterator(delta.upserts.end()));
    if (delta.more) return false;
    const auto set = std::move(regs);
    staged_sets_.erase(staged);
    return apply_registration_set(node, set);
  }
  // A delta applies only onto a set the hub holds; otherwise the reply asks
  // for the whole set (the digest will not match).
  if (!node.set_known || !ensure_running_digest(node)) return false;
  return apply_incremental(node, delta);
}

bool HubCore::apply_incremental(Node& node, const proto::RegistrationDelta& delta) {
  registry_.begin_txn();
  auto& running = node.more().running;  // computed (ensure_running_digest)
  bool digest_known = true;
  std::vector<OwnedInstance> added;
  std::vector<OwnedInstance> dropped;
  // The node's report of the instance, if it is one of the node's.
  const auto reported = [&](ServiceEntry& svc, const std::string& id) {
    std::optional<OwnedInstance> found;
    if (const InstanceSlot* slot = svc.instances.find(id); slot != nullptr) found = {&svc, slot};
    if (found && !std::binary_search(node.owned.begin(), node.owned.end(), *found)) found.reset();
    return found;
  };
  // The node's previous report of an instance leaves its digest. A report the
  // registry holds with other content (another node's) cannot be subtracted:
  // the digest is then unknown and the reply asks for the whole set.
  const auto forget_report = [&](const OwnedInstance& mine) {
    if (const auto had = Registry::reported_by(*mine.slot, node.id))
      running.remove({mine.service->key, *had});
    else
      digest_known = false;
  };
  for (const auto& key : delta.removed) {
    ServiceEntry* svc = registry_.find(key.service);
    const auto gone = svc != nullptr ? reported(*svc, key.id) : std::nullopt;
    // Not reported (any more): a repeated removal is harmless (schemas 5.7).
    if (!gone) continue;
    forget_report(*gone);
    std::string ask_again;
    registry_.remove(*svc, key.id, node.id, &ask_again);
    ask_for_set(ask_again);
    dropped.push_back(*gone);  // compared by address only: its slot may be gone
  }
  for (const auto& reg : delta.upserts) {
    ServiceEntry& svc = registry_.service(reg.service);
    if (const auto mine = reported(svc, reg.instance.id)) forget_report(*mine);
    running.add(reg);
    added.push_back({&svc, registry_.upsert(svc, reg.instance, node.id).slot});
  }
  node.owned.edit([&](std::vector<OwnedInstance>& owned) {
    update_owned(owned, std::move(dropped), std::move(added));
  });
  node.digest = running.value();
  if (!digest_known) {
    node.running_known = false;
    node.set_known = false;  // the reply asks for the whole set
  }
  return true;
}

// owned = (owned - dropped) + added, keeping it sorted. A small delta (the
// usual one: a few changes to a lower tier's set of 100,000) edits the list in
// place; a large one merges, moving the entries rather than copying them.
void HubCore::update_owned(std::vector<OwnedInstance>& owned, std::vector<OwnedInstance> dropped,
                           std::vector<OwnedInstance> added) {
  constexpr std::size_t kInPlaceLimit = 64;
  if (dropped.size() + added.size() <= kInPlaceLimit) {
    for (const auto& gone : dropped) {
      auto it = std::lower_bound(owned.begin(), owned.end(), gone);
      if (it != owned.end() && *it == gone) owned.erase(it);
    }
    for (auto& in : added) {
      auto it = std::lower_bound(owned.begin(), owned.end(), in);
      if (it == owned.end() || !(*it == in)) owned.insert(it, std::move(in));
    }
    return;
  }
  std::sort(dropped.begin(), dropped.end());
  std::sort(added.begin(), added.end());
  added.erase(std::unique(added.begin(), added.end()), added.end());  // `owned` has no repeats
  std::vector<OwnedInstance> kept;
  kept.reserve(owned.size() + added.size());
  std::set_difference(std::make_move_iterator(owned.begin()), std::make_move_iterator(owned.end()),
                      dropped.begin(), dropped.end(), std::back_inserter(kept));
  owned.clear();
  owned.reserve(kept.size() + added.size());
  std::set_union(std::make_move_iterator(kept.begin()), std::make_move_iterator(kept.end()),
                 std::make_move_iterator(added.begin()), std::make_move_iterator(added.end()),
                 std::back_inserter(owned));
}

// After a restart the hub knows a node's digest but not its member hashes:
// they are rebuilt once from what the node reported.
bool HubCore::ensure_running_digest(Node& node) {
  if (node.running_known) return true;
  proto::SetDigest running;
  for (const auto& owned : node.owned) {
    const auto in = Registry::reported_by(*owned.slot, node.id);
    if (!in) return false;
    running.add({owned.service->key, *in});
  }
  if (running.value() != node.digest) return false;
  node.more().running = running;
  node.running_known = true;
  return true;
}

void HubCore::collect_updates(MonoTime now, Node& node, const std::vector<proto::ServiceUse>& uses,
                              proto::DownBeat& reply) {
  auto& out = reply.updates;
  uses_scratch_.clear();
  for (const auto& use : uses) {
    const auto before = out.size();
    const ServiceEntry* followed = add_update(now, use, out);
    note_if_stale(now, use.service, followed, reply.stale);
    if (followed == nullptr) followed = waiter(use.service);
    if (followed == nullptr) continue;
    uses_scratch_.push_back({followed, out.size() > before ? out.back().version : use.version});
  }
  set_uses(node, uses_scratch_);
}

// A service nobody registered (yet): an empty entry lists the consumer
// among its followers, so the first registration is pushed to it at once,
// not left for its next beat. It goes when nobody uses it any more
// (Registry::reclaim). Consumers declaring names nobody registers cannot
// grow the registry past the cap: beyond it they learn at their next beat.
const ServiceEntry* HubCore::waiter(const proto::ServiceKey& service) {
  if (registry_.unregistered_count() >= config_.max_unregistered_services) {
    ++counters_.waits_capped;
    return nullptr;
  }
  return &registry_.service(service);
}

// A cross-tier list past its TTL is still served (the upper tier is
// unreachable), and the reply says so with its age: the consumer must not
// take the reply as a confirmation of the list (protocol section 5.14).
void HubCore::note_if_stale(MonoTime now, const proto::ServiceKey& service, const ServiceEntry* svc,
                            std::vector<proto::StaleList>& stale) {
  if (answers_locally(svc)) return;
  const auto age = uplink_->stale_age(now, service);
  if (!age) return;
  stale.push_back({service, static_cast<std::uint64_t>(age->count())});
  ++counters_.updates_stale;
}

const ServiceEntry* HubCore::add_update(MonoTime now, const proto::ServiceUse& use,
                                        std::vector<proto::ServiceUpdate>& out) {
  const auto before = out.size();
  const ServiceEntry* svc = registry_.find(use.service);
  if (answers_locally(svc))
    add_local_update(use, svc, out);
  else
    svc = add_cross_tier_update(now, use, svc, out);
  count_sent({out.begin() + static_cast<std::ptrdiff_t>(before), out.end()});
  return svc;
}

void HubCore::add_local_update(const proto::ServiceUse& use, const ServiceEntry* svc,
                               std::vector<proto::ServiceUpdate>& out) {
  if (svc == nullptr || svc->version == 0) {  // never registered here (or a consumer's waiter)
    if (use.version != 0) {
      out.push_back(proto::ServiceUpdate{
          use.service, use.version, 0, proto::UpdateKind::kGone, {}, {}, no_routes()});
    }
    return;
  }
  auto update = registry_.update_for(*svc, use.version);
  if (update) out.push_back(std::move(*update));
}

// The consumers of a service change rarely: the index is touched only when a
// node's list of used services is not the one it declared last time.
void HubCore::set_uses(Node& node, std::vector<Use>& next) {
  const auto uses = node.uses();
  if (next.empty() && uses.empty()) return;  // a provider's node allocates nothing
  const bool same_services =
      next.size() == uses.size() &&
      std::equal(next.begin(), next.end(), uses.begin(),
                 [](const Use& a, const Use& b) { return a.service == b.service; });
  if (!same_services) {
    forget_uses(node);
    for (const auto& use : next)
      consumers_[use.service].insert(&node);
    subscriptions_ += next.size();
  }
  node.more().uses.swap(next);
}

void HubCore::forget_uses(Node& node) {
  if (!node.extras) return;
  auto& uses = node.extras->uses;
  for (const auto& use : uses) {
    auto it = consumers_.find(use.service);
    if (it == consumers_.end()) continue;
    it->second.erase(&node);
    if (!it->second.empty()) continue;
    consumers_.erase(it);
    registry_.note_maybe_unused(use.service->key);
  }
  subscriptions_ -= uses.size();
  uses.clear();
}

void HubCore::set_tier(Node& node, std::uint32_t tier) {
  if (tier > 0)
    child_hubs_.insert(&node);
  else
    child_hubs_.erase(&node);
  // A beat's tier is below this hub's (access_rules), and --tier is at most
  // 16; a core configured past 255 (only a test or a fuzzer builds one) keeps
  // its child hubs non-zero rather than wrapping them to agents.
  node.tier = static_cast<std::uint8_t>(std::min<std::uint32_t>(tier, 255));
}

// A consumer of a service this tier lacks (or has too few UP instances of):
// the list composed with the upper tier's answer, whole when it changed.
// Returns the entry consumers of the service are followed under (created
// once the upper tier knows the service, so pushes can find them).
const ServiceEntry* HubCore::add_cross_tier_update(MonoTime now, const proto::ServiceUse& use,
                                                   const ServiceEntry* svc,
                                                   std::vector<proto::ServiceUpdate>& out) {
  const auto known = uplink_->use(now, use.service);
  const auto& upper_version = known.version;
  if (!upper_version) {
    // The upper tier cannot answer now: a consumer holding this tier's own
    // list (a composed one it keeps) gets this tier's changes and rules
    // meanwhile, so a rule set here during an outage applies at once.
    const bool holds_local_list = (use.version & proto::kCrossTierVersionBit) == 0;
    if (holds_local_list && svc != nullptr && !svc->instances.empty() && uplink_->known_down(now)) {
      add_local_update(use, svc, out);
      return svc;
    }
    // Nothing from above yet (being asked): keep what the consumer holds,
    // unless the upper tier said it has no such service either.
    const bool gone =
        use.version != 0 && known.missing && (svc == nullptr || svc->instances.empty());
    if (gone) {
      out.push_back(proto::ServiceUpdate{use.service,
                                         use.version,
                                         0,
                                         proto::UpdateKind::kGone,
                                         {},
                                         {},
                                         svc != nullptr ? svc->routes : no_routes()});
    }
    return svc;
  }
  ServiceEntry& entry = registry_.service(use.service);
  // The steady state costs a version comparison; the list is built only when it changed.
  if (composed_version(registry_, entry, *upper_version) == use.version) return &entry;
  auto list = compose(registry_, entry, *uplink_->view(now, use.service));
  // The rules are this tier's own (section 5.12): an upper tier's rules stay there.
  out.push_back(proto::ServiceUpdate{use.service,
                                     use.version,
                                     list.version,
                                     proto::UpdateKind::kFull,
                                     std::move(list.instances),
                                     {},
                                     entry.routes});
  return &entry;
}

// Enough UP instances here (min_local_up) answer for a service without the
// upper tier, unless an operator set routing rules for it here: a rule
// chooses among zones, and moving a datacenter's consumers to another one
// (a traffic switch) needs that datacenter's instances in the list.
bool HubCore::answers_locally(const ServiceEntry* svc) const {
  if (!uplink_) return true;
  if (svc == nullptr || svc->up_count() < config_.min_local_up) return false;
  return std::none_of(svc->routes.begin(), svc->routes.end(),
                      [](const proto::RouteRuleText& rule) { return rule.enabled; });
}

HandleResult HubCore::on_query(MonoTime now, const proto::Query& query) {
  ++counters_.queries;
  const ServiceEntry* svc = registry_.find(query.service);
  if (answers_locally(svc)) {
    auto reply = local_reply(query, svc);
    if (!reply.found) ++counters_.queries_not_found;
    return {std::move(reply)};
  }
  ++counters_.queries_cross_tier;
  const auto token = ++next_token_;
  auto answer = uplink_->lookup(now, query.service, token);
  if (!answer) {
    deferred_queries_.emplace(token, query);
    return {proto::Message{}, false, token};
  }
  return {cross_tier_reply(query, svc, *answer)};
}

proto::QueryReply HubCore::local_reply(const proto::Query& query, const ServiceEntry* svc) const {
  proto::QueryReply reply;
  reply.request_id = query.request_id;
  reply.hub_id = config_.hub_id;
  reply.hub_epoch = epoch_;
  reply.service = query.service;
  reply.tier = config_.tier;
  reply.source = proto::AnswerSource::kLocal;
  reply.routes = no_routes();
  if (svc != nullptr) {
    auto whole = registry_.full_update(*svc, 0);
    reply.version = svc->version;
    reply.instances = std::move(whole.upserts);
    reply.routes = std::move(whole.routes);
  }
  reply.found = !reply.instances.empty();
  return reply;
}

proto::Message HubCore::cross_tier_reply(const proto::Query& query, const ServiceEntry* svc,
                                         const CrossTierAnswer& answer) {
  const bool have_local = svc != nullptr && !svc->instances.empty();
  const auto source =
      answer.asked_now ? proto::AnswerSource::kUpstream : proto::AnswerSource::kCache;
  if (answer.outcome == Outcome::kNotFound && !have_local) {
    auto reply = local_reply(query, svc);
    reply.tier = uplink_->upstream_tier();  // the upper tier said so (now, or recently)
    reply.source = source;
    return reply;
  }
  if (answer.outcome != Outcome::kFound || !answer.view) {
    if (have_local) return local_reply(query, svc);
    return proto::ErrorReply{
        proto::ErrorCode::kUnavailable,
        "the upper tier is unreachable and has not answered for " + query.service.name + " before",
        query.request_id};
  }
  const auto& view = *answer.view;
  auto& entry = registry_.service(query.service);  // its composition's version is kept there
  auto list = compose(registry_, entry, view);
  proto::QueryReply reply = local_reply(query, nullptr);
  if (svc != nullptr) reply.routes = svc->routes;  // this tier's rules only (section 5.12)
  reply.version = list.version;
  reply.instances = std::move(list.instances);
  reply.found = !reply.instances.empty();
  reply.tier = view.tier;
  reply.source = source;
  reply.age_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(0, view.age.count()));
  reply.stale = view.stale;
  return reply;
}

// Only a node the hub knows is remembered as departed: a Deregister for an
// unknown node, with any epoch, must not keep that node id out for a lease.
HandleResult HubCore::on_deregister(MonoTime now, const proto::Deregister& msg,
                                    const Caller& caller) {
  Node* found = nodes_.find(msg.node_id);
  if (found == nullptr) {
    ++counters_.deregistrations;
    return {proto::DeregisterAck{msg.node_id, msg.seq, 0}, true};
  }
  Node& node = *found;
  if (auto refusal = check_owner(node, caller)) return refuse(now, msg, std::move(*refusal));
  if (msg.epoch < node.epoch) {
    ++counters_.stale_epoch;
    return {proto::ErrorReply{proto::ErrorCode::kStaleEpoch,
                              "a newer incarnation of this node is registered", msg.seq}};
  }
  if (!epoch_plausible(now, node, msg.epoch)) {
    ++counters_.epoch_jumps;
    return reject(proto::ErrorCode::kInvalid,
                  fmt::format("epoch {} of node {} is too far ahead of its epoch {}", msg.epoch,
                              msg.node_id, node.epoch),
                  msg.seq);
  }
  ++counters_.deregistrations;
  registry_.begin_txn();
  guard_.on_node_removed(msg.node_id, node.source.str());
  const auto removed = static_cast<std::uint32_t>(drop_node(node));
  log_event(spdlog::level::info, "agent deregistered",
            {{"hub", config_.hub_id}, {"node", msg.node_id}, {"instances", removed}});
  departed_.add(msg.node_id, msg.epoch, lease_deadline(now));
  return {proto::DeregisterAck{msg.node_id, msg.seq, removed}, true};
}

std::vector<HubCore::OwnedInstance> HubCore::in_key_order(std::span<const OwnedInstance> list) {
  std::vector<OwnedInstance> owned(list.begin(), list.end());
  std::sort(owned.begin(), owned.end(), [](const OwnedInstance& a, const OwnedInstance& b) {
    using Key = std::pair<const proto::ServiceKey&, std::string_view>;
    return Key(a.service->key, a.id()) < Key(b.service->key, b.id());
  });
  return owned;
}

std::size_t HubCore::drop_node(Node& node) {
  leases_.remove(node);  // queued unless its lease just ran out
  forget_uses(node);
  config_centre_.forget(node.id);
  set_tier(node, 0);  // no longer counted as a child hub
  probes_.forget(node.id);
  std::size_t removed = 0;
  for (const auto& owned : in_key_order(node.owned))
    if (registry_.remove(*owned.service, owned.id(), node.id)) ++removed;
  dirty_nodes_.push_back(node.id.str());
  staged_sets_.erase(&node);
  nodes_.erase(node);  // `node` is gone after this line
  return removed;
}

void HubCore::on_upstream_message(MonoTime now, std::size_t index, const proto::Message& message) {
  if (!uplink_) return;
  if (const auto* report = std::get_if<proto::FailureReport>(&message)) {
    // On its way down to the hub holding the address: this one, or below.
    registry_.begin_txn();
    on_failure_report(now, *report, Caller{});  // the upper tier signs its own reports
    after_changes(now);
    return;
  }
  uplink_->on_message(now, index, message);
  collect_answers();
  take_upper_configs(now);
  // What the upper tier changed in a cross-tier list (an isolation, pushed
  // or in the reply to our beat) is pushed on to this tier's consumers at
  // once, not left for their next beat.
  if (const auto* down = std::get_if<proto::DownBeat>(&message))
    for (const auto& update : down->updates)
      if (const auto* svc = registry_.find(update.service)) push_gate_.mark(now, svc);
  // So is the upper tier's first answer for a list this tier just began to
  // compose (a routing rule set here, the last UP instance here gone): the
  // consumers' beats were answered with what they held meanwhile.
  if (const auto* answer = std::get_if<proto::QueryReply>(&message))
    if (const auto* svc = registry_.find(answer->service)) push_gate_.mark(now, svc);
}

// Replies for the consumers whose queries waited for the upper tier.
void HubCore::collect_answers() {
  for (auto& answered : uplink_->take_answered()) {
    auto it = deferred_queries_.find(answered.token);
    if (it == deferred_queries_.end()) continue;
    const auto* svc = registry_.find(it->second.service);
    deferred_replies_.push_back(
        {answered.token, cross_tier_reply(it->second, svc, answered.answer)});
    deferred_queries_.erase(it);
  }
}

// One line per change of the upper tier's reachability, not per beat.
void HubCore::log_upstream_state(MonoTime now) {
  const bool reachable = uplink_->reachable(now);
  if (reachable == upstream_reachable_) return;
  upstream_reachable_ = reachable;
  if (reachable)
    log_event(spdlog::level::info, "upper tier reachable: beating this tier's instances upstream",
              {{"hub", config_.hub_id}, {"instances", registry_.instance_count()}});
  else
    log_event(spdlog::level::warn,
              "upper tier unreachable: cross-tier answers are served from cache, marked stale "
              "once past their TTL",
              {{"hub", config_.hub_id}});
}

std::vector<UplinkOutgoing> HubCore::take_upstream_messages() {
  return uplink_ ? uplink_->take_outgoing() : std::vector<UplinkOutgoing>{};
}

std::vector<NodeMessage> HubCore::take_node_messages() {
  auto out = std::move(node_messages_);
  node_messages_.clear();
  return out;
}

std::vector<DeferredReply> HubCore::take_deferred_replies() {
  auto out = std::move(deferred_replies_);
  deferred_replies_.clear();
  return out;
}

void HubCore::tick(MonoTime now) {
  if (uplink_) {
    uplink_->on_timer(now);
    collect_answers();
    take_upper_configs(now);
    log_configs_left_out(now);
    log_upstream_state(now);
  }
  registry_.begin_txn();
  departed_.prune(now);
  readmit_due(now);
  expire_leases(now);
  release_held(now);
  drain_served_changes(now);
  flush_pushes(now);
  flush_config_pushes(now);
  after_changes(now);
  reclaim_services(now);
}

void HubCore::add_config_counters(
    std::vector<std::pair<std::string, std::uint64_t>>& counters) const {
  const auto& push = config_centre_.push_counters();
  counters.emplace_back("config_groups", config_centre_.groups().served().groups().size());
  counters.emplace_back("config_subscriptions", config_centre_.subscriptions());
  for (auto& counter : config_centre_.counters().list())
    counters.push_back(std::move(counter));
  counters.emplace_back("config_pushes_over_rate", push.over_rate);
  counters.emplace_back("config_pushes_held_by_switch", push.by_switch);
}

std::optional<MonoTime> HubCore::next_deadline() const {
  std::optional<MonoTime> next;
  const auto consider = [&next](std::optional<MonoTime> t) {
    if (t && (!next || *t < *next)) next = t;
  };
  consider(leases_.next_deadline());
  if (uplink_) consider(uplink_->next_deadline());
  consider(isolation_.next_deadline());
  consider(push_gate_.next_deadline());
  consider(config_centre_.next_deadline());
  consider(guard_.next_deadline());
  consider(registry_.next_reclaim());
  return next;
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
  s.counters.emplace_back("subscriptions", subscriptions_);
  s.counters.emplace_back("pushes_over_rate", push_gate_.counters().over_rate);
  s.counters.emplace_back("pushes_held_by_switch", push_gate_.counters().by_switch);
  add_config_counters(s.counters);
  s.counters.emplace_back("isolation_tracked", isolation_.tracked());
  const auto guard = guard_.gauges();
  s.counters.emplace_back("held_nodes", guard.held_nodes);
  s.counters.emplace_back("held_for_partition", guard.held_for_partition);
  s.counters.emplace_back("partitioned_sources", guard.partitioned_sources);
  s.counters.emplace_back("expiry_cap_holds",
                          guard.counters.service_cap_holds + guard.counters.registry_cap_holds);
  s.counters.emplace_back("held_released_max_hold", guard.counters.released_max_hold);
  const auto& probes = probes_.counters();
  s.counters.emplace_back("probes_sent", probes.probes_sent);
  s.counters.emplace_back("probes_refused", probes.probes_refused);
  s.counters.emplace_back("probes_accepted", probes.probes_accepted);
  s.counters.emplace_back("probes_no_answer", probes.probes_no_answer);
  s.counters.emplace_back("probes_capped", probes.probes_capped);
  s.counters.emplace_back("refused_reports_on_held", probes.refused_reports);
  s.counters.emplace_back("out_of_service_marks", registry_.out_of_service_marks().size());
  const auto& totals = registry_.totals();
  s.counters.emplace_back("instances_up", totals.up);
  s.counters.emplace_back("instances_out_of_service", totals.out_of_service);
  s.counters.emplace_back("instances_static", totals.static_instances);
  s.counters.emplace_back("services_unregistered", registry_.unregistered_count());
  s.counters.emplace_back("interval_stretch", governor_.stretch());
  s.counters.emplace_back("interval_stretched", governor_.counters().stretched);
  s.counters.emplace_back("interval_relaxed", governor_.counters().relaxed);
  s.zone = config_.zone;
  s.child_hubs = child_hubs_.size();
  if (uplink_) {
    s.upstreams = uplink_->status(now);
    s.cross_tier_entries = uplink_->cached_entries();
    s.counters.emplace_back("cross_tier_waits", uplink_->waits());
    uplink_->append_counters(s.counters);
  }
  s.isolated = totals.isolated;
  s.unconfirmed = totals.unconfirmed;
  const auto& push = push_budget_.config();
  s.notify_share_percent = push.notify_switch ? push.share_percent : 100;
  s.eviction_protection = guard_.enabled();
  return s;
}

// Checks a node's `owned` against the registry's slots (address -> service):
// each a live slot of its service, reported by the node (owner or claimant),
// listed once, in order. A slot not live is never followed.
std::optional<std::string> HubCore::owned_mismatch(
    const Node& node, const std::unordered_map<const void*, const ServiceEntry*>& slots) {
  const auto reports = [&](const InstanceEntry& entry) {
    const auto claims = entry.claimants();
    return entry.owner == node.id || std::any_of(claims.begin(), claims.end(),
                                                 [&](const Claim& c) { return c.node == node.id; });
  };
  if (std::adjacent_find(node.owned.begin(), node.owned.end(), std::greater_equal<>{}) !=
      node.owned.end())
    return "node " + node.id.str() + ": owned instances out of order or repeated";
  for (const auto& owned : node.owned) {
    const auto it = slots.find(owned.slot);
    if (it == slots.end())
      return "node " + node.id.str() + " owns an instance that is not registered";
    if (it->second != owned.service || !reports(owned.entry()))
      return "node " + node.id.str() + " owns " + std::string(owned.id()) + " of " +
             it->second->key.name + ", which it does not report there";
  }
  return std::nullopt;
}

// The guard keeps nothing per node but the holds: its source counts and
// holds must be what the nodes' own `source` and `held` say.
std::optional<std::string> HubCore::guard_mismatch() const {
  if (auto guard = guard_.recount_mismatch()) return guard;
  std::map<std::string_view, std::size_t> members;
  std::optional<std::string> stray;
  std::size_t held = 0;
  nodes_.for_each([&](const Node& node) {
    if (!node.source.str().empty()) ++members[node.source.str()];
    held += node.held ? 1 : 0;
    if (!stray && node.held != guard_.is_held(node.id))
      stray = "node " + node.id.str() +
              (node.held ? " held, but not by the guard" : " held by the guard");
  });
  if (stray) return stray;
  if (held != guard_.tracked_holds())  // a hold of a node the hub no longer has
    return "the guard holds " + std::to_string(guard_.tracked_holds()) + " nodes, the hub " +
           std::to_string(held);
  std::size_t total = 0;
  for (const auto& [source, count] : members) {
    total += count;
    if (guard_.members(source) != count)
      return "source " + std::string(source) + ": the guard counts " +
             std::to_string(guard_.members(source)) + " nodes, the hub has " +
             std::to_string(count);
  }
  if (total != guard_.total_members())
    return "the guard counts " + std::to_string(guard_.total_members()) +
           " nodes in shared sources, the hub has " + std::to_string(total);
  return std::nullopt;
}

std::optional<std::string> HubCore::recount_mismatch() const {
  if (auto registry = registry_.recount_mismatch()) return registry;
  if (auto guard = guard_mismatch()) return guard;
  std::size_t subscriptions = 0;
  std::size_t child_hubs = 0;
  std::size_t staged_of_live_nodes = 0;
  std::unordered_map<const void*, const ServiceEntry*> slots;
  registry_.for_each_service([&](const ServiceEntry& svc) {
    for (const auto& slot : svc.instances)
      slots.emplace(&slot, &svc);
  });
  std::optional<std::string> stray;
  nodes_.for_each([&](const Node& node) {
    subscriptions += node.uses().size();
    if (node.tier > 0) ++child_hubs;
    staged_of_live_nodes += staged_sets_.count(&node);
    // What makes freeing an entry without instances safe (Registry::reclaim)
    // and `owned`'s pointers valid: a node's owned entries are slots of
    // instances present. Compared by address, never followed (a slot gone
    // is not to be read).
    if (!stray) stray = owned_mismatch(node, slots);
  });
  if (stray) return stray;
  if (subscriptions != subscriptions_)
    return "subscriptions: running " + std::to_string(subscriptions_) + ", recounted " +
           std::to_string(subscriptions);
  if (child_hubs != child_hubs_.size())
    return "child hubs: running " + std::to_string(child_hubs_.size()) + ", recounted " +
           std::to_string(child_hubs);
  if (staged_of_live_nodes != staged_sets_.size())  // keyed by address: never followed
    return "a staged set of a node the hub no longer has";
  return std::nullopt;
}

proto::ServicesReply HubCore::services(std::uint64_t request_id, const Caller& caller) const {
  proto::ServicesReply reply;
  reply.request_id = request_id;
  registry_.for_each_service([&](const ServiceEntry& svc) {
    if (svc.instances.empty() || !caller.may_query(svc.key.name)) return;
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
  for (const InstanceRow i : failed.instance_upserts)
    registry_.mark_dirty(i.service(), std::string(i.id));
  registry_.requeue_rows(failed.instance_deletes, failed.instances_renumbered);
  for (const auto& s : failed.service_versions)
    registry_.mark_dirty(s.service, std::nullopt);
  for (const auto& key : failed.service_deletes)
    registry_.mark_dirty(key, std::nullopt);
  requeue_admin(failed);
  config_centre_.requeue_records(failed.config_changes);
}

void HubCore::reuse(PersistBatch&& done) {
  // Room for a second of a registration wave at 100k instances/s; a larger
  // batch (a renumbering rewrites every row) is not kept.
  constexpr std::size_t kMaxSpareBytes = 16 << 20;
  if (done.instance_upserts.capacity_bytes() > kMaxSpareBytes) return;
  spare_rows_ = std::move(done.instance_upserts);
  spare_rows_.clear();  // room, never rows
}

PersistBatch HubCore::take_persist_batch(WallMs wall_ms) {
  PersistBatch batch;
  std::sort(dirty_nodes_.begin(), dirty_nodes_.end());
  dirty_nodes_.erase(std::unique(dirty_nodes_.begin(), dirty_nodes_.end()), dirty_nodes_.end());
  for (const auto& id : dirty_nodes_) {
    if (const Node* node = nodes_.find(id); node == nullptr)
      batch.node_deletes.push_back(id);
    else
      batch.node_upserts.push_back({id, node->epoch, node->digest, node->owner_key.str()});
  }
  dirty_nodes_.clear();
  take_instance_rows(batch);
  take_service_rows(batch);
  take_admin_changes(batch);
  batch.config_changes = config_centre_.take_records();
  if (wall_ms != 0) {
    batch.wall_ms = wall_ms;
    config_centre_.stamp(batch.config_changes, wall_ms);
  }
  return batch;
}

// A removed instance's row delete comes from the erased rows.
void HubCore::take_instance_rows(PersistBatch& batch) {
  const auto dirty_instances = registry_.take_dirty_instances();
  // A registration wave's batch holds tens of thousands of rows: grown by
  // doubling, its buffer was copied and its pages faulted in again and again
  // (a tenth of the serving thread's time at 1M; docs/benchmarks.md).
  auto& rows = batch.instance_upserts;
  rows = std::exchange(spare_rows_, {});
  rows.reserve(dirty_instances.size(), dirty_instances.size() * row_bytes_hint_ * 9 / 8);
  for (const auto& [service, slot] : dirty_instances) {
    const InstanceId id = slot->id();
    InstanceFields fields = slot->entry().stored_fields(id);
    fields.row = slot->row();
    fields.name = service->key.name;
    fields.group = service->key.group;
    rows.add(fields);
  }
  if (!rows.empty()) row_bytes_hint_ = rows.text_bytes() / rows.size() + 1;
  batch.instance_deletes = registry_.take_erased_rows();
  batch.instances_renumbered = registry_.take_renumbered();
}

// A service's row holds its version. A freed service's row goes, unless the
// service came back with a version of its own (written instead); one that
// came back without any (re-created empty, an instance row to delete) has
// none to keep either.
void HubCore::take_service_rows(PersistBatch& batch) {
  for (const auto* svc : registry_.take_dirty_services()) {
    if (svc->version != 0)
      batch.service_versions.push_back({svc->key, svc->version});
    else
      batch.service_deletes.push_back(svc->key);
  }
  for (auto& key : registry_.take_reclaimed()) {
    const ServiceEntry* back = registry_.find(key);
    if (back == nullptr || back->version == 0) batch.service_deletes.push_back(std::move(key));
  }
  std::sort(batch.service_deletes.begin(), batch.service_deletes.end());
  batch.service_deletes.erase(
      std::unique(batch.service_deletes.begin(), batch.service_deletes.end()),
      batch.service_deletes.end());
}

}  // namespace cascade::hub
