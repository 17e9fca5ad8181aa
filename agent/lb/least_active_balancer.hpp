#pragma once
// The policies that follow calls in flight (on_call_started /
// on_call_finished): least active and power of two choices. In flight counts
// only the calls reported to this balancer; the Client reports every call of
// the service to each of its balancers.

#include "cascade/agent/lb/load_aware_balancer.hpp"

namespace cascade::agent::lb {

// The candidate with the fewest calls in flight. Ties are broken at random in
// proportion to weight (Dubbo's LeastActive): a caller making one call at a
// time sees every candidate idle, and must still spread its calls by weight
// rather than send them all to the heaviest or the first. One pass over the
// candidates, and part of a second when several tie: O(n), no allocation.
class LeastActiveBalancer final : public LoadAwareBalancer {
 public:
  using LoadAwareBalancer::LoadAwareBalancer;
  LbPolicy policy() const override { return LbPolicy::kLeastActive; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;
};

// Power of two choices: two distinct candidates drawn uniformly, the one with
// fewer calls in flight wins; on a tie the lower latency average, then the
// first drawn. O(1) per pick; it avoids the most loaded candidates without
// the herd a global "least" causes when many clients see the same numbers.
// Weights are ignored beyond eligibility: load decides.
class P2cBalancer final : public LoadAwareBalancer {
 public:
  using LoadAwareBalancer::LoadAwareBalancer;
  LbPolicy policy() const override { return LbPolicy::kP2c; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;
};

}  // namespace cascade::agent::lb
