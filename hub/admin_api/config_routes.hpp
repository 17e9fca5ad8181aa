#pragma once
// The config centre in the hub's HTTP admin API (schemas/hub-http-api.md):
//   GET    /api/v1/config                          the groups this hub serves, with sizes
//   GET    /api/v1/config/{group}                  the group as served, each value's origin
//   GET    /api/v1/config/{group}/keys/{key}       one key (404 when absent)
//   GET    /api/v1/config/{group}/history          changes of this hub's keys, newest first
//   PUT    /api/v1/config/{group}/keys/{key}       set one key: {"value": TEXT} or
//                                                  {"value_hex": HEX} (bytes)
//   DELETE /api/v1/config/{group}/keys/{key}       remove one key at this hub
//   POST   /api/v1/config/{group}/edit             {"set": {KEY: TEXT}, "remove": [KEY]}:
//                                                  together or not at all
//   POST   /api/v1/config/{group}/rollback         {"version": N}
// Reads are answered on the owning thread (ConfigRequest, as cascadectl's);
// commands are operator commands (hub/admin_api/command_submit.hpp), answered
// with {"op", "ok", "message", "group", "version"} once durable.

#include "cascade/http/router.hpp"
#include "cascade/hub/admin_api/owner_port.hpp"

namespace cascade::hub::admin_api {

void add_config_routes(http::Router& router, OwnerPort& owner);

}  // namespace cascade::hub::admin_api
