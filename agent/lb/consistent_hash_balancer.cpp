#include "cascade/agent/lb/consistent_hash_balancer.hpp"

#include <algorithm>
#include <cmath>
#include <string_view>

namespace cascade::agent::lb {

namespace {

// Stable across runs and platforms (unlike std::hash): a list rebuilt
// anywhere puts every address at the same points.
std::uint64_t fnv1a(std::string_view s) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (const unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

std::uint64_t ConsistentHashBalancer::mix(std::uint64_t hash_key) {
  return splitmix64(hash_key);
}

void ConsistentHashBalancer::candidates_changed(const std::vector<std::size_t>&) {
  const auto& list = set_.list();
  std::uint32_t heaviest = 1;
  for (std::size_t i = 0; i < list.size(); ++i)
    heaviest = std::max(heaviest, set_.weight(i));
  double per_weight = static_cast<double>(points_per_instance_) / heaviest;
  // Scale down when the whole ring would be too large.
  double wanted = 0;
  for (std::size_t i = 0; i < list.size(); ++i)
    wanted += std::max(1.0, std::round(per_weight * set_.weight(i)));
  if (wanted > static_cast<double>(max_points_)) per_weight *= max_points_ / wanted;

  struct Point {
    std::uint64_t at;
    std::uint32_t owner;
  };
  std::vector<Point> points;
  points.reserve(static_cast<std::size_t>(std::min(wanted, static_cast<double>(max_points_))) +
                 list.size());
  for (std::size_t i = 0; i < list.size(); ++i) {
    const auto count =
        static_cast<std::uint64_t>(std::max(1.0, std::round(per_weight * set_.weight(i))));
    const std::uint64_t base = fnv1a(list[i].address);
    for (std::uint64_t r = 0; r < count; ++r)
      points.push_back(
          {splitmix64(base + r * 0x9e3779b97f4a7c15ULL), static_cast<std::uint32_t>(i)});
  }
  // Ties (two addresses on one point) go to the smaller address, whatever
  // the list's order, so every client builds the same ring.
  std::sort(points.begin(), points.end(), [&](const Point& a, const Point& b) {
    if (a.at != b.at) return a.at < b.at;
    if (const int c = list[a.owner].address.compare(list[b.owner].address); c != 0) return c < 0;
    return a.owner < b.owner;
  });
  ring_.resize(points.size());
  owner_.resize(points.size());
  for (std::size_t k = 0; k < points.size(); ++k) {
    ring_[k] = points[k].at;
    owner_[k] = points[k].owner;
  }
  // About four points a bucket; bucket_start_ has one extra entry, the end.
  int bits = 0;
  while (bits < 24 && (std::size_t{1} << (bits + 2)) < ring_.size())
    ++bits;
  bucket_shift_ = 64 - bits;
  bucket_start_.assign((std::size_t{1} << bits) + 1, 0);
  std::size_t k = 0;
  for (std::size_t b = 0; b + 1 < bucket_start_.size(); ++b) {
    while (k < ring_.size() && bucket_of(ring_[k]) < b)
      ++k;
    bucket_start_[b] = static_cast<std::uint32_t>(k);
  }
  bucket_start_.back() = static_cast<std::uint32_t>(ring_.size());
}

std::optional<std::size_t> ConsistentHashBalancer::pick(const PickContext& ctx, Rng&) {
  if (set_.begin_pick(ctx) == 0) return std::nullopt;
  const std::uint64_t key = mix(ctx.hash_key);
  // The first point at or after the key. Searching only the key's bucket is
  // exact: every point of a later bucket is larger than the key, so "none in
  // this bucket" means the first point of the next non-empty one.
  const std::size_t b = bucket_of(key);
  const auto first = ring_.begin() + bucket_start_[b];
  const auto last = ring_.begin() + bucket_start_[b + 1];
  std::size_t k = static_cast<std::size_t>(std::lower_bound(first, last, key) - ring_.begin());
  if (k == ring_.size()) k = 0;  // past the last point: the ring wraps
  if (!set_.any_excluded()) return owner_[k];
  // Every candidate has a point, and one at least is allowed: this ends.
  for (std::size_t step = 0; step < ring_.size(); ++step) {
    const std::uint32_t owner = owner_[(k + step) % ring_.size()];
    if (set_.allowed(owner)) return owner;
  }
  return std::nullopt;
}

}  // namespace cascade::agent::lb
