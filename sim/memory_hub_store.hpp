#pragma once
// The hub's "disk" in a simulation: a HubStore kept in memory.
//
// Batches are applied in the order they are given, like the SQLite store's
// transactions; load() returns the rows sorted as the SQLite store's
// ORDER BY does, so a restored hub sees what a real one would.
//
// Kept: nodes, instances, service versions, and the config centre's rows
// (this hub's own keys with their origin versions, and every change's
// history record, of which load() returns the last kConfigHistoryRestored
// per group, as the SQLite store does). Not kept: operator overrides,
// settings, routes and the audit log (no simulation restores them yet).

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

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
  std::size_t config_entry_count() const { return config_entries_.size(); }
  // Every config change ever applied, whatever load() restores of them.
  std::size_t config_history_count() const { return config_history_count_; }

 private:
  std::uint64_t epoch_ = 0;
  std::uint64_t batches_applied_ = 0;
  std::map<std::string, hub::NodeRecord> nodes_;
  std::map<std::uint32_t, hub::InstanceRecord> instances_;  // by row, as the SQLite store
  std::map<proto::ServiceKey, std::uint64_t> versions_;
  // By (group, key), as the SQLite store orders them.
  std::map<std::pair<std::string, std::string>, hub::ConfigEntryRecord> config_entries_;
  // By group, every change in the order applied (stamped with its batch's wall time).
  std::map<std::string, std::vector<hub::ConfigHistoryRecord>> config_history_;
  std::size_t config_history_count_ = 0;
};

}  // namespace cascade::sim
