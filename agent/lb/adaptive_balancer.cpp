#include "cascade/agent/lb/adaptive_balancer.hpp"

#include <algorithm>
#include <cmath>

namespace cascade::agent::lb {

void AdaptiveBalancer::candidates_changed(const std::vector<std::size_t>& from) {
  LoadAwareBalancer::candidates_changed(from);
  effective_.resize(set_.size());
  cumulative_.resize(set_.size());
  scratch_.reserve(set_.size());
  refresh();
}

void AdaptiveBalancer::on_call_finished(std::string_view address, std::chrono::microseconds latency,
                                        bool ok) {
  if (!load_.finished(set_, address, latency, ok)) return;
  if (++samples_since_refresh_ >= config_.adaptive_refresh_samples) refresh();
}

void AdaptiveBalancer::refresh() {
  samples_since_refresh_ = 0;
  const std::size_t n = set_.size();
  scratch_.clear();
  for (std::size_t i = 0; i < n; ++i)
    if (load_.measured(i)) scratch_.push_back(load_.latency_us(i));
  const std::size_t m = scratch_.size();
  // Defaults mean "nobody is slow" (fewer than two measured addresses).
  double slow_from = INFINITY;
  if (m >= 2) {
    auto slow_count =
        static_cast<std::size_t>(std::floor(static_cast<double>(m) * config_.adaptive_slow_share));
    if (slow_count == 0 && config_.adaptive_slow_share > 0) slow_count = 1;
    std::nth_element(scratch_.begin(), scratch_.begin() + static_cast<std::ptrdiff_t>(m / 2),
                     scratch_.end());
    const double median = scratch_[m / 2];
    if (slow_count > 0) {
      // The slow_count-th largest average: the slow ones are at or above it.
      const auto kth = static_cast<std::ptrdiff_t>(m - std::min(slow_count, m));
      std::nth_element(scratch_.begin(), scratch_.begin() + kth, scratch_.end());
      slow_from =
          std::max(scratch_[static_cast<std::size_t>(kth)], median * config_.adaptive_slow_ratio);
    }
  }
  double sum = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const bool slow = load_.measured(i) && load_.latency_us(i) >= slow_from;
    effective_[i] = set_.weight(i) * (slow ? config_.adaptive_slow_weight_factor : 1.0);
    sum += effective_[i];
    cumulative_[i] = sum;
  }
}

std::optional<std::size_t> AdaptiveBalancer::pick(const PickContext& ctx, Rng& rng) {
  if (set_.begin_pick(ctx) == 0) return std::nullopt;
  const std::size_t n = set_.size();
  if (!set_.any_excluded()) {
    const double point = rng.unit() * cumulative_.back();
    const auto k = static_cast<std::size_t>(
        std::upper_bound(cumulative_.begin(), cumulative_.end(), point) - cumulative_.begin());
    return std::min(k, n - 1);  // rounding can put the point on the very end
  }
  double allowed = 0;
  for (std::size_t i = 0; i < n; ++i)
    if (set_.allowed(i)) allowed += effective_[i];
  double point = rng.unit() * allowed;
  std::size_t last = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (!set_.allowed(i)) continue;
    if (point < effective_[i]) return i;
    point -= effective_[i];
    last = i;
  }
  return last;
}

}  // namespace cascade::agent::lb
