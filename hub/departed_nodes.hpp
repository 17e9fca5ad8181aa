#pragma once
// Agent incarnations that deregistered within the last lease.
//
// A beat an agent sent just before its Deregister can arrive after it (two
// routes, a proxy, a retry). Admitting it would bring the node, and the set
// that beat carried, back for a whole lease: a zombie made by reordering.
// So a deregistered (node, epoch) is remembered for one lease, and beats from
// that epoch or an older one are refused. A newer epoch (the agent restarted)
// is admitted as usual. Entries expire in deadline order: O(expired) pruning.

#include <cstdint>
#include <deque>
#include <string>
#include <string_view>
#include <unordered_map>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

class DepartedNodes {
 public:
  void add(const std::string& node_id, std::uint64_t epoch, MonoTime until) {
    auto& entry = by_id_[node_id];
    entry.epoch = std::max(entry.epoch, epoch);
    entry.until = until;
    order_.emplace_back(until, node_id);
  }

  // True when a beat of `epoch` from this node must not re-admit it.
  bool refuses(std::string_view node_id, std::uint64_t epoch, MonoTime now) const {
    if (by_id_.empty()) return false;
    auto it = by_id_.find(std::string(node_id));
    return it != by_id_.end() && epoch <= it->second.epoch && now < it->second.until;
  }

  void prune(MonoTime now) {
    while (!order_.empty() && order_.front().first <= now) {
      auto it = by_id_.find(order_.front().second);
      // A later deregistration of the same node moved its deadline: keep it.
      if (it != by_id_.end() && it->second.until <= now) by_id_.erase(it);
      order_.pop_front();
    }
  }

  std::size_t size() const { return by_id_.size(); }

 private:
  struct Entry {
    std::uint64_t epoch = 0;
    MonoTime until{};
  };
  std::unordered_map<std::string, Entry> by_id_;
  std::deque<std::pair<MonoTime, std::string>> order_;  // ascending deadlines
};

}  // namespace cascade::hub
