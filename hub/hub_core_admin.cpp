// HubCore, part four: operator operations (AdminRequest, cascadectl).
// (The beat, query and lease paths are in hub_core.cpp.)
//
// What each operation changes, and what survives a restart:
// - mark_out_of_service / mark_in_service: an override by (service, instance
//   id) that the registry lays over the instance whenever it is present, so
//   it outlives the instance leaving and coming back; persisted. Marking an
//   instance that is not registered is accepted (the reply says it applies
//   when the instance registers): an operator may take an instance out before
//   its agent starts.
// - add_static / remove_static: an instance without agent or lease, owned by
//   kStaticOwner (never a node id), so it never expires; persisted as an
//   `instances` row like any other and restored. An agent reporting the same
//   id only claims it (the operator's definition is served) and takes it
//   over when it is removed. An id an agent already holds is refused, and so
//   is removing an instance an agent registered.
// - eviction_protection / notify_switch: switches of the eviction guard and
//   the push gate; persisted as settings that override the configured
//   defaults at every start.
// - readmit: lifts this hub's isolation of an instance now (on probation, as
//   when it ends by itself). Not persisted: a restarted hub has no isolations.
// - set_routes: replaces a service's routing rules, each checked with the
//   agents' own parser first (a refusal names the rule and the column). The
//   change issues a version like any change, so consumers' next update
//   carries the rules, and is pushed to the consumers following the service.
//   A service without instances gets an entry for its rules. Persisted whole
//   per service (the `routes` table) and restored; never sent upstream.
// Every request, accepted or refused, gets an audit record (who, what, the
// answer) in the same batch as its change; the server stamps the batch's wall
// time at commit, and the reply is durable: sent after that commit.

#include <spdlog/spdlog.h>

#include <algorithm>
#include <utility>

#include "cascade/agent/routing_rule.hpp"
#include "cascade/common/validate.hpp"
#include "cascade/hub/admin_checks.hpp"
#include "cascade/hub/hub_core.hpp"

