#pragma once
// The policies that follow calls in flight (on_call_started /
// on_call_finished): least active and power of two choices. In flight counts
// only the calls reported to this balancer; the Client reports every call of
// the service to each of its balancers.

#include "agent/lb/candidate_set.hpp"
#include "agent/lb/load_tracker.hpp"

namespace cascade::agent::lb {

// The policies that decide by load: calls in flight and latency averages per
// address (LoadTracker), carried over when the candidates change.
class LoadAwareBalancer : public CandidateBalancer {
 public:
  explicit LoadAwareBalancer(const LbConfig& config)
      : load_(config.latency_decay, config.failure_latency) {}
  void on_call_started(std::string_view address) override { load_.started(set_, address); }
  void on_call_finished(std::string_view address, std::chrono::microseconds latency,
                        bool ok) override {
    load_.finished(set_, address, latency, ok);
  }

 protected:
  LoadTracker load_;

 private:
  void candidates_changed(const std::vector<std::size_t>& from) override { load_.carry_over(from); }
};

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
