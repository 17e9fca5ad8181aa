#pragma once
// An L1 hub's cache of answers from its upstream tier, for services that have
// no instance in its own tier (see docs/design-tiers.md).
//
// Why these rules:
// - Entries live `ttl` after the upstream last confirmed them, shorter than
//   the upstream's own lease, so cross-tier data stays fresh while the upstream
//   is spared. "Not found" answers live `negative_ttl` (shorter still), so a
//   storm of lookups for a missing service stays in this tier.
// - Stale-if-upstream-down: an expired entry is still served, marked stale
//   with its age, while the upstream is unreachable, up to `max_stale`.
// - One question upstream per service at a time: lookups that miss while a
//   query is in flight wait for it (their tokens are handed back with the
//   answer) instead of each asking again.
// - Entries nobody looked up for `idle_ttl` are dropped; the cache holds at
//   most `max_entries` (least recently used go first), so it cannot be grown
//   without bound by lookups of random names.
//
// Sans-IO: time comes in as `now`; the hub core turns results into messages.

#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.hpp"
#include "common/protocol.hpp"

namespace cascade::hub {

struct CrossTierCacheConfig {
  Duration ttl{3000};           // default: half the upstream's 6 s lease
  Duration negative_ttl{1000};  // "not found" answers
  Duration max_stale{
      std::chrono::minutes(5)};  // serve expired entries this long while the upstream is down
  Duration idle_ttl{std::chrono::minutes(5)};  // drop entries not looked up for this long
  std::size_t max_entries = 100'000;
};

struct UpstreamAnswer {
  proto::ServiceKey service;
  bool found = false;
  std::uint64_t version = 0;
  std::vector<proto::Instance> instances;
  std::string source_hub;  // the hub that answered
  std::uint32_t tier = 0;  // its tier
};

enum class CacheState : std::uint8_t {
  kFresh,  // within its TTL: answer from the cache
  kStale,  // past its TTL, upstream unreachable: answer, marked stale
  kMiss,   // ask upstream (or wait for the question already asked)
};

struct CacheLookup {
  CacheState state = CacheState::kMiss;
  const UpstreamAnswer* answer = nullptr;  // for kFresh and kStale; valid until the next call
  Duration age{0};                         // since the upstream last confirmed it
  bool ask_upstream = false;               // kMiss: no question in flight, send one
};

class CrossTierCache {
 public:
  explicit CrossTierCache(CrossTierCacheConfig config) : config_(config) {}

  // A lookup by a local consumer. `waiter` is an opaque token the caller uses
  // to answer later; it is kept only when the result is kMiss.
  CacheLookup lookup(const proto::ServiceKey& service, MonoTime now, bool upstream_reachable,
                     std::uint64_t waiter);

  // The upstream answered (a query reply, or a refresh through the uplink's
  // beats). Returns the tokens of the lookups that were waiting for it.
  std::vector<std::uint64_t> store(UpstreamAnswer answer, MonoTime now);

  // The question for `service` got no answer: the waiters are returned so they
  // can be answered from a stale entry or with "unreachable"; the next lookup asks again.
  std::vector<std::uint64_t> abandon(const proto::ServiceKey& service);

  // Services looked up within idle_ttl: what the uplink keeps fresh in its beats.
  std::vector<proto::ServiceKey> in_use(MonoTime now) const;

  // Drops entries idle for idle_ttl (and waiters-free). Call from the hub's tick.
  void expire(MonoTime now);

  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    proto::ServiceKey service;
    std::optional<UpstreamAnswer> answer;  // nullopt until the first answer
    MonoTime confirmed_at{};
    MonoTime last_lookup{};
    bool in_flight = false;
    std::vector<std::uint64_t> waiters;
  };
  using Lru = std::list<Entry>;  // most recently looked up at the front

  Entry& touch(const proto::ServiceKey& service, MonoTime now);
  Duration ttl_of(const UpstreamAnswer& answer) const {
    return answer.found ? config_.ttl : config_.negative_ttl;
  }
  void evict_over_capacity();

  CrossTierCacheConfig config_;
  Lru lru_;
  std::unordered_map<proto::ServiceKey, Lru::iterator> entries_;
};

}  // namespace cascade::hub
