#pragma once
// What cascade-agent serves on --metrics (Prometheus text format): the
// process; its link to the hubs (beats and their round trips, pushes,
// failovers, the lease); its first lookups; its cache; picks and calls
// (breakers, the extra-request budget); fast-fail reports; and its HTTP and
// DNS interfaces when they run. docs/metrics.md lists every family with its
// labels. Units are in the names (_seconds, _total); labels take a handful of
// fixed values, never a service name or an address.
//
// How each value gets here, so that the agent's own threads pay at most a
// relaxed atomic add or a plain increment under a lock they hold anyway:
// - Counts and states the Client keeps (ClientStats: the core's beat and
//   lookup counters, picks, the Caller's totals and breakers, the cache's
//   ages) come from one Client::stats() per scrape, on the scraping thread;
//   that call passes once over the cache and the breakers.
// - The HTTP API's and DNS server's atomics (http::ServerCounters,
//   DnsCounters) are read at scrape.
// - The beats' round trips and the first lookups' latencies are observed as
//   they happen, into histograms, by the Client's I/O thread (ClientObserver).
//
// Use: make an AgentMetrics before the Client and put observer() into its
// ClientOptions; call read_from() once the parts exist; serve registry().
// Lifetime: the AgentMetrics outlives the Client; the parts given to
// read_from() outlive the registry's scrapes (stop the metrics endpoint first).

#include <memory>

#include "cascade/agent/api/local_api.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/agent/client_observer.hpp"
#include "cascade/agent/dns/dns_server.hpp"
#include "cascade/metrics/registry.hpp"

namespace cascade::agent {

class AgentMetrics {
 public:
  AgentMetrics();  // the registry, with the histograms the observer fills
  ~AgentMetrics();
  AgentMetrics(const AgentMetrics&) = delete;
  AgentMetrics& operator=(const AgentMetrics&) = delete;

  ClientObserver& observer() { return *timings_; }
  // The families read at scrape from these parts, and the process metrics.
  // Once. `api` and `dns` may be null (not running).
  void read_from(const Client& client, const api::LocalApi* api, const dns::DnsServer* dns);
  const metrics::Registry& registry() const { return registry_; }

 private:
  metrics::Registry registry_;
  std::unique_ptr<ClientObserver> timings_;
};

}  // namespace cascade::agent
