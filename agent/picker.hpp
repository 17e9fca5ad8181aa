#pragma once
// Choosing one instance of a service for a call. Only UP instances with a
// positive weight are candidates, and of those only the ones of the nearest
// tier (Instance::tier, 0 = the consumer's own); the list comes from a Resolution.

#include <atomic>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "common/protocol.hpp"
#include "common/random.hpp"

namespace cascade::agent {

enum class PickPolicy : std::uint8_t {
  kRoundRobin,  // each UP instance in turn
  kRandom,      // uniform over UP instances
  kWeighted,    // random, proportional to weight
};

std::optional<PickPolicy> parse_pick_policy(std::string_view name);

// `cursor` is the round-robin position for this service, advanced atomically
// so concurrent callers spread over the list.
std::optional<proto::Instance> pick_instance(const std::vector<proto::Instance>& instances,
                                             PickPolicy policy, Rng& rng,
                                             std::atomic<std::uint64_t>& cursor);

}  // namespace cascade::agent
