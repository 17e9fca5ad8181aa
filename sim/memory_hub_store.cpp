#include "cascade/sim/memory_hub_store.hpp"

namespace cascade::sim {

hub::HubSnapshot MemoryHubStore::load() {
  hub::HubSnapshot snapshot;
  for (const auto& [id, node] : nodes_)
    snapshot.nodes.push_back(node);
  for (const auto& [key, instance] : instances_)
    snapshot.instances.push_back(instance);
  for (const auto& [service, version] : versions_)
    snapshot.services.push_back({service, version});
  return snapshot;
}

// A key appears in at most one list of a batch, so deletes and upserts commute.
void MemoryHubStore::apply(const hub::PersistBatch& batch) {
  if (batch.empty()) return;
  for (const auto& id : batch.node_deletes)
    nodes_.erase(id);
  for (const auto& node : batch.node_upserts)
    nodes_.insert_or_assign(node.node_id, node);
  for (const auto& key : batch.instance_deletes)
    instances_.erase({key.service, key.id});
  for (const auto& rec : batch.instance_upserts)
    instances_.insert_or_assign({rec.service, rec.instance.id}, rec);
  for (const auto& rec : batch.service_versions)
    versions_.insert_or_assign(rec.service, rec.version);
  ++batches_applied_;
}

}  // namespace cascade::sim
