#pragma once
// Adaptive: weighted random over effective weights, where the slowest
// addresses weigh less. Each address keeps an exponentially decaying latency
// average (LoadTracker); every LbConfig::adaptive_refresh_samples finished
// calls the effective weights are recomputed:
//   slow = among the slowest adaptive_slow_share of the measured addresses
//          (at least one once two are measured) AND at least
//          adaptive_slow_ratio x the median average;
//   effective weight = weight x (slow ? adaptive_slow_weight_factor : 1).
// Unmeasured addresses count as not slow. A slow address keeps a share of the
// calls, so its average keeps moving and it regains its weight once it has
// recovered. The recomputation (O(n)) happens on feedback, never in pick().

#include <cstdint>
#include <vector>

#include "cascade/agent/lb/load_aware_balancer.hpp"

namespace cascade::agent::lb {

class AdaptiveBalancer final : public LoadAwareBalancer {
 public:
  explicit AdaptiveBalancer(const LbConfig& config) : LoadAwareBalancer(config), config_(config) {}
  LbPolicy policy() const override { return LbPolicy::kAdaptive; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;
  void on_call_finished(std::string_view address, std::chrono::microseconds latency,
                        bool ok) override;

  // For tests: candidate i's weight after the latency penalty.
  double effective_weight(std::size_t i) const { return effective_[i]; }

 private:
  void candidates_changed(const std::vector<std::size_t>& from) override;
  void refresh();

  LbConfig config_;
  std::vector<double> effective_;
  std::vector<double> cumulative_;  // running sums of effective_
  std::vector<double> scratch_;     // refresh()'s sort space, kept to avoid reallocating
  std::uint32_t samples_since_refresh_ = 0;
};

}  // namespace cascade::agent::lb
