#pragma once
// The config centre in the agent's native API (schemas/http-api.md):
//   GET /api/v1/config/{group}        the group as this agent holds it
//   GET /api/v1/config/{group}/{key}  one value (keys may hold '/')
// With ?index=V (the version, a string in the JSON, also the X-Cascade-Index
// header) either is a watch: answered when the group's version differs from
// V, or with the group as it is when ?wait= ends. A group this agent does not
// follow yet is followed from the first request on, which waits (parked, no
// server thread) for the hub's first answer; agent/api/config_watches.hpp.

#include "cascade/agent/api/config_watches.hpp"
#include "cascade/http/router.hpp"

namespace cascade::agent::api {

void add_native_config_routes(http::Router& router, ConfigWatches& watches, Duration query_timeout);

}  // namespace cascade::agent::api
