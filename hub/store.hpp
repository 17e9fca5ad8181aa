#pragma once
// What the hub persists, and the interface of the store that persists it.
//
// The core never touches the store: it marks what changed, and the server
// takes a PersistBatch (current values of everything dirty, coalesced) every
// flush interval and hands it to the store in one transaction. Lease renewals
// are not writes. Replies that acknowledge a state change are sent only after
// the batch holding that change has committed (see hub/hub_server.cpp).

#include <cstdint>
#include <string>
#include <vector>

#include "common/protocol.hpp"

namespace cascade::hub {

struct NodeRecord {
  std::string node_id;
  std::uint64_t epoch = 0;
  std::uint64_t digest = 0;
  bool operator==(const NodeRecord&) const = default;
};

struct InstanceRecord {
  proto::ServiceKey service;
  proto::Instance instance;
  std::string owner;  // node id of the agent that registered it
  bool operator==(const InstanceRecord&) const = default;
};

struct InstanceKeyRecord {
  proto::ServiceKey service;
  std::string id;
  bool operator==(const InstanceKeyRecord&) const = default;
};

struct ServiceRecord {
  proto::ServiceKey service;
  std::uint64_t version = 0;
  bool operator==(const ServiceRecord&) const = default;
};

// Everything that changed since the previous batch. Upserts carry current
// values; deletes carry keys. A key appears in at most one list per batch.
struct PersistBatch {
  std::vector<NodeRecord> node_upserts;
  std::vector<std::string> node_deletes;
  std::vector<InstanceRecord> instance_upserts;
  std::vector<InstanceKeyRecord> instance_deletes;
  std::vector<ServiceRecord> service_versions;
  bool empty() const {
    return node_upserts.empty() && node_deletes.empty() && instance_upserts.empty() &&
           instance_deletes.empty() && service_versions.empty();
  }
};

// The state a restarted hub starts from.
struct HubSnapshot {
  std::vector<NodeRecord> nodes;
  std::vector<InstanceRecord> instances;
  std::vector<ServiceRecord> services;
};

// Durable storage of one hub's registry. Used from the hub's owning thread only.
class HubStore {
 public:
  virtual ~HubStore() = default;
  // Increments and durably stores the hub epoch; returns the new value (1 on
  // first start). Called once at start, before the hub serves anything.
  virtual std::uint64_t next_epoch() = 0;
  virtual HubSnapshot load() = 0;
  // Applies one batch atomically. Throws StoreError on failure.
  virtual void apply(const PersistBatch& batch) = 0;
};

}  // namespace cascade::hub
