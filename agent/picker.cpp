#include "agent/picker.hpp"

namespace cascade::agent {

std::optional<PickPolicy> parse_pick_policy(std::string_view name) {
  if (name == "round_robin" || name == "rr") return PickPolicy::kRoundRobin;
  if (name == "random") return PickPolicy::kRandom;
  if (name == "weighted") return PickPolicy::kWeighted;
  if (name == "smooth_weighted" || name == "swrr") return PickPolicy::kSmoothWeighted;
  return std::nullopt;
}

namespace {

// UP instances with a weight, of the nearest tier that has any: a hub adds
// an upper tier's instances only when its own tier has too few, and traffic
// should stay in the datacenter while it can (tier 0 = the hub's own tier).
std::vector<const proto::Instance*> candidates(const std::vector<proto::Instance>& instances) {
  std::vector<const proto::Instance*> up;
  up.reserve(instances.size());
  std::uint32_t nearest = UINT32_MAX;
  for (const auto& in : instances) {
    if (in.status != proto::InstanceStatus::kUp || in.weight == 0) continue;
    if (in.tier < nearest) {
      nearest = in.tier;
      up.clear();
    }
    if (in.tier == nearest) up.push_back(&in);
  }
  return up;
}

const proto::Instance* weighted(const std::vector<const proto::Instance*>& up, Rng& rng) {
  std::uint64_t total = 0;
  for (const auto* in : up)
    total += in->weight;
  auto point = static_cast<std::uint64_t>(rng.uniform(0, static_cast<std::int64_t>(total) - 1));
  for (const auto* in : up) {
    if (point < in->weight) return in;
    point -= in->weight;
  }
  return up.back();
}

// Each pick adds every candidate's weight to its current weight, takes the
// largest (the first on ties) and subtracts the total from it: over a cycle
// each is picked in proportion to its weight, and heavy ones are not bunched.
const proto::Instance* smooth_weighted(const std::vector<const proto::Instance*>& up,
                                       std::map<std::string, std::int64_t>& current) {
  std::map<std::string, std::int64_t> next;  // forgets instances no longer listed
  std::int64_t total = 0;
  const proto::Instance* best = nullptr;
  std::int64_t best_weight = 0;
  for (const auto* in : up) {
    auto& w = next[in->id];
    w = current[in->id] + in->weight;
    total += in->weight;
    if (best == nullptr || w > best_weight) {
      best = in;
      best_weight = w;
    }
  }
  next[best->id] -= total;
  current = std::move(next);
  return best;
}

}  // namespace

std::optional<proto::Instance> pick_instance(const std::vector<proto::Instance>& instances,
                                             PickPolicy policy, Rng& rng, PickState& state) {
  const auto up = candidates(instances);
  if (up.empty()) return std::nullopt;
  switch (policy) {
    case PickPolicy::kRoundRobin:
      return *up[state.cursor.fetch_add(1, std::memory_order_relaxed) % up.size()];
    case PickPolicy::kRandom:
      return *up[static_cast<std::size_t>(
          rng.uniform(0, static_cast<std::int64_t>(up.size()) - 1))];
    case PickPolicy::kWeighted:
      return *weighted(up, rng);
    case PickPolicy::kSmoothWeighted:
      return *smooth_weighted(up, state.current);
  }
  return std::nullopt;
}

}  // namespace cascade::agent
