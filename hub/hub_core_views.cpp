// HubCore, part five: what the hub's HTTP admin API reads about nodes and the
// lists the isolation tracker and the eviction guard keep.
//
// These run on the owning thread between beats, so each costs what it
// lists: the child hubs come from their own index (kept by set_tier), the
// isolated instances from the tracker's isolations in force, the unconfirmed
// ones from the nodes the guard holds. None walks the registry; a list is cut
// at the caller's limit and says how long it is in all.

#include "cascade/hub/hub_core.hpp"

namespace cascade::hub {

namespace {

// "hold-budget" -> "budget": what the admin API shows as the hold's reason.
std::string hold_name(ExpiryVerdict reason) {
  return reason == ExpiryVerdict::kHoldPartition ? "partition" : "budget";
}

}  // namespace

std::optional<Duration> HubCore::lease_left(std::string_view node_id, MonoTime now) const {
  const Node* node = nodes_.find(node_id);
  if (node == nullptr) return std::nullopt;
  // A held node has a lease again (hold() renews it to ask once more), but it
  // is not a promise from the node: nothing is left of the one it had.
  if (node->held) return Duration{0};
  return std::max(Duration{0}, node->lease_deadline() - now);
}

std::vector<ChildHubView> HubCore::child_hubs(MonoTime now) const {
  std::vector<ChildHubView> out;
  out.reserve(child_hubs_.size());
  for (const Node* node : child_hubs_)  // in node-id order
    out.push_back(
        {node->id.str(), node->tier, *lease_left(node->id, now), node->held, node->owned.size()});
  return out;
}

ListedInstances HubCore::isolated_instances(MonoTime now, std::size_t limit) const {
  ListedInstances list;
  list.total = isolation_.isolation_count();
  isolation_.for_each_isolation([&](const proto::InstanceKey& key, MonoTime ends_at) {
    if (list.instances.size() >= limit) return false;
    // An instance that left since is forgotten by the tracker soon.
    const ServiceEntry* svc = registry_.find(key.service);
    if (svc == nullptr) return true;
    const InstanceSlot* slot = svc->instances.find(key.id);
    if (slot == nullptr) return true;
    const InstanceEntry& entry = slot->entry();
    list.instances.push_back({key.service, key.id, std::string(entry.address()),
                              entry.verdict().reason, entry.owner.str(),
                              std::max(Duration{0}, ends_at - now), ""});
    return true;
  });
  return list;
}

ListedInstances HubCore::unconfirmed_instances(MonoTime now, std::size_t limit) const {
  ListedInstances list;
  list.total = guard_.gauges().held_instances;
  guard_.for_each_held([&](std::string_view node_id, MonoTime since, ExpiryVerdict reason) {
    const Node* node = nodes_.find(node_id);
    if (node == nullptr) return true;
    for (const auto& owned : in_key_order(node->owned)) {
      if (list.instances.size() >= limit) return false;
      const InstanceEntry& entry = owned.entry();
      // Another node's now, or isolated (which says more than unconfirmed).
      if (entry.owner != node->id || entry.verdict().health != proto::Health::kUnconfirmed)
        continue;
      list.instances.push_back({owned.service->key, std::string(owned.id()),
                                std::string(entry.address()), entry.verdict().reason,
                                node->id.str(), now - since, hold_name(reason)});
    }
    return true;
  });
  return list;
}

}  // namespace cascade::hub
