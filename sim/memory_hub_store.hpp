#pragma once
// The hub's "disk" in a simulation: a HubStore kept in memory.
//
// Batches are applied in the order they are given, like the SQLite store's
// transactions; load() returns the rows sorted as the SQLite store's
// ORDER BY does, so a restored hub sees what a real one would.

#include <cstdint>
#include <map>
#include <string>
#include <utility>

#include "cascade/hub/store.hpp"

namespace cascade::sim {

class MemoryHubStore final : public hub::HubStore {
 public:
  std::uint64_t next_epoch() override { return ++epoch_; }
  hub::HubSnapshot load() override;
  void apply(const hub::PersistBatch& batch) override;

  std::uint64_t batches_applied() const { return batches_applied_; }
  std::size_t instance_count() const { return instances_.size(); }
  std::size_t node_count() const { return nodes_.size(); }

 private:
  using InstanceKey = std::pair<proto::ServiceKey, std::string>;

  std::uint64_t epoch_ = 0;
  std::uint64_t batches_applied_ = 0;
  std::map<std::string, hub::NodeRecord> nodes_;
  std::map<InstanceKey, hub::InstanceRecord> instances_;
  std::map<proto::ServiceKey, std::uint64_t> versions_;
};

}  // namespace cascade::sim
