#pragma once
// The candidate list every balancer holds, with what their pick paths share:
// lookup by address (for feedback and exclusion), the weights' running sums,
// and the addresses excluded for the current pick. Plus CandidateBalancer, the
// base that keeps a CandidateSet and tells a policy which old candidate each
// new one continues, so learned state follows addresses across list changes.
//
// Thread-safety: none (see load_balancer.hpp).

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string_view>
#include <vector>

#include "cascade/agent/lb/load_balancer.hpp"

namespace cascade::agent::lb {

class CandidateSet {
 public:
  static constexpr std::size_t kNew = SIZE_MAX;

  // Replaces the list. Returns, for each new candidate, the index of the old
  // candidate it continues (same address; when several candidates share an
  // address, the k-th of them continues the old k-th), or kNew.
  std::vector<std::size_t> replace(std::vector<proto::Instance> list);

  const std::vector<proto::Instance>& list() const { return list_; }
  std::size_t size() const { return list_.size(); }
  bool empty() const { return list_.empty(); }
  std::uint32_t weight(std::size_t i) const { return weights_[i]; }
  // All weights, indexed like the candidates: contiguous for the pick loops.
  const std::vector<std::uint32_t>& weights() const { return weights_; }
  std::uint64_t total_weight() const { return cumulative_.empty() ? 0 : cumulative_.back(); }

  // The indexes of the candidates with this address (usually one, none for a
  // stranger). A binary search over the addresses: no hashing, no allocation.
  std::span<const std::uint32_t> with_address(std::string_view address) const;

  // --- One pick: begin_pick() first, then the helpers below honour ctx.exclude.

  // Marks the candidates whose address is in ctx.exclude; returns how many
  // are left. O(|exclude| log n), nothing when nothing is excluded.
  std::size_t begin_pick(const PickContext& ctx);
  bool any_excluded() const { return allowed_count_ < list_.size(); }
  bool allowed(std::size_t i) const { return !any_excluded() || excluded_in_pick_[i] != pick_no_; }
  std::size_t allowed_count() const { return allowed_count_; }

  // The first allowed candidate at or after `start`, wrapping around.
  // Requires allowed_count() > 0.
  std::size_t first_allowed_from(std::size_t start) const;
  // The k-th allowed candidate (k < allowed_count()); O(1) when nothing is excluded.
  std::size_t nth_allowed(std::size_t k) const;
  // Uniform over the allowed candidates. Requires allowed_count() > 0.
  std::size_t uniform_allowed(Rng& rng) const;
  // Random in proportion to weight over the allowed candidates: a binary
  // search over the running sums, a linear walk when something is excluded.
  // Requires allowed_count() > 0.
  std::size_t weighted_allowed(Rng& rng) const;

 private:
  std::vector<proto::Instance> list_;
  std::vector<std::uint32_t> weights_;     // list_[i].weight, contiguous for the pick loops
  std::vector<std::uint64_t> cumulative_;  // cumulative_[i] = weights_[0] + ... + weights_[i]
  std::vector<std::uint32_t> by_address_;  // indexes sorted by (address, index)
  // excluded_in_pick_[i] == pick_no_: excluded in the current pick. A new
  // number per pick clears every mark without touching the vector.
  std::vector<std::uint64_t> excluded_in_pick_;
  std::uint64_t pick_no_ = 0;
  std::size_t allowed_count_ = 0;
  std::uint64_t allowed_weight_ = 0;
};

// The state of candidate i after a list change: the old state of the
// candidate it continues, or `fresh` for a new address.
template <typename T>
std::vector<T> carry_over(const std::vector<T>& old, const std::vector<std::size_t>& from,
                          const T& fresh) {
  std::vector<T> next(from.size(), fresh);
  for (std::size_t i = 0; i < from.size(); ++i)
    if (from[i] != CandidateSet::kNew && from[i] < old.size()) next[i] = old[from[i]];
  return next;
}

// Keeps the CandidateSet; a policy implements pick() and, if it learns,
// candidates_changed() and the feedback calls.
class CandidateBalancer : public LoadBalancer {
 public:
  void set_candidates(std::vector<proto::Instance> candidates) final {
    const auto from = set_.replace(std::move(candidates));
    candidates_changed(from);
  }
  const std::vector<proto::Instance>& candidates() const final { return set_.list(); }
  void on_call_started(std::string_view) override {}
  void on_call_finished(std::string_view, std::chrono::microseconds, bool) override {}

 protected:
  // After every set_candidates(): from[i] as returned by CandidateSet::replace.
  virtual void candidates_changed(const std::vector<std::size_t>& from) { (void)from; }

  CandidateSet set_;
};

}  // namespace cascade::agent::lb
