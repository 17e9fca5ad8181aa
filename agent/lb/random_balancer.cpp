#include "cascade/agent/lb/random_balancer.hpp"

namespace cascade::agent::lb {

std::optional<std::size_t> RandomBalancer::pick(const PickContext& ctx, Rng& rng) {
  if (set_.begin_pick(ctx) == 0) return std::nullopt;
  return set_.uniform_allowed(rng);
}

std::optional<std::size_t> WeightedRandomBalancer::pick(const PickContext& ctx, Rng& rng) {
  if (set_.begin_pick(ctx) == 0) return std::nullopt;
  return set_.weighted_allowed(rng);
}

}  // namespace cascade::agent::lb
