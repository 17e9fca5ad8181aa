#include "cascade/agent/lb/candidate_set.hpp"

#include <algorithm>
#include <numeric>

namespace cascade::agent::lb {

namespace {

std::vector<std::uint32_t> sorted_by_address(const std::vector<proto::Instance>& list) {
  std::vector<std::uint32_t> order(list.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(), [&](std::uint32_t a, std::uint32_t b) {
    if (const int c = list[a].address.compare(list[b].address); c != 0) return c < 0;
    return a < b;
  });
  return order;
}

}  // namespace

std::vector<std::size_t> CandidateSet::replace(std::vector<proto::Instance> list) {
  auto by_address = sorted_by_address(list);

  // Both orders are sorted by (address, index): a merge pairs the k-th
  // candidate of an address with the old k-th of the same address.
  std::vector<std::size_t> from(list.size(), kNew);
  std::size_t o = 0;
  for (std::size_t n = 0; n < by_address.size(); ++n) {
    const auto& address = list[by_address[n]].address;
    while (o < by_address_.size() && list_[by_address_[o]].address < address)
      ++o;
    if (o < by_address_.size() && list_[by_address_[o]].address == address)
      from[by_address[n]] = by_address_[o++];
  }

  list_ = std::move(list);
  by_address_ = std::move(by_address);
  weights_.resize(list_.size());
  cumulative_.resize(list_.size());
  std::uint64_t sum = 0;
  for (std::size_t i = 0; i < list_.size(); ++i) {
    // eligible_instances() drops weight 0; should one get here anyway, it
    // counts as 1, so the total weight to draw from is never 0.
    weights_[i] = std::max<std::uint32_t>(list_[i].weight, 1);
    sum += weights_[i];
    cumulative_[i] = sum;
  }
  excluded_in_pick_.assign(list_.size(), 0);
  pick_no_ = 0;
  allowed_count_ = list_.size();
  allowed_weight_ = sum;
  return from;
}

std::span<const std::uint32_t> CandidateSet::with_address(std::string_view address) const {
  // equal_range compares the probe with indexes both ways round.
  struct ByAddress {
    const std::vector<proto::Instance>* list;
    bool operator()(std::uint32_t i, std::string_view probe) const {
      return std::string_view((*list)[i].address) < probe;
    }
    bool operator()(std::string_view probe, std::uint32_t i) const {
      return probe < std::string_view((*list)[i].address);
    }
  };
  const auto [lo, hi] =
      std::equal_range(by_address_.begin(), by_address_.end(), address, ByAddress{&list_});
  return {lo, hi};
}

std::size_t CandidateSet::begin_pick(const PickContext& ctx) {
  allowed_count_ = list_.size();
  if (ctx.exclude == nullptr || ctx.exclude->empty()) return allowed_count_;
  ++pick_no_;
  allowed_weight_ = total_weight();
  for (const auto& address : *ctx.exclude)
    for (const auto i : with_address(address)) {
      if (excluded_in_pick_[i] == pick_no_) continue;  // the address was listed twice
      excluded_in_pick_[i] = pick_no_;
      --allowed_count_;
      allowed_weight_ -= weights_[i];
    }
  return allowed_count_;
}

std::size_t CandidateSet::first_allowed_from(std::size_t start) const {
  const std::size_t n = list_.size();
  for (std::size_t step = 0; step < n; ++step) {
    const std::size_t i = (start + step) % n;
    if (allowed(i)) return i;
  }
  return start % n;  // unreachable while allowed_count() > 0
}

std::size_t CandidateSet::nth_allowed(std::size_t k) const {
  if (!any_excluded()) return k;
  for (std::size_t i = 0; i < list_.size(); ++i)
    if (allowed(i) && k-- == 0) return i;
  return 0;  // unreachable while k < allowed_count()
}

std::size_t CandidateSet::uniform_allowed(Rng& rng) const {
  const auto k = rng.uniform(0, static_cast<std::int64_t>(allowed_count_) - 1);
  return nth_allowed(static_cast<std::size_t>(k));
}

std::size_t CandidateSet::weighted_allowed(Rng& rng) const {
  if (!any_excluded()) {
    const auto point =
        static_cast<std::uint64_t>(rng.uniform(0, static_cast<std::int64_t>(total_weight()) - 1));
    return static_cast<std::size_t>(
        std::upper_bound(cumulative_.begin(), cumulative_.end(), point) - cumulative_.begin());
  }
  auto point =
      static_cast<std::uint64_t>(rng.uniform(0, static_cast<std::int64_t>(allowed_weight_) - 1));
  std::size_t last = 0;
  for (std::size_t i = 0; i < list_.size(); ++i) {
    if (!allowed(i)) continue;
    if (point < weights_[i]) return i;
    point -= weights_[i];
    last = i;
  }
  return last;
}

}  // namespace cascade::agent::lb
