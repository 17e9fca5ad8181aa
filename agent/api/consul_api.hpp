#pragma once
// The Consul-compatible subset of the agent's HTTP API, under /v1/
// (docs/consul-compat.md), for applications and tools written for Consul:
//   PUT      /v1/agent/service/register            register (or replace) a service, TTL checks
//   PUT|GET  /v1/agent/service/deregister/{id}     deregister one of this agent's services
//   PUT|GET  /v1/agent/check/{pass,warn,fail}/{id} a TTL check's report (?note=)
//   PUT      /v1/agent/check/update/{id}           the same, {"Status", "Output"} in the body
//   GET      /v1/agent/services, /v1/agent/checks  what is registered here
//   GET      /v1/agent/self                        this agent
//   GET      /v1/health/service/{name}             instances with checks (?passing, ?tag, ?dc,
//                                                  blocking with ?index=&wait=)
//   GET      /v1/catalog/service/{name}            instances, flat (?tag, ?dc, blocking)
//   GET      /v1/catalog/services                  the services this agent knows (blocking)
//   GET      /v1/status/leader, /v1/status/peers   the hub the agent beats to, its hubs
// GET and PUT both work where python-consul 0.7.1 sends GET (deregister,
// pass, warn, fail) and Consul 1.x requires PUT.
//
// Like the native API, every handler answers from the agent's cache or
// parks the request (blocking queries wait on the WatchBoard: one use of the
// service in the agent's beats, however many watchers); none blocks a server
// thread on a hub. Errors are plain text, as Consul's are.

#include <functional>

#include "cascade/agent/api/registration_journal.hpp"
#include "cascade/agent/api/watch_board.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/http/router.hpp"

namespace cascade::agent::api {

// Adds the routes. The returned function must be given every change of the
// Client's cache (after the WatchBoard): blocking catalog listings wake on it.
// It and the routes share the API's state, a TTL timer thread among it,
// which lives until both are gone; destroy them before `client`, `watches`
// and `clock`.
// With a journal (--data), registered services are kept on disk until deregistered.
std::function<void(const Resolution&)> add_consul_routes(http::Router& router, Client& client,
                                                         WatchBoard& watches, const Clock& clock,
                                                         RegistrationJournal* journal = nullptr);

}  // namespace cascade::agent::api
