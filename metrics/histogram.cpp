#include "cascade/metrics/histogram.hpp"

#include <limits>
#include <stdexcept>
#include <string>
#include <utility>

namespace cascade::metrics {

void Histogram::check_bounds(std::string_view family, const Shape& upper_bounds) {
  const auto refuse = [family](const std::string& what) {
    throw std::invalid_argument("histogram '" + std::string(family) + "': " + what);
  };
  if (upper_bounds.empty()) refuse("no bucket bounds");
  for (std::size_t i = 0; i < upper_bounds.size(); ++i) {
    if (!std::isfinite(upper_bounds[i]))
      refuse("bucket bounds must be finite (the +Inf bucket is implied)");
    if (i > 0 && !(upper_bounds[i - 1] < upper_bounds[i]))
      refuse("bucket bounds must be strictly increasing");
  }
}

namespace {

Histogram::Shape checked(Histogram::Shape upper_bounds) {
  Histogram::check_bounds("histogram", upper_bounds);
  return upper_bounds;
}

}  // namespace

Histogram::Histogram(Shape upper_bounds)
    : bounds_(checked(std::move(upper_bounds))), counts_(bounds_.size() + 1) {}

std::uint64_t Histogram::count() const {
  std::uint64_t total = 0;
  for (const auto& count : counts_)
    total += count.load(std::memory_order_relaxed);
  return total;
}

void Histogram::write(TextWriter& out, std::string_view labels) const {
  std::uint64_t cumulative = 0;
  for (std::size_t i = 0; i < bounds_.size(); ++i) {
    cumulative += counts_[i].load(std::memory_order_relaxed);
    out.bucket(labels, bounds_[i], cumulative);
  }
  cumulative += counts_.back().load(std::memory_order_relaxed);
  out.bucket(labels, std::numeric_limits<double>::infinity(), cumulative);
  out.sample("_sum", labels, sum());
  out.sample("_count", labels, cumulative);
}

}  // namespace cascade::metrics
