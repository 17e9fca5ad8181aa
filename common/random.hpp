#pragma once
// Injected randomness: every jittered timer draws from a Rng it is given, so
// simulations replay exactly from a seed.
//
// The engine is xoshiro256** (Blackman and Vigna): 32 bytes of state, where
// std::mt19937_64 keeps 2,504. Every agent core holds two of these and a
// simulation runs a million cores, so the state's size is the agents' memory
// (2 x 2.5 KB of a ~7 KB core before). Its statistical quality is more than
// jitter and sampling need; it is not for secrets.

#include <cstdint>
#include <limits>
#include <random>

#include "cascade/common/clock.hpp"

namespace cascade {

// A UniformRandomBitGenerator, so the standard distributions draw from it.
class Xoshiro256 {
 public:
  using result_type = std::uint64_t;

  // The four words come from SplitMix64 over the seed, as the authors
  // advise: never all zero, and nearby seeds give unrelated streams.
  explicit Xoshiro256(std::uint64_t seed) {
    for (auto& word : state_)
      word = split_mix(seed);
  }

  static constexpr result_type min() { return 0; }
  static constexpr result_type max() { return std::numeric_limits<result_type>::max(); }

  result_type operator()() {
    const std::uint64_t result = rotate_left(state_[1] * 5, 7) * 9;
    const std::uint64_t t = state_[1] << 17;
    state_[2] ^= state_[0];
    state_[3] ^= state_[1];
    state_[1] ^= state_[2];
    state_[0] ^= state_[3];
    state_[2] ^= t;
    state_[3] = rotate_left(state_[3], 45);
    return result;
  }

 private:
  static std::uint64_t rotate_left(std::uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }
  static std::uint64_t split_mix(std::uint64_t& x) {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  }

  std::uint64_t state_[4];
};

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
  Xoshiro256 engine_;
};

}  // namespace cascade
