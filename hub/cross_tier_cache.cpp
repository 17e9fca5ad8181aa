#include "hub/cross_tier_cache.hpp"

namespace cascade::hub {

CrossTierCache::Entry& CrossTierCache::touch(const proto::ServiceKey& service, MonoTime now) {
  auto found = entries_.find(service);
  if (found == entries_.end()) {
    lru_.push_front(Entry{service, std::nullopt, {}, now, false, {}});
    entries_.emplace(service, lru_.begin());
    evict_over_capacity();
  } else {
    lru_.splice(lru_.begin(), lru_, found->second);
  }
  Entry& entry = lru_.front();
  entry.last_lookup = now;
  return entry;
}

CacheLookup CrossTierCache::lookup(const proto::ServiceKey& service, MonoTime now,
                                   bool upstream_reachable, std::uint64_t waiter) {
  Entry& entry = touch(service, now);
  CacheLookup result;
  if (entry.answer) {
    result.answer = &*entry.answer;
    result.age = now - entry.confirmed_at;
    if (result.age < ttl_of(*entry.answer)) {
      result.state = CacheState::kFresh;
      return result;
    }
    if (!upstream_reachable && result.age < config_.max_stale) {
      result.state = CacheState::kStale;
      return result;
    }
  }
  result.state = CacheState::kMiss;
  result.answer = nullptr;
  result.ask_upstream = !entry.in_flight;
  entry.in_flight = true;
  entry.waiters.push_back(waiter);
  return result;
}

std::vector<std::uint64_t> CrossTierCache::store(UpstreamAnswer answer, MonoTime now) {
  // A refresh is not a use: only a new entry takes a place at the front.
  auto found = entries_.find(answer.service);
  Entry& entry = found != entries_.end() ? *found->second : touch(answer.service, now);
  entry.answer = std::move(answer);
  entry.confirmed_at = now;
  entry.in_flight = false;
  return std::exchange(entry.waiters, {});
}

std::vector<std::uint64_t> CrossTierCache::abandon(const proto::ServiceKey& service) {
  auto found = entries_.find(service);
  if (found == entries_.end()) return {};
  Entry& entry = *found->second;
  entry.in_flight = false;
  return std::exchange(entry.waiters, {});
}

std::vector<proto::ServiceKey> CrossTierCache::in_use(MonoTime now) const {
  std::vector<proto::ServiceKey> keys;
  for (const Entry& entry : lru_) {
    if (now - entry.last_lookup >= config_.idle_ttl) break;  // the rest are older still
    keys.push_back(entry.service);
  }
  return keys;
}

void CrossTierCache::expire(MonoTime now) {
  // The LRU order is lookup order, so idle entries sit together at the back.
  while (!lru_.empty() && now - lru_.back().last_lookup >= config_.idle_ttl &&
         lru_.back().waiters.empty()) {
    entries_.erase(lru_.back().service);
    lru_.pop_back();
  }
}

void CrossTierCache::evict_over_capacity() {
  while (entries_.size() > config_.max_entries && lru_.back().waiters.empty()) {
    entries_.erase(lru_.back().service);
    lru_.pop_back();
  }
}

}  // namespace cascade::hub
