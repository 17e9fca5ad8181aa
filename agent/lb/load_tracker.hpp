#pragma once
// What the learning policies know about each candidate: calls in flight
// (least_active, p2c) and an exponentially decaying latency average
// (adaptive, p2c). Stored per candidate; feedback names an address and
// updates every candidate with that address, so candidates sharing an
// address share their numbers.
//
// Thread-safety: none (see load_balancer.hpp).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cascade/agent/lb/candidate_set.hpp"

namespace cascade::agent::lb {

class LoadTracker {
 public:
  LoadTracker(double decay, std::chrono::microseconds failure_latency)
      : decay_(decay), failure_latency_(failure_latency) {}

  // After CandidateSet::replace: surviving addresses keep their numbers.
  void carry_over(const std::vector<std::size_t>& from);

  // Both return whether the address is a candidate.
  bool started(const CandidateSet& set, std::string_view address);
  // A failed call counts as at least failure_latency. In flight never drops
  // below zero: a call started before its address left and came back is not
  // counted twice against it.
  bool finished(const CandidateSet& set, std::string_view address,
                std::chrono::microseconds latency, bool ok);

  std::uint32_t in_flight(std::size_t i) const { return in_flight_[i]; }
  // All counts, indexed like the candidates: contiguous for the pick loops.
  const std::vector<std::uint32_t>& in_flight() const { return in_flight_; }
  bool measured(std::size_t i) const { return measured_[i] != 0; }
  // Microseconds; 0 until the first finished call, so a new address looks
  // fast and gets tried.
  double latency_us(std::size_t i) const { return latency_us_[i]; }

 private:
  double decay_;
  std::chrono::microseconds failure_latency_;
  // One entry per candidate, as separate arrays: a pick reads only one of them.
  std::vector<std::uint32_t> in_flight_;
  std::vector<std::uint8_t> measured_;
  std::vector<double> latency_us_;
};

}  // namespace cascade::agent::lb
