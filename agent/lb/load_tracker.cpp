#include "cascade/agent/lb/load_tracker.hpp"

#include <algorithm>

namespace cascade::agent::lb {

void LoadTracker::carry_over(const std::vector<std::size_t>& from) {
  in_flight_ = lb::carry_over(in_flight_, from, std::uint32_t{0});
  measured_ = lb::carry_over(measured_, from, std::uint8_t{0});
  latency_us_ = lb::carry_over(latency_us_, from, 0.0);
}

bool LoadTracker::started(const CandidateSet& set, std::string_view address) {
  const auto matches = set.with_address(address);
  for (const auto i : matches)
    ++in_flight_[i];
  return !matches.empty();
}

bool LoadTracker::finished(const CandidateSet& set, std::string_view address,
                           std::chrono::microseconds latency, bool ok) {
  const auto matches = set.with_address(address);
  auto sample = std::max(latency, std::chrono::microseconds{0});
  if (!ok) sample = std::max(sample, failure_latency_);
  const auto us = static_cast<double>(sample.count());
  for (const auto i : matches) {
    if (in_flight_[i] > 0) --in_flight_[i];
    latency_us_[i] = measured_[i] ? decay_ * latency_us_[i] + (1 - decay_) * us : us;
    measured_[i] = 1;
  }
  return !matches.empty();
}

}  // namespace cascade::agent::lb
