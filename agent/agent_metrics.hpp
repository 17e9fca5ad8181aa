#pragma once
// What cascade-agent serves on --metrics (Prometheus text format): the
// process, its link to the hubs and its cache, and its HTTP and DNS
// interfaces when they run. Every value is read at scrape time from what
// those parts count already (ClientStatus, http::ServerCounters,
// DnsCounters), so nothing on their paths changes.
//
// Families (units in the names, low-cardinality labels):
//   cascade_agent_hub_reachable, cascade_agent_hub_failovers_total,
//   cascade_agent_hub_lease_seconds, cascade_agent_hub_last_reply_age_seconds,
//   cascade_agent_cached_services, cascade_agent_registered_instances,
//   cascade_agent_http_* (requests, responses by class, refusals by reason,
//   parked requests, connections), cascade_agent_dns_* (queries by transport,
//   replies by rcode, lookups), and the process_* metrics.
//
// Lifetime: the parts given must outlive the registry's scrapes (stop the
// metrics endpoint first).

#include <memory>

#include "cascade/agent/api/local_api.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/agent/dns/dns_server.hpp"
#include "cascade/metrics/registry.hpp"

namespace cascade::agent {

// `api` and `dns` may be null (not running).
std::unique_ptr<metrics::Registry> agent_metrics(const Client& client, const api::LocalApi* api,
                                                 const dns::DnsServer* dns);

}  // namespace cascade::agent
