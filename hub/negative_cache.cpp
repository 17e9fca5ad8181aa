#include "cascade/hub/negative_cache.hpp"

#include <algorithm>
#include <vector>

namespace cascade::hub {

namespace {
constexpr Duration kPrunePeriod{1000};
}  // namespace

void NegativeCache::remember(MonoTime now, const proto::ServiceKey& service) {
  entries_[service].until = now + ttl_;
  if (entries_.size() > max_entries_) prune(now);
}

bool NegativeCache::fresh(MonoTime now, const proto::ServiceKey& service) const {
  auto it = entries_.find(service);
  return it != entries_.end() && now < it->second.until;
}

NegativeCache::Declared NegativeCache::declare(MonoTime now, const proto::ServiceKey& service) {
  auto it = entries_.find(service);
  if (it == entries_.end()) return {};
  it->second.declared = now;
  return {true, now >= it->second.until};
}

void NegativeCache::prune(MonoTime now) {
  if (now < next_prune_ && entries_.size() <= max_entries_) return;
  next_prune_ = now + kPrunePeriod;
  std::erase_if(entries_, [&](const auto& kv) { return droppable(now, kv.second); });
  if (entries_.size() <= max_entries_) return;
  // Still too many (a storm of distinct names): keep the most recently trusted.
  std::vector<MonoTime> untils;
  untils.reserve(entries_.size());
  for (const auto& [key, e] : entries_)
    untils.push_back(e.until);
  const auto cut = untils.begin() + static_cast<std::ptrdiff_t>(untils.size() - max_entries_);
  std::nth_element(untils.begin(), cut, untils.end());
  const MonoTime oldest_kept = *cut;
  std::erase_if(entries_, [&](const auto& kv) { return kv.second.until < oldest_kept; });
}

}  // namespace cascade::hub
