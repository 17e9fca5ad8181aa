#pragma once
// Which instances of a service may take a call, and the names of the
// load-balancing policies that choose among them (agent/lb/load_balancer.hpp).
//
// Candidates are built in steps, each a free function so that further steps
// can run in between (a routing filter goes between the two):
//   eligible_instances -> routing rules -> confirmed_first -> nearest_tier -> LoadBalancer
// The list comes from a Resolution and is rebuilt only when its version changes.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::agent {

enum class LbPolicy : std::uint8_t {
  kRoundRobin,      // "round_robin" / "rr": each candidate in turn
  kRandom,          // "random": uniform over the candidates
  kWeighted,        // "weighted": random, in proportion to weight
  kSmoothWeighted,  // "smooth_weighted" / "swrr": in proportion to weight, evenly spread (nginx)
  kLeastActive,     // "least_active": fewest calls in flight
  kConsistentHash,  // "consistent_hash": the same key goes to the same address
  kAdaptive,        // "adaptive": weighted random, slow addresses weigh less
  kP2c,             // "p2c": power of two choices on calls in flight
};
inline constexpr std::size_t kLbPolicyCount = 8;  // for tables indexed by policy

// How a pick (Client::pick, pick_cached) ended, as metrics count it.
enum class PickResult : std::uint8_t {
  kPicked,      // an instance was chosen
  kNoInstance,  // the list is known, but none of it may take the call (or all excluded)
  kUnresolved,  // no list: no hub answered and nothing is cached
};
inline constexpr std::size_t kPickResultCount = 3;  // for tables indexed by PickResult
// "picked", "no_instance", "unresolved": label values of metrics.
std::string_view to_string(PickResult result);

// Accepts every name above, aliases included; nullopt for anything else (the
// caller reports it, listing lb_policy_names()).
std::optional<LbPolicy> parse_lb_policy(std::string_view name);
// The canonical name ("round_robin", never the alias); parse_lb_policy accepts it.
std::string_view to_string(LbPolicy policy);
// "round_robin (rr), random, ..." for error messages and help texts.
std::string_view lb_policy_names();

// UP instances with a positive weight, in their original order. No tier
// preference yet: a routing filter must see every tier before nearest_tier.
std::vector<proto::Instance> eligible_instances(const std::vector<proto::Instance>& instances);

// Only the instances of the nearest tier present (lowest Instance::tier, 0 =
// the consumer's own), in their original order. A hub adds an upper tier's
// instances only when its own tier has too few, and traffic should stay in the
// datacenter while it can.
// Instances whose lease ran out but that eviction protection holds
// (unconfirmed) are used only while no confirmed instance is left: a
// partition keeps them listed, not preferred.
std::vector<proto::Instance> confirmed_first(std::vector<proto::Instance> instances);

std::vector<proto::Instance> nearest_tier(std::vector<proto::Instance> instances);

}  // namespace cascade::agent
