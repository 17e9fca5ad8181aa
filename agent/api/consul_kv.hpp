#pragma once
// Consul's KV store, as a view of cascade's config centre (docs/consul-compat.md,
// "KV store"): the first segment of a KV path is a config group, the rest a
// key of it.
//   GET    /v1/kv/GROUP/KEY           [entry] (?raw: the value itself), 404 when absent
//   GET    /v1/kv/GROUP/PREFIX?recurse  every entry of GROUP whose key starts with PREFIX
//   GET    /v1/kv/GROUP/PREFIX?keys     their paths only
//   PUT    /v1/kv/GROUP/KEY           body = the value: a config edit at the agent's hub
//   DELETE /v1/kv/GROUP/KEY           removes it (?recurse: every key under the prefix)
// X-Consul-Index is the group's version; ?index=&wait= block until it
// differs. Reads answer from the agent's copy of the group or park
// (agent/api/config_watches.hpp); writes go to the hub from the HubEditor's
// thread and are answered after the hub committed them. What Consul's KV
// has and cascade's config centre has not (check-and-set, locks, flags,
// other datacenters) is refused with 400, never ignored.

#include "cascade/agent/api/config_watches.hpp"
#include "cascade/agent/api/hub_editor.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/http/router.hpp"

namespace cascade::agent::api {

// `client`, `watches` and `editor` must outlive the routes.
void add_consul_kv_routes(http::Router& router, const Client& client, ConfigWatches& watches,
                          HubEditor& editor);

}  // namespace cascade::agent::api
