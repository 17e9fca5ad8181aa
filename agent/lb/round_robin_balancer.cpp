#include "cascade/agent/lb/round_robin_balancer.hpp"

namespace cascade::agent::lb {

std::optional<std::size_t> RoundRobinBalancer::pick(const PickContext& ctx, Rng&) {
  if (set_.begin_pick(ctx) == 0) return std::nullopt;
  const std::size_t i = set_.first_allowed_from(next_ % set_.size());
  next_ = i + 1;
  return i;
}

std::optional<std::size_t> SmoothWeightedBalancer::pick(const PickContext& ctx, Rng&) {
  if (set_.begin_pick(ctx) == 0) return std::nullopt;
  if (!set_.any_excluded()) {
    // The common case, as two simple loops the compiler can unroll: add
    // every weight, then take the first largest.
    const std::size_t n = set_.size();
    const std::uint32_t* w = set_.weights().data();
    std::int64_t* current = current_.data();
    for (std::size_t i = 0; i < n; ++i)
      current[i] += w[i];
    std::size_t best = 0;
    for (std::size_t i = 1; i < n; ++i)
      if (current[i] > current[best]) best = i;
    current[best] -= static_cast<std::int64_t>(set_.total_weight());
    return best;
  }
  std::int64_t total = 0;
  std::size_t best = 0;
  std::int64_t best_weight = INT64_MIN;
  for (std::size_t i = 0; i < set_.size(); ++i) {
    if (!set_.allowed(i)) continue;
    const auto w = static_cast<std::int64_t>(set_.weight(i));
    current_[i] += w;
    total += w;
    if (current_[i] > best_weight) {
      best = i;
      best_weight = current_[i];
    }
  }
  current_[best] -= total;
  return best;
}

void SmoothWeightedBalancer::candidates_changed(const std::vector<std::size_t>& from) {
  current_ = carry_over(current_, from, std::int64_t{0});
}

}  // namespace cascade::agent::lb
