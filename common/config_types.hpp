#pragma once
// The config centre's records, shared by hubs, agents and tools: groups of
// keys and values, each group versioned like a service list, each value
// saying where it was set (docs/design-config.md).
//
// A group's value of a key may come from any tier: an L2 holds the global
// defaults, an L1 this datacenter's overrides. What a hub serves is its own
// keys over the keys of the tier above, and every entry keeps its origin.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::proto {

inline constexpr std::size_t kMaxConfigKeyBytes = 255;
inline constexpr std::size_t kMaxConfigValueBytes = 64 * 1024;
// A group's keys and values together, per tier that sets them.
inline constexpr std::size_t kMaxConfigGroupBytes = 1024 * 1024;
inline constexpr std::size_t kMaxConfigKeysPerGroup = 4096;

// Where a value was set: the hub, its tier, and the group's version there
// when it was set.
struct ConfigOrigin {
  std::uint32_t tier = 0;
  std::string hub;
  std::uint64_t version = 0;
  bool operator==(const ConfigOrigin&) const = default;
};

struct ConfigEntry {
  std::string key;
  std::string value;  // bytes
  ConfigOrigin origin;
  bool operator==(const ConfigEntry&) const = default;
};

// A subscriber's group and the version it holds (0: nothing yet).
struct ConfigUse {
  std::string group;
  std::uint64_t version = 0;
};

// What changed in a group since `from_version`, as ServiceUpdate says it for
// a service's list: a delta applies on exactly `from_version`; full replaces
// the group; gone means no tier has the group.
struct ConfigUpdate {
  std::string group;
  std::uint64_t from_version = 0;
  std::uint64_t version = 0;
  UpdateKind kind = UpdateKind::kFull;
  std::vector<ConfigEntry> upserts;  // delta: set or changed; full: the whole group
  std::vector<std::string> removed;  // delta: keys no longer in the group
};

}  // namespace cascade::proto
