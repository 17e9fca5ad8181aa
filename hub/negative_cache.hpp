#pragma once
// "Not found" answers from the upper tier, kept by a tiered hub.
//
// Why these rules:
// - A lookup trusts an answer for `ttl` (the hub's --negative-ttl-ms), so a
//   storm of lookups for a missing service stays in this tier.
// - Consumers that still declare the service in their beats keep the entry
//   alive past its TTL: the hub re-asks the upper tier, and until a different
//   answer comes the consumers must keep hearing "gone". Dropping the entry
//   at its TTL would leave the last list they held with them forever.
// - Bounded: entries neither fresh nor declared for `unused_ttl` are dropped,
//   and at most `max_entries` are kept, so random names cannot grow it.
//
// Sans-IO; one owning thread.

#include <cstddef>
#include <map>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::hub {

class NegativeCache {
 public:
  NegativeCache(Duration ttl, Duration unused_ttl, std::size_t max_entries)
      : ttl_(ttl), unused_ttl_(unused_ttl), max_entries_(max_entries) {}

  void remember(MonoTime now, const proto::ServiceKey& service);
  void forget(const proto::ServiceKey& service) { entries_.erase(service); }
  // The upper tier said "not found" less than `ttl` ago.
  bool fresh(MonoTime now, const proto::ServiceKey& service) const;

  struct Declared {
    bool missing = false;  // the last answer was "not found"
    bool expired = false;  // ... older than `ttl`: ask again
  };
  // A consumer declared the service in its beat.
  Declared declare(MonoTime now, const proto::ServiceKey& service);

  // Drops unused entries; does work at most once a second.
  void prune(MonoTime now);
  std::size_t size() const { return entries_.size(); }

 private:
  struct Entry {
    MonoTime until{};     // trusted until
    MonoTime declared{};  // last declared by a consumer
  };
  bool droppable(MonoTime now, const Entry& e) const {
    return now >= e.until && now - e.declared >= unused_ttl_;
  }

  Duration ttl_;
  Duration unused_ttl_;
  std::size_t max_entries_;
  std::map<proto::ServiceKey, Entry> entries_;
  MonoTime next_prune_{};
};

}  // namespace cascade::hub
