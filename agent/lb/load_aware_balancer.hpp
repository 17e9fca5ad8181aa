#pragma once
// The base of the policies that decide by load (least active, power of two
// choices, adaptive): calls in flight and latency averages per address.

#include <vector>

#include "cascade/agent/lb/candidate_set.hpp"
#include "cascade/agent/lb/load_tracker.hpp"

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

  void candidates_changed(const std::vector<std::size_t>& from) override { load_.carry_over(from); }
};

}  // namespace cascade::agent::lb
