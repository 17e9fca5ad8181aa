#pragma once
// A value that goes up and down: instances by state, a queue's length, the
// age of a cache in seconds, a link's state as 0 or 1.
//
// One double cell, updated lock-free with relaxed atomics (a store for set(),
// an atomic add for add()), read by the scraping thread without a lock; one
// cell, so a scrape never sees half of an update. Integers (int64 counts,
// sizes in bytes) are exact up to 2^53 and render as integers ("42").

#include <atomic>
#include <string_view>

#include "cascade/metrics/family_info.hpp"
#include "cascade/metrics/text_writer.hpp"

namespace cascade::metrics {

class Gauge {
 public:
  struct Shape {};  // nothing to configure
  static constexpr MetricType kType = MetricType::kGauge;

  explicit Gauge(Shape = {}) {}
  Gauge(const Gauge&) = delete;
  Gauge& operator=(const Gauge&) = delete;

  void set(double value) { value_.store(value, std::memory_order_relaxed); }
  void add(double delta) { value_.fetch_add(delta, std::memory_order_relaxed); }
  void inc() { add(1); }
  void dec() { add(-1); }

  double value() const { return value_.load(std::memory_order_relaxed); }

  void write(TextWriter& out, std::string_view labels) const { out.sample("", labels, value()); }

 private:
  std::atomic<double> value_{0.0};
};

}  // namespace cascade::metrics
