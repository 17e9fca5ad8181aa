#pragma once
// Injected randomness: every jittered timer draws from a Rng it is given, so
// simulations replay exactly from a seed.

#include <cstdint>
#include <random>

#include "cascade/common/clock.hpp"

namespace cascade {

class Rng {
 public:
  explicit Rng(std::uint64_t seed) : engine_(seed) {}

  // Uniform in [lo, hi] inclusive.
  std::int64_t uniform(std::int64_t lo, std::int64_t hi) {
    if (hi <= lo) return lo;
    return std::uniform_int_distribution<std::int64_t>(lo, hi)(engine_);
  }
  double unit() { return std::uniform_real_distribution<double>(0.0, 1.0)(engine_); }
  std::uint64_t next_u64() { return engine_(); }

  // `base` spread by ±fraction (0.1 = ±10%), never below 1 ms.
  Duration jittered(Duration base, double fraction) {
    const auto spread = static_cast<std::int64_t>(static_cast<double>(base.count()) * fraction);
    const auto ms = base.count() + uniform(-spread, spread);
    return Duration{ms < 1 ? 1 : ms};
  }

 private:
  std::mt19937_64 engine_;
};

}  // namespace cascade
