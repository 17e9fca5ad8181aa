#pragma once
// The memoryless policies: uniform random and weighted random. Both draw
// from the Rng they are given and keep nothing between picks.

#include "cascade/agent/lb/candidate_set.hpp"

namespace cascade::agent::lb {

// Uniform over the candidates, weights ignored (weight 0 is already gone).
class RandomBalancer final : public CandidateBalancer {
 public:
  LbPolicy policy() const override { return LbPolicy::kRandom; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;
};

// Random in proportion to weight: one draw and a binary search over the
// weights' running sums (built in set_candidates).
class WeightedRandomBalancer final : public CandidateBalancer {
 public:
  LbPolicy policy() const override { return LbPolicy::kWeighted; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;
};

}  // namespace cascade::agent::lb
