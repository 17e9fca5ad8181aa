#pragma once
// The rotations: round robin and smooth weighted round robin. Deterministic:
// neither draws from the Rng, so a sequence of picks is reproducible.

#include <cstdint>
#include <vector>

#include "cascade/agent/lb/candidate_set.hpp"

namespace cascade::agent::lb {

// Each candidate in turn. Excluded candidates are skipped; the rotation then
// continues after the one picked. The position survives list changes (taken
// modulo the new size): a new list does not send the next call to the first
// candidate of every client at once.
class RoundRobinBalancer final : public CandidateBalancer {
 public:
  LbPolicy policy() const override { return LbPolicy::kRoundRobin; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;

 private:
  std::size_t next_ = 0;
};

// nginx's smooth weighted round robin: each pick adds every candidate's
// weight to its current weight, takes the largest (the first on ties) and
// subtracts the total from it. Over a cycle each candidate is picked in
// proportion to its weight, and heavy ones are not bunched: weights 3,2,1
// give a b a c b a. Excluded candidates sit the pick out (nginx's "tried").
// Current weights survive list changes for surviving addresses; a new
// address starts at 0.
class SmoothWeightedBalancer final : public CandidateBalancer {
 public:
  LbPolicy policy() const override { return LbPolicy::kSmoothWeighted; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;

  // For tests: the current weight of candidate i.
  std::int64_t current_weight(std::size_t i) const { return current_[i]; }

 private:
  void candidates_changed(const std::vector<std::size_t>& from) override;

  std::vector<std::int64_t> current_;
};

}  // namespace cascade::agent::lb
