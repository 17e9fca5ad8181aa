#pragma once
// How a simulation spreads its one seed over independent generators: the
// network, the applications' own draws (resolving, calling), and every agent
// incarnation. Each stream is derived from the seed alone, so adding an agent
// or a hub never shifts the draws of another one.

#include <cstdint>

namespace cascade::sim {

// SplitMix64's finaliser: spreads (seed, stream) into independent generator seeds.
inline std::uint64_t mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

inline constexpr std::uint64_t kNetworkStream = 1;
inline constexpr std::uint64_t kApplicationStream = 2;  // when consumers resolve
inline constexpr std::uint64_t kCallStream = 3;         // the applications' calls (call_load.hpp)
// 4: the scale scenario's churn (scale_scenario.cpp)
inline constexpr std::uint64_t kHubNetworkStream = 5;  // what hubs send, in TieredWorld's lock step

inline std::uint64_t stream_seed(std::uint64_t seed, std::uint64_t stream) {
  return mix(seed ^ stream);
}

// One agent incarnation's generator (beat jitter, failover backoff).
inline std::uint64_t agent_seed(std::uint64_t seed, std::uint64_t agent, std::uint64_t epoch) {
  return mix(mix(seed) ^ mix(agent) ^ (epoch << 48));
}

}  // namespace cascade::sim
