#include "cascade/hub/served_config.hpp"

#include <algorithm>

namespace cascade::hub {

ServedConfig::ServedConfig(std::uint64_t hub_epoch, std::size_t log_capacity)
    : epoch_(hub_epoch), log_capacity_(std::max<std::size_t>(log_capacity, 1)) {}

std::set<std::string, std::less<>> ServedConfig::changed_keys(const ConfigEntries& before,
                                                              const ConfigEntries& after) {
  std::set<std::string, std::less<>> keys;
  for (const auto& [key, entry] : after)
    if (auto it = before.find(key); it == before.end() || !(it->second == entry)) keys.insert(key);
  for (const auto& [key, entry] : before)
    if (!after.contains(key)) keys.insert(key);
  return keys;
}

bool ServedConfig::publish(std::string_view group, ConfigEntries entries,
                           std::optional<std::uint64_t> version) {
  auto it = groups_.find(group);
  if (it == groups_.end()) {
    if (entries.empty()) return false;  // nothing served, nothing to serve
    it = groups_.emplace(std::string(group), Group{}).first;
  }
  auto& g = it->second;
  auto keys = changed_keys(g.entries, entries);
  if (keys.empty()) return false;
  if (!version) version = issue();
  g.entries = std::move(entries);
  g.log.push_back({*version, std::move(keys)});
  g.version = *version;
  while (g.log.size() > log_capacity_) {
    g.log_floor = g.log.front().version;
    g.log.pop_front();
  }
  return true;
}

// `held` must be a version this hub served for the group and whose later
// changes are all still logged: the log floor, or a version in the log.
bool ServedConfig::can_delta_from(const Group& g, std::uint64_t held) const {
  if (held == 0) return false;
  if (held == g.log_floor) return true;
  return std::any_of(g.log.begin(), g.log.end(),
                     [held](const Group::Change& c) { return c.version == held; });
}

std::optional<proto::ConfigUpdate> ServedConfig::update_for(std::string_view group,
                                                            std::uint64_t held) const {
  const auto* g = find(group);
  // A group never served is gone at kNeverServedVersion, not at 0: 0 is what
  // a subscriber declares before any answer, and it must get one.
  const std::uint64_t version = g ? g->version : kNeverServedVersion;
  if (held == version) return std::nullopt;
  proto::ConfigUpdate u;
  u.group = std::string(group);
  u.from_version = held;
  u.version = version;
  if (g == nullptr || g->entries.empty()) {
    u.kind = proto::UpdateKind::kGone;
    return u;
  }
  if (!can_delta_from(*g, held)) {
    u.kind = proto::UpdateKind::kFull;
    for (const auto& [key, entry] : g->entries)
      u.upserts.push_back(entry);
    return u;
  }
  u.kind = proto::UpdateKind::kDelta;
  std::set<std::string_view> keys;
  for (auto it = g->log.rbegin(); it != g->log.rend() && it->version > held; ++it)
    keys.insert(it->keys.begin(), it->keys.end());
  for (auto key : keys) {
    if (auto found = g->entries.find(key); found != g->entries.end())
      u.upserts.push_back(found->second);
    else
      u.removed.emplace_back(key);
  }
  return u;
}

const ServedConfig::Group* ServedConfig::find(std::string_view group) const {
  auto it = groups_.find(group);
  return it == groups_.end() ? nullptr : &it->second;
}

}  // namespace cascade::hub
