#pragma once
// The families of one of cascade's HTTP servers (http::ServerCounters), read
// from its atomics at each scrape: requests, answers by status class,
// refusals by reason, parked requests and connections. The agent's API is
// "cascade_agent_http", the hub's admin API "cascade_hub_http".

#include <string>

#include "cascade/http/server.hpp"
#include "cascade/metrics/read_at_scrape.hpp"

namespace cascade::metrics {

// `counters` must outlive every scrape of `read`'s registry.
void add_http_server_families(ReadAtScrape& read, const http::ServerCounters& counters,
                              const std::string& prefix);

}  // namespace cascade::metrics
