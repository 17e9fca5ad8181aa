#include "cascade/agent/picker.hpp"

#include <algorithm>
#include <array>
#include <cstdint>

namespace cascade::agent {

namespace {

struct PolicyName {
  std::string_view name;
  LbPolicy policy;
};

// Canonical names first: to_string() returns the first name of a policy.
constexpr std::array<PolicyName, 10> kNames{{
    {"round_robin", LbPolicy::kRoundRobin},
    {"random", LbPolicy::kRandom},
    {"weighted", LbPolicy::kWeighted},
    {"smooth_weighted", LbPolicy::kSmoothWeighted},
    {"least_active", LbPolicy::kLeastActive},
    {"consistent_hash", LbPolicy::kConsistentHash},
    {"adaptive", LbPolicy::kAdaptive},
    {"p2c", LbPolicy::kP2c},
    {"rr", LbPolicy::kRoundRobin},
    {"swrr", LbPolicy::kSmoothWeighted},
}};

}  // namespace

std::optional<LbPolicy> parse_lb_policy(std::string_view name) {
  for (const auto& entry : kNames)
    if (entry.name == name) return entry.policy;
  return std::nullopt;
}

std::string_view to_string(LbPolicy policy) {
  for (const auto& entry : kNames)
    if (entry.policy == policy) return entry.name;
  return "unknown";
}

std::string_view to_string(PickResult result) {
  switch (result) {
    case PickResult::kPicked:
      return "picked";
    case PickResult::kNoInstance:
      return "no_instance";
    case PickResult::kUnresolved:
      return "unresolved";
  }
  return "unknown";
}

std::string_view lb_policy_names() {
  return "round_robin (rr), random, weighted, smooth_weighted (swrr), least_active, "
         "consistent_hash, adaptive, p2c";
}

std::vector<proto::Instance> eligible_instances(const std::vector<proto::Instance>& instances) {
  std::vector<proto::Instance> out;
  out.reserve(instances.size());
  for (const auto& in : instances)
    if (in.status == proto::InstanceStatus::kUp && in.weight > 0 &&
        in.health != proto::Health::kIsolated)
      out.push_back(in);
  return out;
}

std::vector<proto::Instance> confirmed_first(std::vector<proto::Instance> instances) {
  const bool any_confirmed = std::any_of(instances.begin(), instances.end(), [](const auto& in) {
    return in.health != proto::Health::kUnconfirmed;
  });
  if (any_confirmed)
    std::erase_if(instances,
                  [](const auto& in) { return in.health == proto::Health::kUnconfirmed; });
  return instances;
}

std::vector<proto::Instance> nearest_tier(std::vector<proto::Instance> instances) {
  std::uint32_t nearest = UINT32_MAX;
  for (const auto& in : instances)
    nearest = std::min(nearest, in.tier);
  std::erase_if(instances, [&](const proto::Instance& in) { return in.tier != nearest; });
  return instances;
}

}  // namespace cascade::agent
