#pragma once
// Recent latencies of one service, answering "how long does the p-th
// percentile call take?" to time backup requests.
//
// Memory is bounded and independent of traffic: each bucket of the sliding
// window holds a log-linear histogram (8 linear sub-bins per power of two, so
// a percentile is at most 12.5% above the true value and never below it).
// Old buckets fall out of the window, so the answer follows the service when
// it speeds up or slows down. Below min_samples the answer is nullopt: a
// percentile of three calls is noise, and a backup timed on noise doubles load.
//
// Sans-IO: every method takes `now`. Thread-safety: none; the Caller locks.

#include <array>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cascade/agent/bucket_ring.hpp"
#include "cascade/common/clock.hpp"

namespace cascade::agent {

struct LatencyConfig {
  std::size_t buckets = 6;         // the window is buckets * bucket_width long
  Duration bucket_width{10'000};   // ms
  std::uint32_t min_samples = 20;  // samples in the window before percentile() answers
};

// "" when the config is usable, else what is wrong with it.
std::string check_latency_config(const LatencyConfig& config);

class LatencyTracker {
 public:
  explicit LatencyTracker(LatencyConfig config);  // throws std::invalid_argument

  // Negative latencies count as 0; latencies above ~9.5 hours as ~9.5 hours.
  void record(MonoTime now, std::chrono::microseconds latency);
  // The smallest histogram bound at or above the p-th percentile of the
  // window's samples, p in (0, 1]; nullopt below min_samples or for a p out of range.
  std::optional<std::chrono::microseconds> percentile(MonoTime now, double p) const;
  std::uint64_t samples(MonoTime now) const;

  // Histogram layout, public for tests.
  static constexpr std::size_t kSubBins = 8;    // per power of two
  static constexpr unsigned kMaxExponent = 35;  // 2^36 us: the largest value kept apart
  static constexpr std::size_t kBins = kSubBins + (kMaxExponent - 2) * kSubBins;
  static std::size_t bin_of(std::uint64_t micros);
  static std::uint64_t bin_upper_bound(std::size_t bin);

 private:
  struct Bucket {
    std::int64_t index = -1;
    std::uint64_t total = 0;
    std::array<std::uint32_t, kBins> counts{};
  };
  LatencyConfig config_;
  BucketRing<Bucket> ring_;
};

}  // namespace cascade::agent