namespace cascade::hub {

namespace {

// "orders", or "orders (group canary)" when it is not the default group.
std::string describe(const proto::ServiceKey& service) {
  std::string out = service.name;
  if (service.group != proto::kDefaultGroup) out += " (group " + service.group + ")";
  return out;
}

// "orders-1 in orders", with the group when it is not the default one.
std::string describe(const proto::ServiceKey& service, const std::string& id) {
  return id + " in " + describe(service);
}

// "" when the rule set can be served, else why not: the first bad rule, named
// as agents name it, with the parser's column.
std::string check_routes(const proto::ServiceKey& service,
                         const std::vector<proto::RouteRuleText>& routes) {
  if (routes.size() > proto::kMaxRouteRules)
    return std::to_string(routes.size()) + " routing rules; at most " +
           std::to_string(proto::kMaxRouteRules) + " per service";
  if (!routes.empty() && !agent::exact_scope(service))
    return "routing rules cannot be served for " + describe(service) +
           ": agents scope them by name and group, which must not hold '*', '?', '[', ']', "
           "'{', '}' (nor '@' in the group)";
  for (std::size_t i = 0; i < routes.size(); ++i) {
    const auto& rule = routes[i];
    if (auto why = agent::route_rule_problem(rule.text, rule.force); !why.empty())
      return agent::route_rule_name(i + 1, rule.text, rule.priority) + ": " + why;
  }
  return {};
}

InstanceEntry* find_entry(ServiceEntry* svc, const std::string& id) {
  if (svc == nullptr) return nullptr;
  InstanceSlot* slot = svc->instances.find(id);
  return slot == nullptr ? nullptr : &slot->entry();
}

std::string describe_owner(std::string_view owner) {
  return "node " + std::string(owner);
}

}  // namespace

std::string check_admin_request(const proto::AdminRequest& request) {
  if (static_cast<std::uint8_t>(request.op) < 1 ||
      static_cast<std::uint8_t>(request.op) > proto::kMaxAdminOp)
    return "unknown operation " + std::to_string(static_cast<unsigned>(request.op));
  if (auto e = proto::check_name("actor", request.actor); !e.empty())
    return e + ": the audit log records who asks (user@host)";
  if (request.op == proto::AdminOp::kSetRoutes) {
    if (auto e = proto::check_service_key(request.service); !e.empty())
      return e + ": set_routes names a service";
    if (auto e = check_routes(request.service, request.routes); !e.empty()) return e;
  }
  if (proto::is_instance_op(request.op)) {
    if (auto e = proto::check_service_key(request.service); !e.empty())
      return e + ": an instance operation names a service";
    if (auto e = proto::check_name("instance id", request.instance_id); !e.empty())
      return e + ": an instance operation names an instance";
  }
  if (request.op == proto::AdminOp::kAddStatic) {
    if (!request.instance) return "add_static needs the instance (its address at least)";
    const proto::Instance& in = *request.instance;
    if (in.id != request.instance_id)
      return "the instance's id (" + in.id + ") is not the instance id of the request (" +
             request.instance_id + ")";
    if (auto e = proto::check_registration({request.service, in}); !e.empty()) return e;
    if (in.health != proto::Health::kOk || !in.health_reason.empty())
      return "instance health is set by hubs, not by add_static";
  }
  if (request.op == proto::AdminOp::kConfigEdit || request.op == proto::AdminOp::kConfigRollback)
    return check_config_request(request);
  if (request.op == proto::AdminOp::kNotifySwitch && request.enabled &&
      (request.share_percent < 1 || request.share_percent > 100))
    return "share_percent must be from 1 to 100 (got " + std::to_string(request.share_percent) +
           ")";
  return {};
}

namespace {

// Messages may quote what the request said (a rule, a glob): clipped to what
// the protocol lets a reply carry, or the operator's tool could not read it.
proto::AdminReply ok(std::string message) {
  return {0, true, proto::clip_message(std::move(message))};
}
proto::AdminReply refused(std::string message) {
  return {0, false, proto::clip_message(std::move(message))};
}

const char* on_off(bool on) {
  return on ? "on" : "off";
}

}  // namespace

HandleResult HubCore::on_admin(MonoTime now, const proto::AdminRequest& request,
                               const Caller& caller, const Peer& peer,
                               std::optional<Refusal> refusal) {
  ++counters_.admin_requests;
  proto::AdminReply reply;
  if (refusal) {
    ++counters_.forbidden;
    reply = refused(refusal->message);
  } else if (auto why = check_admin_request(request); !why.empty()) {
    reply = refused(std::move(why));
  } else {
    reply = carry_out(now, request);
  }
  reply.request_id = request.request_id;
  if (!reply.ok) ++counters_.admin_refused;
  audit(now, request, reply, caller, peer);
  if (refusal) {  // recorded like any refusal, answered with the typed error
    return {proto::ErrorReply{refusal->code, proto::clip_message(std::move(refusal->message)),
                              request.request_id},
            /*durable=*/true};
  }
  const bool reload = request.op == proto::AdminOp::kReloadKeys && reply.ok;
  HandleResult result{std::move(reply), /*durable=*/true};
  result.reload_keys = reload;
  return result;
}

void HubCore::complete_keys_reload(bool ok, const std::string& outcome) {
  const auto op = proto::to_string(proto::AdminOp::kReloadKeys);
  for (auto it = audit_pending_.rbegin(); it != audit_pending_.rend(); ++it) {
    if (it->op != op) continue;
    it->ok = ok;
    it->detail = outcome;
    if (!ok) ++counters_.admin_refused;
    return;
  }
}

proto::AdminReply HubCore::carry_out(MonoTime now, const proto::AdminRequest& request) {
  switch (request.op) {
    case proto::AdminOp::kMarkOutOfService:
      return mark_out_of_service(request, true);
    case proto::AdminOp::kMarkInService:
      return mark_out_of_service(request, false);
    case proto::AdminOp::kAddStatic:
      return add_static(request);
    case proto::AdminOp::kRemoveStatic:
      return remove_static(request);
    case proto::AdminOp::kReadmit:
      return readmit(now, request);
    case proto::AdminOp::kEvictionProtection:
      return set_eviction_protection(request.enabled);
    case proto::AdminOp::kNotifySwitch:
      return set_notify_switch(request.enabled, request.share_percent);
    case proto::AdminOp::kSetRoutes:
      return set_routes(now, request);
    case proto::AdminOp::kReloadKeys:
      // The file is the shell's (HandleResult::reload_keys): it reloads and
      // completes the reply with what it found.
      return ok("reloading the authorised keys");
    case proto::AdminOp::kConfigEdit:
      return config_edit(now, request);
    case proto::AdminOp::kConfigRollback:
      return config_rollback(now, request);
  }
  return refused("unknown operation");  // check_admin_request let no other value through
}

// The audit record names the key (authoritative) beside the actor the tool
// declared, and the peer's address. Refusals by role are logged rate-limited:
// a flood of them must not flood the log (the audit log still has them all).
void HubCore::audit(MonoTime now, const proto::AdminRequest& request,
                    const proto::AdminReply& reply, const Caller& caller, const Peer& peer) {
  AuditRecord record;
  record.actor = request.actor;
  record.op = proto::to_string(request.op);
  if (proto::is_instance_op(request.op)) {
    record.service = request.service;
    record.instance_id = request.instance_id;
  } else if (request.op == proto::AdminOp::kSetRoutes) {
    record.service = request.service;
  }
  record.detail = reply.message;
  record.ok = reply.ok;
  record.key = std::string(caller.name);
  record.peer = std::string(peer.address);
  std::uint64_t suppressed = 0;
  if (reply.ok || refusal_log_.allow(now, suppressed))
    log_event(reply.ok ? spdlog::level::info : spdlog::level::warn,
              reply.ok ? "operator command" : "operator command refused",
              {{"hub", config_.hub_id},
               {"op", record.op},
               // Unchecked input when the request is refused: clipped
               // (the formatter escapes control characters).
               {"actor", std::string_view(record.actor).substr(0, proto::kMaxIdBytes)},
               {"key", record.key},
               {"peer", record.peer},
               {"service", record.service.name},
               {"group", record.service.group},
               {"instance", record.instance_id},
               {"result", reply.message},
               {"suppressed", suppressed}});
  audit_pending_.push_back(std::move(record));
}

proto::AdminReply HubCore::mark_out_of_service(const proto::AdminRequest& request, bool out) {
  const auto& key = request.service;
  const auto& id = request.instance_id;
  const std::string what = describe(key, id);
  const InstanceEntry* entry = find_entry(registry_.find(key), id);
  registry_.begin_txn();
  if (!registry_.set_out_of_service(key, id, out)) {
    return ok(out ? what + " is already marked OUT_OF_SERVICE; nothing changed"
                  : what + " is not marked OUT_OF_SERVICE; nothing changed");
  }
  dirty_overrides_.push_back({key, id});
  if (out) {
    return ok(entry != nullptr ? what + " is OUT_OF_SERVICE until marked back in"
                               : what +
                                     " is not registered now; marked: it is served "
                                     "OUT_OF_SERVICE when it registers, until marked back in");
  }
  return ok(entry != nullptr ? what + " is served as registered again (" +
                                   proto::to_string(entry->status()) + ")"
                             : what + " is no longer marked OUT_OF_SERVICE (not registered now)");
}

proto::AdminReply HubCore::add_static(const proto::AdminRequest& request) {
  const std::string what = describe(request.service, request.instance_id);
  proto::Instance instance = *request.instance;
  instance.tier = 0;  // set by hubs in answers
  const InstanceEntry* existing = find_entry(registry_.find(request.service), instance.id);
  if (existing != nullptr && existing->owner != kStaticOwner)
    return refused(what + " is registered by " + describe_owner(existing->owner) +
                   "; a static instance needs an id no agent reports");
  registry_.begin_txn();
  ServiceEntry& svc = registry_.service(request.service);
  if (!registry_.upsert(svc, instance, kStaticOwner).changed)
    return ok(what + " is already static at " + instance.address + "; nothing changed");
  return ok(what + (existing != nullptr ? " updated: " : " added: ") + instance.address +
            ", static (no agent, no lease) until remove_static");
}

proto::AdminReply HubCore::remove_static(const proto::AdminRequest& request) {
  const std::string what = describe(request.service, request.instance_id);
  ServiceEntry* svc = registry_.find(request.service);
  const InstanceEntry* entry = find_entry(svc, request.instance_id);
  if (entry == nullptr) return refused("no instance " + what);
  if (entry->owner != kStaticOwner)
    return refused(what + " is registered by " + describe_owner(entry->owner) +
                   ", not by add_static: it leaves when its agent deregisters or expires");
  registry_.begin_txn();
  std::string ask_again;
  if (!registry_.remove(*svc, request.instance_id, kStaticOwner, &ask_again)) {
    // A node that reported the same id keeps it, now with its own report.
    ask_for_set(ask_again);
    return ok(what + " is no longer static; " + describe_owner(entry->owner) +
              " reports it and keeps it");
  }
  return ok(what + " removed");
}

proto::AdminReply HubCore::readmit(MonoTime now, const proto::AdminRequest& request) {
  const std::string what = describe(request.service, request.instance_id);
  ServiceEntry* svc = registry_.find(request.service);
  const InstanceEntry* entry = find_entry(svc, request.instance_id);
  if (entry == nullptr) return refused("no instance " + what);
  // The tracker may still count an isolation the registry no longer shows
  // (the instance left and came back): lifted too.
  isolation_.readmit(now, {request.service, request.instance_id});
  if (entry->verdict().health == proto::Health::kIsolated) {
    registry_.begin_txn();
    // As when it ends by itself: unconfirmed if its agent is held, else ok.
    registry_.set_verdict(*svc, request.instance_id, verdict_after_isolation(*entry));
    ++counters_.readmissions;
    return ok(what + " readmitted (on probation for " +
              std::to_string(isolation_.policy().probation.count()) + " ms)");
  }
  if (entry->reported_health() == proto::Health::kIsolated)
    return refused(what + " is isolated by the lower-tier hub that holds it (" +
                   describe_owner(entry->owner) + "); readmit it there");
  return ok(what + " is not isolated; nothing to lift");
}

proto::AdminReply HubCore::set_eviction_protection(bool enabled) {
  if (guard_.enabled() == enabled)
    return ok(std::string("eviction protection is already ") + on_off(enabled));
  guard_.set_enabled(enabled);
  settings_dirty_ = true;
  return ok(enabled ? "eviction protection on: mass lease expiry is held back"
                    : "eviction protection off: leases expire when they run out; held agents "
                      "are released");
}

proto::AdminReply HubCore::set_notify_switch(bool enabled, std::uint32_t share_percent) {
  const auto& current = push_budget_.config();
  // Off keeps the share it had, for the next time it is switched on.
  const std::uint32_t share = enabled ? share_percent : current.share_percent;
  if (current.notify_switch == enabled && current.share_percent == share)
    return ok(std::string("notify switch is already ") + on_off(enabled));
  push_budget_.set_switch(enabled, share);  // service and config pushes alike
  settings_dirty_ = true;
  if (!enabled)
    return ok("notify switch off: isolations and config changes are pushed to every consumer");
  return ok("notify switch on: isolations and config changes are pushed to " +
            std::to_string(share) +
            "% of each service's consumers or group's followers per push; the others learn at "
            "their next beat");
}

proto::AdminReply HubCore::set_routes(MonoTime now, const proto::AdminRequest& request) {
  const auto& key = request.service;
  const auto count = request.routes.size();
  const std::string rules =
      std::to_string(count) + (count == 1 ? " routing rule" : " routing rules");
  ServiceEntry* svc = registry_.find(key);
  if (svc == nullptr && request.routes.empty())
    return ok(describe(key) + " has no routing rules; nothing changed");
  registry_.begin_txn();
  if (svc == nullptr) svc = &registry_.service(key);  // rules may come before the instances
  if (!registry_.set_routes(*svc, request.routes)) {
    return ok(count == 0 ? describe(key) + " has no routing rules; nothing changed"
                         : describe(key) + " already has these " + rules + "; nothing changed");
  }
  dirty_routes_.push_back(key);
  push_gate_.mark(now, svc);  // consumers following the service learn between beats
  if (count == 0) return ok(describe(key) + ": routing rules removed; consumers get the change");
  return ok(describe(key) + ": " + rules + " set; consumers get them with their next update");
}

void HubCore::restore_admin(const HubSnapshot& snapshot) {
  for (const auto& mark : snapshot.overrides) {
    if (mark.status == proto::InstanceStatus::kOutOfService)
      registry_.set_out_of_service(mark.service, mark.id, true);
    else
      spdlog::warn("ignored a stored override of {} to {}: only OUT_OF_SERVICE is supported",
                   describe(mark.service, mark.id), proto::to_string(mark.status));
  }
  std::size_t statics = 0;
  for (const InstanceRow row : snapshot.instances) {
    if (row.owner != kStaticOwner) continue;
    const InstanceRecord rec = row.record();
    registry_.restore_instance(rec.service, rec.instance, rec.owner, rec.row);
    ++statics;
  }
  std::size_t rules = 0;
  for (const auto& set : snapshot.routes) {
    rules += set.routes.size();
    registry_.restore_routes(set.service, set.routes);
  }
  std::optional<bool> notify;
  std::uint32_t share = push_budget_.config().share_percent;
  for (const auto& setting : snapshot.settings) {
    if (setting.key == kSettingEvictionProtection) {
      guard_.set_enabled(setting.value != 0);
    } else if (setting.key == kSettingNotifySwitch) {
      notify = setting.value != 0;
    } else if (setting.key == kSettingGrantedStretch) {
      restore_granted_stretch(setting.value);
    } else if (setting.key == kSettingNotifySharePercent) {
      if (setting.value >= 1 && setting.value <= 100)
        share = static_cast<std::uint32_t>(setting.value);
      else
        spdlog::warn("ignored the stored notify share {}: not from 1 to 100", setting.value);
    } else {
      spdlog::warn("ignored the stored setting {}: unknown to this build", setting.key);
    }
  }
  push_budget_.set_switch(notify.value_or(push_budget_.config().notify_switch), share);
  if (!snapshot.overrides.empty() || statics > 0 || !snapshot.settings.empty() || rules > 0)
    spdlog::info(
        "restored operator state: {} out-of-service marks, {} static instances, {} routing "
        "rules of {} services; eviction protection {}, notify switch {} ({}%)",
        snapshot.overrides.size(), statics, rules, snapshot.routes.size(), on_off(guard_.enabled()),
        on_off(push_budget_.config().notify_switch), push_budget_.config().share_percent);
}

// Far above any governor's max_stretch: a larger value is a damaged row.
constexpr std::int64_t kMaxStoredStretch = 1 << 16;

void HubCore::restore_granted_stretch(std::int64_t stored) {
  if (stored >= 1 && stored <= kMaxStoredStretch)
    granted_stretch_.restore(static_cast<std::uint32_t>(stored));
  else
    spdlog::warn("ignored the stored granted stretch {}: not from 1 to {}", stored,
                 kMaxStoredStretch);
}

void HubCore::take_admin_changes(PersistBatch& batch) {
  std::sort(dirty_overrides_.begin(), dirty_overrides_.end());
  dirty_overrides_.erase(std::unique(dirty_overrides_.begin(), dirty_overrides_.end()),
                         dirty_overrides_.end());
  for (auto& key : dirty_overrides_) {
    if (registry_.is_marked_out_of_service(key.service, key.id))
      batch.override_upserts.push_back(
          {std::move(key.service), std::move(key.id), proto::InstanceStatus::kOutOfService});
    else
      batch.override_deletes.push_back({std::move(key.service), std::move(key.id)});
  }
  dirty_overrides_.clear();
  if (settings_dirty_) {
    const auto& push = push_budget_.config();
    batch.settings = {
        {std::string(kSettingEvictionProtection), guard_.enabled() ? 1 : 0},
        {std::string(kSettingNotifySwitch), push.notify_switch ? 1 : 0},
        {std::string(kSettingNotifySharePercent), static_cast<std::int64_t>(push.share_percent)}};
    settings_dirty_ = false;
  }
  if (stretch_to_store_)
    batch.settings.push_back(
        {std::string(kSettingGrantedStretch), *std::exchange(stretch_to_store_, std::nullopt)});
  std::sort(dirty_routes_.begin(), dirty_routes_.end());
  dirty_routes_.erase(std::unique(dirty_routes_.begin(), dirty_routes_.end()), dirty_routes_.end());
  for (auto& key : dirty_routes_) {
    const ServiceEntry* svc = registry_.find(key);
    batch.route_sets.push_back(
        {std::move(key), svc != nullptr ? svc->routes : std::vector<proto::RouteRuleText>{}});
  }
  dirty_routes_.clear();
  batch.audit = std::move(audit_pending_);
  audit_pending_.clear();
}

void HubCore::requeue_admin(const PersistBatch& failed) {
  for (const auto& o : failed.override_upserts)
    dirty_overrides_.push_back({o.service, o.id});
  for (const auto& k : failed.override_deletes)
    dirty_overrides_.push_back({k.service, k.id});
  for (const auto& setting : failed.settings) {
    if (setting.key != kSettingGrantedStretch)
      settings_dirty_ = true;
    else if (!stretch_to_store_)  // else a newer value waits already
      stretch_to_store_ = static_cast<std::uint32_t>(setting.value);
  }
  for (const auto& set : failed.route_sets)
    dirty_routes_.push_back(set.service);
  // The failed batch's records come before anything audited since.
  audit_pending_.insert(audit_pending_.begin(), failed.audit.begin(), failed.audit.end());
}

}  // namespace cascade::hub
