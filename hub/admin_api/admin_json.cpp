#include "cascade/hub/admin_api/admin_json.hpp"

#include <algorithm>

#include "cascade/agent/routing_rule.hpp"
#include "cascade/common/admin_request.hpp"
#include "cascade/common/instance_json.hpp"

namespace cascade::hub::admin_api {

namespace {

Json counters_object(const std::vector<std::pair<std::string, std::uint64_t>>& counters) {
  Json object = Json::object();
  for (const auto& [name, value] : counters)
    object[name] = value;
  return object;
}

Json upstreams_json(const std::vector<proto::UpstreamStatus>& upstreams) {
  Json list = Json::array();
  for (const auto& up : upstreams) {
    list.push_back(
        {{"endpoint", up.endpoint},
         {"hub_id", up.hub_id.empty() ? Json(nullptr) : Json(up.hub_id)},
         {"current", up.current},
         {"reachable", up.reachable},
         {"last_reply_ms", up.last_reply_ms < 0 ? Json(nullptr) : Json(up.last_reply_ms)},
         {"lease_ms", up.lease_ms}});
  }
  return list;
}

// One instance with what only the hub knows: what its owner reported beside
// what is served, the operator's mark, whose it is and its lease.
Json instance_view(const HubCore& core, MonoTime now, std::string_view id,
                   const InstanceEntry& entry) {
  Json json = instance_json(entry.served(id));
  const bool is_static = entry.owner == kStaticOwner;
  const auto lease = is_static ? std::nullopt : core.lease_left(entry.owner, now);
  json["reported_status"] = proto::to_string(entry.status());
  json["out_of_service"] = entry.out_of_service;
  json["static"] = is_static;
  json["owner"] = is_static ? Json(nullptr) : Json(entry.owner.str());
  json["lease_ms"] = lease ? Json(lease->count()) : Json(nullptr);
  json["held"] = !is_static && core.is_held(entry.owner);
  return json;
}

Json rule_arguments(const std::vector<proto::RouteRuleText>& rules) {
  Json list = Json::array();
  for (const auto& rule : rules)
    list.push_back(admin::rule_argument(rule));
  return list;
}

Json conditions_json(const std::vector<agent::RouteCondition>& conditions) {
  Json list = Json::array();
  for (const auto& condition : conditions) {
    Json values = Json::array();
    for (const auto& value : condition.values)
      values.push_back(value.consumer_ref ? "$" + value.consumer_ref->to_string()
                                          : value.glob.pattern());
    list.push_back({{"key", condition.attribute.to_string()},
                    {"op", condition.negated ? "!=" : "="},
                    {"values", std::move(values)}});
  }
  return list;
}

Json listed_json(const ListedInstances& list, const char* duration_field, bool with_hold) {
  Json instances = Json::array();
  for (const auto& in : list.instances) {
    Json json = {{"service", in.service.name},     {"group", in.service.group}, {"id", in.id},
                 {"address", in.address},          {"reason", in.reason},       {"node", in.node},
                 {duration_field, in.span.count()}};
    if (with_hold) json["hold"] = in.hold;
    instances.push_back(std::move(json));
  }
  return {{"total", list.total},
          {"truncated", list.instances.size() < list.total},
          {"instances", std::move(instances)}};
}

}  // namespace

Json switches_json(const HubCore& core) {
  const auto& push = core.push_settings();
  return {{"eviction-protection", {{"enabled", core.eviction_protection()}}},
          {"notify", {{"enabled", push.notify_switch}, {"share_percent", push.share_percent}}}};
}

Json status_json(const proto::StatusReply& status, const HubCore& core) {
  const auto& totals = core.registry().totals();
  return {{"hub_id", status.hub_id},
          {"tier", status.tier},
          {"zone", status.zone},
          {"epoch", status.hub_epoch},
          {"uptime_ms", status.uptime_ms},
          {"security", status.security},
          {"nodes", status.nodes},
          {"child_hubs", status.child_hubs},
          {"services", status.services},
          {"instances", status.instances},
          {"instances_by_state",
           {{"up", totals.up},
            {"isolated", totals.isolated},
            {"unconfirmed", totals.unconfirmed},
            {"out_of_service", totals.out_of_service},
            {"static", totals.static_instances}}},
          {"subscriptions", core.subscription_count()},
          {"switches", switches_json(core)},
          {"upstreams", upstreams_json(status.upstreams)},
          {"cross_tier_entries", status.cross_tier_entries},
          {"counters", counters_object(status.counters)}};
}

Json services_json(const HubCore& core) {
  std::vector<const ServiceEntry*> shown;
  core.registry().for_each_service([&](const ServiceEntry& svc) {
    if (!svc.instances.empty() || !svc.routes.empty()) shown.push_back(&svc);
  });
  std::sort(shown.begin(), shown.end(),
            [](const ServiceEntry* a, const ServiceEntry* b) { return a->key < b->key; });
  Json list = Json::array();
  for (const auto* svc : shown) {
    list.push_back({{"service", svc->key.name},
                    {"group", svc->key.group},
                    {"version", svc->version},
                    {"instances", svc->instances.size()},
                    {"up", svc->up},
                    {"isolated", svc->isolated},
                    {"unconfirmed", svc->unconfirmed},
                    {"out_of_service", svc->out_of_service},
                    {"routes", svc->routes.size()}});
  }
  return list;
}

std::optional<Json> service_json(const HubCore& core, MonoTime now, const proto::ServiceKey& key,
                                 bool all) {
  const ServiceEntry* svc = core.registry().find(key);
  if (svc == nullptr || (svc->instances.empty() && svc->routes.empty())) return std::nullopt;
  Json instances = Json::array();
  std::size_t hidden = 0;
  for (const InstanceSlot* slot : svc->instances.sorted()) {
    if (!all && slot->entry().health() == proto::Health::kIsolated) {
      ++hidden;
      continue;
    }
    instances.push_back(instance_view(core, now, slot->id(), slot->entry()));
  }
  return Json{{"service", key.name},
              {"group", key.group},
              {"version", svc->version},
              {"up", svc->up},
              {"isolated", svc->isolated},
              {"unconfirmed", svc->unconfirmed},
              {"out_of_service", svc->out_of_service},
              {"hidden_isolated", hidden},
              {"rules", rule_arguments(svc->routes)},
              {"routes", cascade::routes_json(svc->routes)},
              {"instances", std::move(instances)}};
}

Json routes_json(const HubCore& core, const proto::ServiceKey& key) {
  // Rules may come before the instances: a service unknown here has none yet.
  const ServiceEntry* svc = core.registry().find(key);
  const std::vector<proto::RouteRuleText> none;
  const auto& rules = svc != nullptr ? svc->routes : none;
  return {{"service", key.name},
          {"group", key.group},
          {"version", svc != nullptr ? svc->version : 0},
          {"rules", rule_arguments(rules)},
          {"routes", cascade::routes_json(rules)}};
}

Json parsed_rules_json(const proto::ServiceKey& key,
                       const std::vector<proto::RouteRuleText>& rules) {
  Json list = Json::array();
  for (const auto& rule : rules) {
    const auto parsed = agent::parse_route_rule(rule.text);
    // Only rules check_admin_request accepted come here: they parse.
    if (!parsed) continue;
    list.push_back({{"rule", admin::rule_argument(rule)},
                    {"text", rule.text},
                    {"priority", rule.priority},
                    {"force", rule.force},
                    {"enabled", rule.enabled},
                    {"consumer_match", conditions_json(parsed.rule->consumer_match)},
                    {"provider_filter", conditions_json(parsed.rule->provider_filter)},
                    {"denies_all", parsed.rule->denies_all()}});
  }
  return {{"service", key.name}, {"group", key.group}, {"valid", true}, {"rules", std::move(list)}};
}

Json topology_json(const proto::StatusReply& status, const HubCore& core, MonoTime now) {
  Json hubs = Json::array();
  for (const auto& child : core.child_hubs(now)) {
    hubs.push_back({{"hub_id", child.node_id},
                    {"tier", child.tier},
                    {"lease_ms", child.lease_left.count()},
                    {"held", child.held},
                    {"instances", child.instances}});
  }
  return {{"hub_id", status.hub_id},
          {"tier", status.tier},
          {"zone", status.zone},
          {"epoch", status.hub_epoch},
          {"agents", status.nodes - status.child_hubs},
          {"children", std::move(hubs)},
          {"upstreams", upstreams_json(status.upstreams)},
          {"cross_tier_entries", status.cross_tier_entries}};
}

Json isolated_json(const ListedInstances& list) {
  return listed_json(list, "readmit_in_ms", false);
}

Json unconfirmed_json(const ListedInstances& list) {
  return listed_json(list, "held_for_ms", true);
}

Json audit_json(const std::vector<AuditEntry>& page, std::size_t limit) {
  Json records = Json::array();
  for (const auto& [id, r] : page) {
    const bool names_service = !r.service.name.empty();
    records.push_back({{"id", id},
                       {"at_ms", r.at_ms},
                       {"actor", r.actor},
                       {"op", r.op},
                       {"service", names_service ? Json(r.service.name) : Json(nullptr)},
                       {"group", names_service ? Json(r.service.group) : Json(nullptr)},
                       {"instance_id", r.instance_id.empty() ? Json(nullptr) : Json(r.instance_id)},
                       {"ok", r.ok},
                       {"detail", r.detail},
                       {"key", r.key},
                       {"peer", r.peer}});
  }
  // A full page may have older records behind it; a short one is the end.
  const bool more = page.size() == limit && !page.empty();
  return {{"records", std::move(records)},
          {"next_before", more ? Json(page.back().id) : Json(nullptr)}};
}

}  // namespace cascade::hub::admin_api
