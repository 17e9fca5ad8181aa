#include "cascade/agent/latency_tracker.hpp"

#include <bit>
#include <cmath>

#include "cascade/agent/config_check.hpp"

namespace cascade::agent {
namespace {

constexpr unsigned kSubBits = 3;  // log2(kSubBins)

}  // namespace

std::string check_latency_config(const LatencyConfig& c) {
  if (auto error = check_window("latency", c); !error.empty()) return error;
  if (c.min_samples == 0) return "latency: min_samples must be at least 1";
  return "";
}

LatencyTracker::LatencyTracker(LatencyConfig config)
    : config_(checked(config, check_latency_config)),
      ring_(config_.buckets, config_.bucket_width) {}

// Values below 8 have a bin each; above, the bin is (exponent, top 3 bits
// after the leading one): 8..15 -> 8 bins of 1, 16..31 -> 8 bins of 2, ...
std::size_t LatencyTracker::bin_of(std::uint64_t micros) {
  if (micros < kSubBins) return static_cast<std::size_t>(micros);
  const unsigned exponent = static_cast<unsigned>(std::bit_width(micros)) - 1;
  if (exponent > kMaxExponent) return kBins - 1;
  const std::uint64_t sub = (micros >> (exponent - kSubBits)) - kSubBins;
  return kSubBins + (exponent - kSubBits) * kSubBins + static_cast<std::size_t>(sub);
}

std::uint64_t LatencyTracker::bin_upper_bound(std::size_t bin) {
  if (bin < kSubBins) return bin;
  const std::size_t exponent = (bin - kSubBins) / kSubBins + kSubBits;
  const std::uint64_t sub = (bin - kSubBins) % kSubBins;
  const std::uint64_t width = std::uint64_t{1} << (exponent - kSubBits);
  return (kSubBins + sub) * width + width - 1;
}

void LatencyTracker::record(MonoTime now, std::chrono::microseconds latency) {
  const std::uint64_t micros =
      latency.count() < 0 ? 0 : static_cast<std::uint64_t>(latency.count());
  Bucket& bucket = ring_.at(now);
  ++bucket.counts[bin_of(micros)];
  ++bucket.total;
}

std::uint64_t LatencyTracker::samples(MonoTime now) const {
  std::uint64_t total = 0;
  ring_.for_each_live(now, [&total](const Bucket& b) { total += b.total; });
  return total;
}

std::optional<std::chrono::microseconds> LatencyTracker::percentile(MonoTime now, double p) const {
  if (!(p > 0.0 && p <= 1.0)) return std::nullopt;
  const std::uint64_t total = samples(now);
  if (total < config_.min_samples) return std::nullopt;
  // The rank-th smallest sample, rank = ceil(p * total): p = 0.9 of 10 samples is the 9th.
  auto rank = static_cast<std::uint64_t>(std::ceil(p * static_cast<double>(total) - 1e-9));
  if (rank == 0) rank = 1;
  std::uint64_t seen = 0;
  for (std::size_t bin = 0; bin < kBins; ++bin) {
    ring_.for_each_live(now, [&](const Bucket& b) { seen += b.counts[bin]; });
    if (seen >= rank)
      return std::chrono::microseconds{static_cast<std::int64_t>(bin_upper_bound(bin))};
  }
  return std::chrono::microseconds{static_cast<std::int64_t>(bin_upper_bound(kBins - 1))};
}

}  // namespace cascade::agent
