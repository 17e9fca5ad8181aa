#pragma once
// The JSON of an instance and of a service's routing rules, as every JSON
// interface shows them (cascadectl resolve --json, the agent's HTTP API):
// one definition, so the field names cannot drift apart. Header-only; the
// targets that include it link nlohmann_json.

#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade {

inline nlohmann::ordered_json instance_json(const proto::Instance& in) {
  nlohmann::ordered_json metadata = nlohmann::ordered_json::object();
  for (const auto& [key, value] : in.metadata)
    metadata[key] = value;
  return {
      {"id", in.id},
      {"address", in.address},
      {"status", proto::to_string(in.status)},
      {"weight", in.weight},
      {"zone", in.zone},
      {"tier", in.tier},
      {"health", proto::to_string(in.health)},
      {"health_reason", in.health_reason},
      {"metadata", std::move(metadata)},
  };
}

// null when no hub has said (an older hub's answer, or a list not yet confirmed).
inline nlohmann::ordered_json routes_json(
    const std::optional<std::vector<proto::RouteRuleText>>& routes) {
  if (!routes) return nullptr;
  nlohmann::ordered_json list = nlohmann::ordered_json::array();
  for (const auto& rule : *routes)
    list.push_back({{"text", rule.text},
                    {"priority", rule.priority},
                    {"force", rule.force},
                    {"enabled", rule.enabled}});
  return list;
}

}  // namespace cascade
