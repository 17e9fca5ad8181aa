#pragma once
// The read endpoints of the hub's HTTP admin API (schemas/hub-http-api.md):
//   GET /api/v1/status                       identity, sizes, instances by state, switches,
//   counters GET /api/v1/switches                     eviction protection and the notify switch GET
//   /api/v1/services                     every service with instances or rules, sorted GET
//   /api/v1/services/{service}           its instances as this hub holds and serves them GET
//   /api/v1/services/{service}/routes    its routing rules GET /api/v1/topology this hub, its child
//   hubs and upstreams GET /api/v1/isolated                     instances this hub isolates
//   (bounded) GET /api/v1/unconfirmed                  instances eviction protection holds
//   (bounded) GET /api/v1/audit                        the audit log, newest first, in pages
// The hub's state is read on its owning thread (OwnerPort), the audit log on
// the HTTP thread through a connection of its own (hub/audit_reader.hpp).

#include <functional>

#include "cascade/http/router.hpp"
#include "cascade/hub/admin_api/admin_json.hpp"
#include "cascade/hub/admin_api/owner_port.hpp"
#include "cascade/hub/audit_reader.hpp"

namespace cascade::hub::admin_api {

struct ReadLimits {
  std::size_t list_default = 1000;  // instances per isolated / unconfirmed answer without ?limit=
  std::size_t list_max = 10'000;
  std::size_t audit_default = 100;  // records per audit page without ?limit=
  std::size_t audit_max = 1000;
};

// `server_counters`: the HTTP server's own counts, shown in status as "http".
void add_read_routes(http::Router& router, OwnerPort& owner, AuditReader& audit,
                     std::function<Json()> server_counters, ReadLimits limits = {});

}  // namespace cascade::hub::admin_api
