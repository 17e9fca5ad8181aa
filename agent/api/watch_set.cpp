#include "cascade/agent/api/watch_set.hpp"

namespace cascade::agent::api {

WatchSet::Id WatchSet::park(const proto::ServiceKey& service, std::uint64_t index,
                            MonoTime deadline) {
  const Id id = next_id_++;
  watches_.emplace(id, Watch{service, index, deadline});
  by_service_[service].insert(id);
  by_deadline_.emplace(deadline, id);
  return id;
}

std::vector<WatchSet::Id> WatchSet::changed(const proto::ServiceKey& service,
                                            std::uint64_t version) {
  std::vector<Id> ended;
  auto it = by_service_.find(service);
  if (it == by_service_.end()) return ended;
  for (const Id id : it->second)
    if (watches_.at(id).index != version) ended.push_back(id);
  for (const Id id : ended)
    erase(id);
  return ended;
}

std::vector<WatchSet::Id> WatchSet::expire(MonoTime now) {
  std::vector<Id> ended;
  for (auto it = by_deadline_.begin(); it != by_deadline_.end() && it->first <= now; ++it)
    ended.push_back(it->second);
  for (const Id id : ended)
    erase(id);
  return ended;
}

bool WatchSet::cancel(Id id) {
  if (!watches_.contains(id)) return false;
  erase(id);
  return true;
}

void WatchSet::erase(Id id) {
  auto it = watches_.find(id);
  auto service = by_service_.find(it->second.service);
  service->second.erase(id);
  if (service->second.empty()) by_service_.erase(service);
  by_deadline_.erase({it->second.deadline, id});
  watches_.erase(it);
}

std::optional<MonoTime> WatchSet::next_deadline() const {
  if (by_deadline_.empty()) return std::nullopt;
  return by_deadline_.begin()->first;
}

std::vector<proto::ServiceKey> WatchSet::watched_services() const {
  std::vector<proto::ServiceKey> services;
  for (const auto& [service, ids] : by_service_)
    services.push_back(service);
  return services;
}

}  // namespace cascade::agent::api
