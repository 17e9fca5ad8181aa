#pragma once
// The agent's on-disk copy of the address lists it last knew, with the routing
// rules the hub sent for each, so an agent restarted while no hub is reachable
// can still resolve and pick under the operator's rules (marked stale, with
// the age of the data), and the config groups it followed, served the same way.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/config_copy.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent {

struct ServiceSnapshot {
  proto::ServiceKey service;
  std::uint64_t version = 0;
  WallMs fetched_wall_ms = 0;  // when the hub last confirmed this list
  std::vector<proto::Instance> instances;
  // The hub's routing rules for the service, as the cache entry holds them:
  // empty = the hub holds none; nullopt = no hub has said.
  std::optional<std::vector<proto::RouteRuleText>> routes{};
  bool operator==(const ServiceSnapshot&) const = default;
};

// A config group as the agent last held it (common/config_copy.hpp).
struct ConfigGroupSnapshot {
  std::string group;
  std::uint64_t version = 0;
  WallMs fetched_wall_ms = 0;  // when a hub last confirmed the group
  bool gone = false;           // the hub said no tier has it
  proto::ConfigValues entries;
  bool operator==(const ConfigGroupSnapshot&) const = default;
};

class SnapshotStore {
 public:
  virtual ~SnapshotStore() = default;
  virtual std::vector<ServiceSnapshot> load_all() = 0;
  // Upserts these services and deletes `removed` in one transaction.
  virtual void save(const std::vector<ServiceSnapshot>& services,
                    const std::vector<proto::ServiceKey>& removed) = 0;

  virtual std::vector<ConfigGroupSnapshot> load_config_groups() = 0;
  // Upserts these groups and deletes `removed` in one transaction.
  virtual void save_config_groups(const std::vector<ConfigGroupSnapshot>& groups,
                                  const std::vector<std::string>& removed) = 0;
};

}  // namespace cascade::agent
