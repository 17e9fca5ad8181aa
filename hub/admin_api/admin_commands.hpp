#pragma once
// The operator commands of the hub's HTTP admin API, cascadectl's operator
// commands over HTTP (schemas/hub-http-api.md):
//   POST   /api/v1/services/{service}/instances/{id}/out-of-service   mark-out-of-service
//   DELETE /api/v1/services/{service}/instances/{id}/out-of-service   mark-in-service
//   POST   /api/v1/services/{service}/instances/{id}/readmit          readmit
//   PUT    /api/v1/services/{service}/static/{id}                     add-static
//   DELETE /api/v1/services/{service}/static/{id}                     remove-static
//   PUT    /api/v1/services/{service}/routes                          set-routes (?dry_run=1)
//   DELETE /api/v1/services/{service}/routes                          set-routes --clear
//   PUT    /api/v1/switches/eviction-protection                       eviction-protection
//   PUT    /api/v1/switches/notify                                    notify-switch
//   POST   /api/v1/reload-keys                                        reload-keys
//
// Each builds the AdminRequest cascadectl sends (common/admin_request.hpp),
// refuses what the hub's own checks refuse (hub/admin_checks.hpp) with their
// message, and hands the rest to the owning thread, where HubCore::handle
// carries it out and records it in the audit log as "http:NAME" (the bearer
// token's name) from the peer's address. The answer waits there for the
// commit that holds the change: 200 only once it is durable, 503 when the
// commit failed. A command needs a bearer token, always.

#include "cascade/http/router.hpp"
#include "cascade/hub/admin_api/owner_port.hpp"

namespace cascade::hub::admin_api {

void add_command_routes(http::Router& router, OwnerPort& owner);

}  // namespace cascade::hub::admin_api
