#pragma once
// The callers of Client::resolve_async() waiting on hub queries: one query
// per service however many callers wait for it, so a thousand requests for
// a service this agent has not looked up yet cost the hub one query.
// Thread-safety: none; the Client guards it with its mutex.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "cascade/agent/agent_core.hpp"

namespace cascade::agent {

using ResolveCallback = std::function<void(std::optional<Resolution>)>;

class AsyncResolves {
 public:
  // The query already asked for `service`, if any.
  std::optional<std::uint64_t> pending_query(const proto::ServiceKey& service) const {
    auto it = query_of_.find(service);
    if (it == query_of_.end()) return std::nullopt;
    return it->second;
  }
  // `done` waits for query `id` (a new one, or pending_query()'s).
  void wait(const proto::ServiceKey& service, std::uint64_t id, ResolveCallback done) {
    query_of_.emplace(service, id);
    auto& waiting = waiting_[id];
    waiting.first = service;
    waiting.second.push_back(std::move(done));
  }
  // The callers of a query that finished (answered or timed out), with its
  // service; empty when no async caller waited on it.
  std::pair<proto::ServiceKey, std::vector<ResolveCallback>> finish(std::uint64_t id) {
    auto it = waiting_.find(id);
    if (it == waiting_.end()) return {};
    auto finished = std::move(it->second);
    waiting_.erase(it);
    query_of_.erase(finished.first);
    return finished;
  }
  // Every waiting caller (the Client stops): they are answered from the cache.
  std::vector<std::pair<proto::ServiceKey, std::vector<ResolveCallback>>> take_all() {
    std::vector<std::pair<proto::ServiceKey, std::vector<ResolveCallback>>> all;
    for (auto& [id, waiting] : waiting_)
      all.push_back(std::move(waiting));
    waiting_.clear();
    query_of_.clear();
    return all;
  }
  bool empty() const { return waiting_.empty(); }

 private:
  std::map<proto::ServiceKey, std::uint64_t> query_of_;
  std::map<std::uint64_t, std::pair<proto::ServiceKey, std::vector<ResolveCallback>>> waiting_;
};

}  // namespace cascade::agent
