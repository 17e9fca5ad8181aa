#pragma once
// The JSON of the hub's HTTP admin API (schemas/hub-http-api.md), built from
// the hub's state on its owning thread (hub/admin_api/owner_port.hpp) or from
// the audit log. Every builder costs what it shows: a service's instances,
// the services' summaries, the child hubs, a bounded list.
//
// Conventions: names as the wire has them ("UP", "isolated",
// "mark_out_of_service"); durations in milliseconds, in fields ending _ms;
// an instance is cascadectl's and the agent's instance JSON
// (common/instance_json.hpp) with what only the hub knows added.

#include <cstddef>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/store.hpp"

namespace cascade::hub::admin_api {

using Json = nlohmann::ordered_json;

// GET /api/v1/status. `status` as HubServer::status() gives it.
Json status_json(const proto::StatusReply& status, const HubCore& core);
// GET /api/v1/switches, and status's "switches".
Json switches_json(const HubCore& core);
// GET /api/v1/services: the services with instances or routing rules, by name, then group.
Json services_json(const HubCore& core);
// GET /api/v1/services/{name}; nullopt when the hub knows no such service
// (no instances and no rules). Without `all` the isolated instances are left
// out and counted in "hidden_isolated", as `cascadectl resolve` shows them.
std::optional<Json> service_json(const HubCore& core, MonoTime now, const proto::ServiceKey& key,
                                 bool all);
// GET /api/v1/services/{name}/routes: the rules as set-routes arguments (which
// PUT takes back unchanged) and as fields.
Json routes_json(const HubCore& core, const proto::ServiceKey& key);
// The rules of a dry run, as the agents' parser reads them.
Json parsed_rules_json(const proto::ServiceKey& key,
                       const std::vector<proto::RouteRuleText>& rules);
// GET /api/v1/topology. `status` as HubServer::status() gives it.
Json topology_json(const proto::StatusReply& status, const HubCore& core, MonoTime now);
// GET /api/v1/isolated and /api/v1/unconfirmed.
Json isolated_json(const ListedInstances& list);
Json unconfirmed_json(const ListedInstances& list);
// GET /api/v1/audit: a page asked with `limit`, newest first.
Json audit_json(const std::vector<AuditEntry>& page, std::size_t limit);

}  // namespace cascade::hub::admin_api
