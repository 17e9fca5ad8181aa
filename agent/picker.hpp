#pragma once
// Choosing one instance of a service for a call. Only UP instances with a
// positive weight are candidates, and of those only the ones of the nearest
// tier (Instance::tier, 0 = the consumer's own); the list comes from a Resolution.

#include <atomic>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/protocol.hpp"
#include "common/random.hpp"

namespace cascade::agent {

enum class PickPolicy : std::uint8_t {
  kRoundRobin,      // each UP instance in turn
  kRandom,          // uniform over UP instances
  kWeighted,        // random, proportional to weight
  kSmoothWeighted,  // in proportion to weight, evenly spread (nginx): 3,2,1 -> a b a c b a
};

// Per-service state of the policies that remember: the round-robin position
// and the smooth weighted round robin's current weights.
struct PickState {
  std::atomic<std::uint64_t> cursor{0};
  std::map<std::string, std::int64_t> current;  // by instance id; only the latest candidates
};

std::optional<PickPolicy> parse_pick_policy(std::string_view name);

// `state` is this service's: the round-robin cursor advances atomically so
// concurrent callers spread over the list; the smooth weighted state needs
// the caller to serialise picks of one service.
std::optional<proto::Instance> pick_instance(const std::vector<proto::Instance>& instances,
                                             PickPolicy policy, Rng& rng, PickState& state);

}  // namespace cascade::agent
