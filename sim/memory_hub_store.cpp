#include "cascade/sim/memory_hub_store.hpp"

#include <algorithm>

namespace cascade::sim {

hub::HubSnapshot MemoryHubStore::load() {
  hub::HubSnapshot snapshot;
  for (const auto& [id, node] : nodes_)
    snapshot.nodes.push_back(node);
  for (const auto& [key, instance] : instances_)
    snapshot.instances.push_back(instance);
  for (const auto& [service, version] : versions_)
    snapshot.services.push_back({service, version});
  for (const auto& [key, entry] : config_entries_)
    snapshot.config_entries.push_back(entry);
  // Per group, its newest kConfigHistoryRestored records, oldest first.
  for (const auto& [group, records] : config_history_) {
    const auto kept = std::min(records.size(), hub::kConfigHistoryRestored);
    snapshot.config_history.insert(snapshot.config_history.end(),
                                   records.end() - static_cast<std::ptrdiff_t>(kept),
                                   records.end());
  }
  return snapshot;
}

// A key appears in at most one list of a batch; instance rows are deleted
// before the upserts, as the SQLite store does.
void MemoryHubStore::apply(const hub::PersistBatch& batch) {
  if (batch.empty()) return;
  for (const auto& id : batch.node_deletes)
    nodes_.erase(id);
  for (const auto& node : batch.node_upserts)
    nodes_.insert_or_assign(node.node_id, node);
  if (batch.instances_renumbered) instances_.clear();
  for (const auto row : batch.instance_deletes)
    instances_.erase(row);
  for (const hub::InstanceRow row : batch.instance_upserts)
    instances_.insert_or_assign(row.row, row.record());
  for (const auto& rec : batch.service_versions)
    versions_.insert_or_assign(rec.service, rec.version);
  for (const auto& service : batch.service_deletes)
    versions_.erase(service);
  // Config changes in the order they were made, as the SQLite store writes
  // them: a key changed twice in one batch ends as the second change left it.
  for (const auto& change : batch.config_changes) {
    std::pair<std::string, std::string> key{change.group, change.key};
    if (change.new_value)
      config_entries_.insert_or_assign(
          key, hub::ConfigEntryRecord{change.group, change.key, *change.new_value, change.version});
    else
      config_entries_.erase(key);
    auto& record = config_history_[change.group].emplace_back(change);
    record.wall_ms = batch.wall_ms;
    ++config_history_count_;
  }
  ++batches_applied_;
}

}  // namespace cascade::sim
