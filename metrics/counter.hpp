#pragma once
// A count that only goes up: events, bytes sent, seconds spent. Prometheus
// takes rates of it and handles its reset to 0 at a restart.
//
// Updates are lock-free: one relaxed atomic add, a few nanoseconds on the
// owning thread, no allocation. Whole increments keep their own integer cell
// so that a count of events stays exact at any size and renders as an
// integer; fractional amounts (seconds) go to a double cell. Any thread may
// update; the scraping thread reads both cells without a lock.

#include <atomic>
#include <cstdint>
#include <string_view>

#include "cascade/metrics/family_info.hpp"
#include "cascade/metrics/text_writer.hpp"

namespace cascade::metrics {

class Counter {
 public:
  struct Shape {};  // nothing to configure (a histogram's shape is its buckets)
  static constexpr MetricType kType = MetricType::kCounter;

  explicit Counter(Shape = {}) {}
  Counter(const Counter&) = delete;
  Counter& operator=(const Counter&) = delete;

  void inc(std::uint64_t n = 1) { whole_.fetch_add(n, std::memory_order_relaxed); }

  // A fractional amount. A negative or NaN amount would break the promise
  // that the count never goes down: it is a caller's bug, and dropped.
  void add(double amount) {
    if (amount > 0) fraction_.fetch_add(amount, std::memory_order_relaxed);
  }

  double value() const {
    return static_cast<double>(whole_.load(std::memory_order_relaxed)) +
           fraction_.load(std::memory_order_relaxed);
  }

  void write(TextWriter& out, std::string_view labels) const {
    const std::uint64_t whole = whole_.load(std::memory_order_relaxed);
    const double fraction = fraction_.load(std::memory_order_relaxed);
    if (fraction == 0) {
      out.sample("", labels, whole);  // exact, even past 2^53
    } else {
      out.sample("", labels, static_cast<double>(whole) + fraction);
    }
  }

 private:
  std::atomic<std::uint64_t> whole_{0};
  std::atomic<double> fraction_{0.0};
};

}  // namespace cascade::metrics
