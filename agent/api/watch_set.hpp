#pragma once
// Long-poll watches of services, as a deterministic state machine: who waits
// on which service for a version other than the one they hold, until when.
// No clock, no thread, no lock: agent/api/watch_board.hpp drives it.
//
// A watch is parked only while the service's version equals the index its
// client holds; it ends when the version moves to anything else (a newer
// version, or an older one after a hub restart) or when its deadline passes.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent::api {

class WatchSet {
 public:
  using Id = std::uint64_t;

  // Parks a watch of `service` holding version `index`, until `deadline`.
  Id park(const proto::ServiceKey& service, std::uint64_t index, MonoTime deadline);
  // The service is now at `version`: the watches that held another one end.
  std::vector<Id> changed(const proto::ServiceKey& service, std::uint64_t version);
  // Watches whose deadline is at or before `now` end.
  std::vector<Id> expire(MonoTime now);
  // Ends one watch early (its client is gone); false when it had ended.
  bool cancel(Id id);

  std::optional<MonoTime> next_deadline() const;
  std::vector<proto::ServiceKey> watched_services() const;
  std::size_t size() const { return watches_.size(); }

 private:
  struct Watch {
    proto::ServiceKey service;
    std::uint64_t index;
    MonoTime deadline;
  };
  void erase(Id id);

  Id next_id_ = 1;
  std::unordered_map<Id, Watch> watches_;
  std::map<proto::ServiceKey, std::set<Id>> by_service_;
  std::set<std::pair<MonoTime, Id>> by_deadline_;
};

}  // namespace cascade::agent::api
