#pragma once
// A distribution of observed values (beat handling time in seconds, batch
// sizes) in buckets whose upper bounds are fixed at creation; Prometheus
// derives quantiles from the cumulative counts (histogram_quantile).
//
// observe() finds the value's bucket and makes two relaxed atomic adds, one to
// the bucket's count and one to the sum: no lock, no allocation. The number
// of observations is not a third cell but the sum of the buckets, read in the
// same pass as them, so a scrape's _count always equals its +Inf bucket and
// the buckets never decrease from one le to the next. _sum is read apart and
// may lead or trail the counts by the observations made meanwhile, as in
// every Prometheus client.

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <string_view>
#include <vector>

#include "cascade/metrics/family_info.hpp"
#include "cascade/metrics/text_writer.hpp"

namespace cascade::metrics {

class Histogram {
 public:
  // The buckets' upper bounds, in the unit of the name (seconds buckets for a
  // _seconds histogram), e.g. {0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1}.
  // The +Inf bucket is implied.
  using Shape = std::vector<double>;
  static constexpr MetricType kType = MetricType::kHistogram;

  // Throws std::invalid_argument, naming `family`, unless there is at least
  // one bound and the bounds are finite and strictly increasing.
  static void check_bounds(std::string_view family, const Shape& upper_bounds);

  // Throws as check_bounds() does.
  explicit Histogram(Shape upper_bounds);
  Histogram(const Histogram&) = delete;
  Histogram& operator=(const Histogram&) = delete;

  void observe(double value) {
    counts_[bucket_of(value)].fetch_add(1, std::memory_order_relaxed);
    sum_.fetch_add(value, std::memory_order_relaxed);
  }

  std::uint64_t count() const;
  double sum() const { return sum_.load(std::memory_order_relaxed); }

  void write(TextWriter& out, std::string_view labels) const;

 private:
  // The first bucket whose bound is >= value; NaN (greater than nothing)
  // counts in +Inf, as Prometheus's Go client does.
  std::size_t bucket_of(double value) const {
    if (std::isnan(value)) return bounds_.size();
    return static_cast<std::size_t>(std::lower_bound(bounds_.begin(), bounds_.end(), value) -
                                    bounds_.begin());
  }

  const std::vector<double> bounds_;
  std::vector<std::atomic<std::uint64_t>> counts_;  // per bucket, then +Inf; not cumulative
  std::atomic<double> sum_{0.0};
};

}  // namespace cascade::metrics
