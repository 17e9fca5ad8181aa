#pragma once
// Consistent hashing on PickContext::hash_key: a ring of virtual nodes
// (ketama style), built in set_candidates, and one binary search per pick.
//
// A candidate's points depend only on its address (point r = a hash of the
// address and r), so adding or removing one address moves only the keys that
// land on its own points: about 1/n of them, never others'. Weight-aware: the
// heaviest candidate gets LbConfig::ring_points_per_instance points, the
// others in proportion to their weight (at least 1). The caller's key is
// mixed (splitmix64) before the lookup, so small sequential keys spread over
// the whole ring. An excluded address passes its keys to the next point
// clockwise that belongs to an allowed one.

#include <cstdint>
#include <vector>

#include "cascade/agent/lb/candidate_set.hpp"

namespace cascade::agent::lb {

class ConsistentHashBalancer final : public CandidateBalancer {
 public:
  explicit ConsistentHashBalancer(const LbConfig& config)
      : points_per_instance_(config.ring_points_per_instance),
        max_points_(config.ring_max_points) {}
  LbPolicy policy() const override { return LbPolicy::kConsistentHash; }
  std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) override;

  // For tests: the sorted ring, each point's candidate, and the key mixing.
  const std::vector<std::uint64_t>& ring_points() const { return ring_; }
  std::uint32_t point_owner(std::size_t k) const { return owner_[k]; }
  static std::uint64_t mix(std::uint64_t hash_key);

 private:
  void candidates_changed(const std::vector<std::size_t>& from) override;

  std::size_t bucket_of(std::uint64_t point) const {
    return bucket_shift_ >= 64 ? 0 : static_cast<std::size_t>(point >> bucket_shift_);
  }

  std::uint32_t points_per_instance_;
  std::size_t max_points_;
  std::vector<std::uint64_t> ring_;   // sorted points
  std::vector<std::uint32_t> owner_;  // owner_[k]: the candidate of ring_[k]
  // A shortcut into the ring: the points of bucket b (the top bits of a
  // point) start at ring_[bucket_start_[b]], so a search covers a few points
  // instead of the whole ring, which outgrows the first-level caches.
  std::vector<std::uint32_t> bucket_start_{0, 0};
  int bucket_shift_ = 64;
};

}  // namespace cascade::agent::lb
