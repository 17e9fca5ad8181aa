#include "cascade/agent/api/native_json.hpp"

#include <algorithm>
#include <cctype>

#include "cascade/common/validate.hpp"
#include "cascade/http/instance_fields.hpp"

namespace cascade::agent::api {

std::string dump(const Json& json) {
  return http::dump_json(json);
}

Json resolution_json(const Resolution& r) {
  Json instances = Json::array();
  for (const auto& in : r.instances)
    instances.push_back(instance_json(in));
  Json json = {
      {"service", r.service.name},
      {"group", r.service.group},
      {"version", r.version},
      {"source", r.source == Source::kHub ? "hub" : "snapshot"},
      {"age_ms", r.age.count()},
      {"stale", r.stale},
      {"instances", std::move(instances)},
  };
  json["routes"] = routes_json(r.routes);  // null: no hub has said
  return json;
}

Json registration_json(const proto::Registration& r) {
  Json json = instance_json(r.instance);
  json.erase("tier");  // set by hubs in answers only
  json.erase("health");
  json.erase("health_reason");
  Json out = {{"service", r.service.name}, {"group", r.service.group}};
  out.update(json);
  return out;
}

Json status_json(const ClientStatus& status, const ClientOptions& options,
                 const std::vector<proto::Registration>& registrations,
                 const std::vector<proto::ServiceKey>& uses) {
  Json hubs = Json::array();
  for (const auto& hub : options.hubs)
    hubs.push_back(hub);
  Json registered = Json::array();
  for (const auto& r : registrations)
    registered.push_back(registration_json(r));
  Json used = Json::array();
  for (const auto& key : uses)
    used.push_back({{"service", key.name}, {"group", key.group}});
  return {
      {"node_id", status.node_id},
      {"hubs", std::move(hubs)},
      {"current_hub", options.hubs.empty() ? "" : options.hubs[status.current_hub]},
      {"hub_id", status.hub_id},
      {"state", status.hub_reachable ? "connected" : "hub_unreachable"},
      {"lease_ms", status.lease.count()},
      {"beat_interval_ms", status.beat_interval.count()},
      {"last_reply_age_ms",
       status.last_reply_age ? Json(status.last_reply_age->count()) : Json(nullptr)},
      {"failovers", status.failovers},
      {"last_refusal", status.last_refusal},
      {"registered", std::move(registered)},
      {"uses", std::move(used)},
  };
}

std::variant<proto::Registration, BodyError> registration_from_json(std::string_view body) {
  auto parsed = parse_object(body);
  if (auto* error = std::get_if<BodyError>(&parsed)) return *error;
  JsonFields fields(std::get<nlohmann::json>(parsed));
  proto::Registration r;
  r.service.name = fields.text("service", true).value_or("");
  r.service.group = fields.text("group").value_or(std::string(proto::kDefaultGroup));
  // Read before the id, which defaults to the address.
  http::read_instance_fields(fields, r.instance);
  r.instance.id = fields.text("id").value_or(r.instance.address);
  if (auto error = fields.finish()) return *error;
  if (auto error = proto::check_registration(r); !error.empty())
    return BodyError{"invalid_field", error};
  return r;
}

}  // namespace cascade::agent::api
