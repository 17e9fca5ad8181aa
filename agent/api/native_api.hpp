#pragma once
// The agent's native HTTP/JSON API, under /api/v1/ (schemas/http-api.md):
//   GET    /api/v1/status                           the agent: hubs, state, lease, registered, uses
//   GET    /api/v1/instances                        what applications registered here
//   PUT    /api/v1/instances                        register (or replace) an instance
//   DELETE /api/v1/instances/{service}/{id}         deregister one
//   GET    /api/v1/services/{service}               resolve; with ?index=V a watch (long poll)
//   GET    /api/v1/services/{service}/pick          one instance under the service's policy
//   POST   /api/v1/services/{service}/failures      a failed call: a fast-fail report
// Every handler answers from the agent's cache or parks the request; none
// blocks a server thread on a hub.

#include "cascade/agent/api/registration_journal.hpp"
#include "cascade/agent/api/watch_board.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/http/router.hpp"

namespace cascade::agent::api {

// With a journal (--data), registrations are kept on disk until deregistered.
void add_native_routes(http::Router& router, Client& client, WatchBoard& watches,
                       RegistrationJournal* journal = nullptr);

// The answer to a resolve or a woken watch of the native API (also the Render
// of its watches): 200 with the service; 404 unknown_service when the hub
// knows no such service; 503 no_hub when nothing is known.
http::Response native_resolution_response(const Resolution* resolution,
                                          const proto::ServiceKey& service);

}  // namespace cascade::agent::api
