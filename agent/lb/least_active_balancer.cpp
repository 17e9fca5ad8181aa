#include "cascade/agent/lb/least_active_balancer.hpp"

namespace cascade::agent::lb {

std::optional<std::size_t> LeastActiveBalancer::pick(const PickContext& ctx, Rng& rng) {
  if (set_.begin_pick(ctx) == 0) return std::nullopt;
  const std::size_t n = set_.size();
  const std::uint32_t* active = load_.in_flight().data();
  const std::uint32_t* weight = set_.weights().data();
  const bool all_allowed = !set_.any_excluded();
  // Pass 1: the fewest in flight, and the weight of the candidates tied on it.
  std::uint32_t least = UINT32_MAX;
  std::uint64_t tied_weight = 0;
  std::size_t tied = 0;
  std::size_t first_tied = 0;
  for (std::size_t i = 0; i < n; ++i) {
    if (active[i] > least || !(all_allowed || set_.allowed(i))) continue;
    if (active[i] < least) {
      least = active[i];
      tied_weight = 0;
      tied = 0;
      first_tied = i;
    }
    tied_weight += weight[i];
    ++tied;
  }
  if (tied == 1) return first_tied;
  // Pass 2: a point in the tied weight, from the first tied candidate on.
  auto point =
      static_cast<std::uint64_t>(rng.uniform(0, static_cast<std::int64_t>(tied_weight) - 1));
  for (std::size_t i = first_tied; i < n; ++i) {
    if (active[i] != least || !(all_allowed || set_.allowed(i))) continue;
    if (point < weight[i]) return i;
    point -= weight[i];
  }
  return first_tied;  // unreachable: the points cover exactly the tied weight
}

std::optional<std::size_t> P2cBalancer::pick(const PickContext& ctx, Rng& rng) {
  const std::size_t n = set_.begin_pick(ctx);
  if (n == 0) return std::nullopt;
  if (n == 1) return set_.nth_allowed(0);
  const auto a = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(n) - 1));
  auto b = static_cast<std::size_t>(rng.uniform(0, static_cast<std::int64_t>(n) - 2));
  if (b >= a) ++b;  // distinct from a, still uniform over the others
  const std::size_t i = set_.nth_allowed(a);
  const std::size_t j = set_.nth_allowed(b);
  if (load_.in_flight(i) != load_.in_flight(j))
    return load_.in_flight(i) < load_.in_flight(j) ? i : j;
  return load_.latency_us(j) < load_.latency_us(i) ? j : i;
}

}  // namespace cascade::agent::lb
