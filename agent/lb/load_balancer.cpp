#include "cascade/agent/lb/load_balancer.hpp"

#include <cmath>
#include <stdexcept>

#include "cascade/agent/lb/adaptive_balancer.hpp"
#include "cascade/agent/lb/consistent_hash_balancer.hpp"
#include "cascade/agent/lb/least_active_balancer.hpp"
#include "cascade/agent/lb/random_balancer.hpp"
#include "cascade/agent/lb/round_robin_balancer.hpp"

namespace cascade::agent {

std::string check_lb_config(const LbConfig& c) {
  if (c.ring_points_per_instance == 0) return "lb ring_points_per_instance must be at least 1";
  if (c.ring_max_points == 0) return "lb ring_max_points must be at least 1";
  if (!(c.latency_decay >= 0 && c.latency_decay < 1))
    return "lb latency_decay must be in [0, 1) (share of the old average kept per sample), got " +
           std::to_string(c.latency_decay);
  if (c.failure_latency.count() < 0) return "lb failure_latency must not be negative";
  if (!(c.adaptive_slow_share >= 0 && c.adaptive_slow_share <= 1))
    return "lb adaptive_slow_share must be in [0, 1], got " + std::to_string(c.adaptive_slow_share);
  if (!(c.adaptive_slow_ratio >= 1 && std::isfinite(c.adaptive_slow_ratio)))
    return "lb adaptive_slow_ratio must be a finite number of at least 1, got " +
           std::to_string(c.adaptive_slow_ratio);
  if (!(c.adaptive_slow_weight_factor > 0 && c.adaptive_slow_weight_factor <= 1))
    return "lb adaptive_slow_weight_factor must be in (0, 1], got " +
           std::to_string(c.adaptive_slow_weight_factor);
  if (c.adaptive_refresh_samples == 0) return "lb adaptive_refresh_samples must be at least 1";
  return "";
}

std::unique_ptr<LoadBalancer> make_load_balancer(LbPolicy policy, const LbConfig& config) {
  if (auto error = check_lb_config(config); !error.empty()) throw std::invalid_argument(error);
  switch (policy) {
    case LbPolicy::kRoundRobin:
      return std::make_unique<lb::RoundRobinBalancer>();
    case LbPolicy::kRandom:
      return std::make_unique<lb::RandomBalancer>();
    case LbPolicy::kWeighted:
      return std::make_unique<lb::WeightedRandomBalancer>();
    case LbPolicy::kSmoothWeighted:
      return std::make_unique<lb::SmoothWeightedBalancer>();
    case LbPolicy::kLeastActive:
      return std::make_unique<lb::LeastActiveBalancer>(config);
    case LbPolicy::kConsistentHash:
      return std::make_unique<lb::ConsistentHashBalancer>(config);
    case LbPolicy::kAdaptive:
      return std::make_unique<lb::AdaptiveBalancer>(config);
    case LbPolicy::kP2c:
      return std::make_unique<lb::P2cBalancer>(config);
  }
  throw std::invalid_argument("unknown load-balancing policy " +
                              std::to_string(static_cast<int>(policy)));
}

}  // namespace cascade::agent
