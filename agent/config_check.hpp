#pragma once
// What the resilience components (breaker, budget, latency tracker, Caller)
// share in checking their configs. Each has a check_*_config that returns ""
// when the config is usable, else what is wrong with it; its constructor
// throws that message as std::invalid_argument.

#include <stdexcept>
#include <string>

namespace cascade::agent {

// The sliding window (agent/bucket_ring.hpp) of a config with `buckets` and
// `bucket_width`: "" when usable, else what is wrong, prefixed "<who>: ".
template <typename Config>
std::string check_window(const std::string& who, const Config& c) {
  if (c.buckets == 0) return who + ": buckets must be at least 1";
  if (c.bucket_width.count() <= 0) return who + ": bucket_width must be a positive number of ms";
  return "";
}

// `config` itself when check(config) finds nothing wrong, else throws
// std::invalid_argument with what it found; for member initialisers.
template <typename Config, typename Check>
const Config& checked(const Config& config, Check check) {
  if (auto error = check(config); !error.empty()) throw std::invalid_argument(error);
  return config;
}

}  // namespace cascade::agent
