#pragma once
// The standard simulated deployment of the scenario tests and the checks run
// against it: providers (one instance each, many per service) and consumers
// (each using a few services), with the beat, lease and network of production.

#include <cstdint>
#include <string>
#include <vector>

#include "cascade/sim/tiered_world.hpp"
#include "cascade/sim/world.hpp"

namespace cascade::sim::testing {

inline constexpr Duration kBeatInterval{2000};
inline constexpr double kBeatJitter = 0.1;
inline constexpr Duration kLongestBeatInterval{2200};  // kBeatInterval + 10%
inline constexpr Duration kLease{6000};
inline constexpr Duration kMaxDelay{50};
inline constexpr Duration kRoundTrip = 2 * kMaxDelay;
inline constexpr Duration kWarmUp{15'000};  // a consumer's query may be lost several times
// "Two beat intervals and the network delay": once the hub is quiet, a
// consumer's next beat leaves within one (jittered) interval and its reply is
// back within a round trip; the second interval covers a round trip lost.
inline constexpr Duration kConvergenceBound = 2 * kLongestBeatInterval + kRoundTrip;
// How often the hubs of the scenarios recount their running totals
// (WorldConfig::audit_interval): often enough to catch a drift near the step
// that made it, seldom enough for 5,000 agents.
inline constexpr Duration kTotalsAudit{1000};

WorldConfig standard_config(std::uint64_t seed);

struct FleetShape {
  std::size_t services = 50;
  std::size_t instances_per_service = 20;  // one provider agent per instance
  std::size_t consumers = 200;
  std::size_t uses_per_consumer = 3;
  Duration start_spread{2000};  // agents start uniformly over this window
};

struct Fleet {
  std::vector<proto::ServiceKey> services;
  std::vector<std::size_t> providers;  // agent indexes
  std::vector<std::size_t> consumers;
};

proto::ServiceKey service_key(std::size_t index);

// Adds the fleet's agents to the world and schedules their starts from now.
Fleet build_fleet(World& world, const FleetShape& shape);

// Adds one more provider of fleet.services[service] (not started).
std::size_t add_provider(World& world, Fleet& fleet, std::size_t service, const std::string& id);

// The one instance a provider agent registers.
const proto::Registration& provided(const World& world, std::size_t provider);

// "service/instance" of every running provider whose instance the hub lacks.
std::vector<std::string> missing_live_instances(const World& world, const Fleet& fleet);

bool cache_matches_hub(const World& world, std::size_t agent, const proto::ServiceKey& service);
bool consumer_matches_hub(const World& world, std::size_t consumer);
// "consumer service" for every (running consumer, used service) whose cached
// list differs from the hub's list.
std::vector<std::string> consumers_out_of_date(const World& world, const Fleet& fleet);

// Why the hub's running totals cannot be trusted: one line per hub whose
// audits found a total that had drifted (the first finding), or that was
// never audited; empty when every audit agreed.
std::vector<std::string> totals_drift(const HubProcessStats& hub, const std::string& name);
std::vector<std::string> totals_drift(const World& world);
std::vector<std::string> totals_drift(const TieredWorld& world);  // every hub

// Indexes `count` providers spread over all services (every `stride`-th).
std::vector<std::size_t> pick_providers(const Fleet& fleet, std::size_t count);

}  // namespace cascade::sim::testing
