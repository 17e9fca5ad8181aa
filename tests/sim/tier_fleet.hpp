#pragma once
// The standard tiered network of the tier scenarios and the checks run
// against it: one L3, two L2s, four datacenters with one L1 each (dc0 and dc1
// under l2-a, dc2 and dc3 under l2-b), 5,000 agents.
//
// Each datacenter provides its own services (one instance per provider agent,
// many per service); its consumers use two of its own services (same tier),
// one of its sibling datacenter's (cross-tier through their L2) and one of a
// datacenter under the other L2 (cross-tier through L3).
//
// Leases grow upwards (L1 6 s, L2 9 s, L3 12 s), so every tier's cache TTL,
// half its upstream's lease, is shorter than the tier above holds the data.

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "cascade/sim/tiered_world.hpp"
#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {

// Agents and uplinks share the production beat: kBeatInterval ±10% (fleet.hpp).
inline constexpr Duration kL1Lease{6000};
inline constexpr Duration kL2Lease{9000};
inline constexpr Duration kL3Lease{12'000};
inline constexpr double kTierLoss = 0.03;
inline constexpr Duration kChangeDelay{20};    // UplinkConfig default: changes coalesce this long
inline constexpr Duration kFlushInterval{20};  // a durable reply waits at most this long
inline constexpr Duration kReplyTimeout{
    500};  // AgentCoreConfig default: an unanswered beat is resent
// A cut-off uplink retries after a backoff capped at a third of the granted
// lease, jittered by 20% (AgentCore::fail_over): L2's 9 s lease gives 3.6 s.
inline constexpr Duration kL1UplinkBackoffCap = kL2Lease / 3 + kL2Lease / 3 / 5;

// ---- Bounds the scenarios assert, derived from the timing above.
//
// A pull: a lower node learns a change of the node above on its next beat,
// which leaves within one jittered interval; the reply is back within a round
// trip (after the next flush if it is durable).
inline constexpr Duration kPull = kLongestBeatInterval + kRoundTrip + kFlushInterval;  // 2.32 s
// A push: a hub's uplink carries a change of its tier up after the coalescing delay.
inline constexpr Duration kPush = kChangeDelay + kMaxDelay;  // 70 ms
// Under loss every exchange may lose one round trip: the unanswered beat (or
// delta) goes again one reply timeout later.
inline constexpr Duration kLostRoundTrip = kReplyTimeout;
// A change at an L1 reaches every consumer of the network: pushed up twice
// (L1 -> L2 -> L3), then pulled down three times (L3 -> the other L2 -> its L1
// -> the consumer's beat).
inline constexpr Duration kCrossTierBound =
    2 * (kPush + kLostRoundTrip) + 3 * (kPull + kLostRoundTrip);  // 9.6 s
// A killed agent's last beat arrives at most one network delay after the kill;
// its L1 drops it one L1 lease later; then the change crosses the network.
inline constexpr Duration kZombieBound = kMaxDelay + kL1Lease + kCrossTierBound;  // 15.65 s
// An uplink cut off from its L2 (or whose L2 was down) gets through again
// within the failover backoff cap after the link is back (one lost attempt
// more); the L2 asks for the whole set, which comes back at once.
inline constexpr Duration kRejoin =
    kL1UplinkBackoffCap + kLostRoundTrip + kRoundTrip + kFlushInterval + kMaxDelay;  // 4.27 s
// After a partition heals, every consumer holds the live set again within:
inline constexpr Duration kHealBound = kRejoin + kCrossTierBound;  // 13.87 s

struct TierShape {
  std::size_t agents_per_dc = 1250;
  std::size_t consumers_per_dc = 50;
  std::size_t services_per_dc = 10;
  Duration start_spread{2000};  // agents start uniformly over this window
};

struct Datacenter {
  std::size_t l1 = 0;  // hub indexes
  std::size_t l2 = 0;
  std::vector<proto::ServiceKey> services{};
  std::vector<std::size_t> providers{};  // agent indexes
  std::vector<std::size_t> consumers{};
};

struct TierFleet {
  std::size_t l3 = 0;
  std::vector<std::size_t> l2s{};
  std::vector<Datacenter> dcs{};
  std::vector<std::size_t> dc_of{};  // by agent
  std::size_t agents() const { return dc_of.size(); }
};

inline constexpr std::size_t kDatacenters = 4;

// `eviction_protection` off: a hub drops what it stops hearing one lease later.
TieredWorldConfig tier_config(std::uint64_t seed, bool eviction_protection = true);

// Adds the hubs and agents to the world and schedules the agents' starts from now.
TierFleet build_tier_fleet(TieredWorld& world, const TierShape& shape = {});

// The one instance a provider agent registers.
const proto::Registration& provided(const TieredWorld& world, std::size_t provider);

// A running provider whose hub has answered this incarnation: its set is
// registered, and from then on its own tier must never lack it. (Before the
// first answer its first beats may simply have been lost.)
bool registered(const TieredWorld& world, std::size_t provider);

// Every service's live set: the instances of its running providers, by id.
using LiveSets = std::map<proto::ServiceKey, std::vector<proto::Instance>>;
LiveSets live_sets(const TieredWorld& world, const TierFleet& fleet);

// Whether the consumer's cached list is exactly `live`. The tier a hub tags an
// instance with says where it was found, not what it is, so it is ignored.
bool cache_is_live(const TieredWorld& world, std::size_t consumer, const proto::ServiceKey& service,
                   const std::vector<proto::Instance>& live);

// "dc/service/instance" of every running provider its own L1 lacks.
std::vector<std::string> missing_same_tier(const TieredWorld& world, const TierFleet& fleet);
// "consumer service" of every (running consumer, used service) whose cache is not the live set.
std::vector<std::string> consumers_off_live(const TieredWorld& world, const TierFleet& fleet);

// `count` providers of the datacenter spread over its services.
std::vector<std::size_t> pick_providers(const TierFleet& fleet, std::size_t dc, std::size_t count,
                                        std::size_t offset = 0);

// Whether the message is an uplink beat whose delta removes instance `id`.
bool delta_removes(const proto::Message& message, const std::string& id);

// The hubs that hold a datacenter's instances: its L1, its L2 and L3.
std::vector<std::size_t> chain_of(const TierFleet& fleet, std::size_t dc);

}  // namespace cascade::sim::testing
