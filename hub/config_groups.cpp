#include "cascade/hub/config_groups.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "cascade/common/validate.hpp"

namespace cascade::hub {

namespace {

std::size_t bytes_of(std::string_view key, std::string_view value) {
  return key.size() + value.size();
}

// The last edit of each key, in key order: an edit naming a key twice means its last value.
std::map<std::string_view, const ConfigEdit*> last_edit_of_each_key(
    const std::vector<ConfigEdit>& edits) {
  std::map<std::string_view, const ConfigEdit*> last;
  for (const auto& e : edits)
    last[e.key] = &e;
  return last;
}

}  // namespace

ConfigGroups::ConfigGroups(ConfigIdentity self, std::uint64_t hub_epoch, ConfigLimits limits)
    : self_(std::move(self)), limits_(limits), served_(hub_epoch, limits.log_per_group) {}

ConfigGroups::Own& ConfigGroups::own(std::string_view group) {
  auto it = own_.find(group);
  if (it == own_.end()) it = own_.emplace(std::string(group), Own{}).first;
  return it->second;
}

std::string ConfigGroups::check(const Own& own, const std::vector<ConfigEdit>& edits) const {
  if (edits.empty()) return "no keys to change";
  std::size_t bytes = own.bytes;
  std::size_t keys = own.entries.size();
  for (const auto& [key, edit] : last_edit_of_each_key(edits)) {
    if (auto error = proto::check_name("key", key); !error.empty()) return error;
    if (key.size() > limits_.max_key_bytes)
      return fmt::format("key '{}' is {} bytes, more than {}", key, key.size(),
                         limits_.max_key_bytes);
    if (edit->value && edit->value->size() > limits_.max_value_bytes)
      return fmt::format("the value of '{}' is {} bytes, more than {}", key, edit->value->size(),
                         limits_.max_value_bytes);
    if (auto it = own.entries.find(key); it != own.entries.end()) {
      bytes -= bytes_of(key, it->second.value);
      --keys;
    }
    if (edit->value) {
      bytes += bytes_of(key, *edit->value);
      ++keys;
    }
  }
  if (keys > limits_.max_keys_per_group)
    return fmt::format("the group would hold {} keys, more than {}", keys,
                       limits_.max_keys_per_group);
  if (bytes > limits_.max_group_bytes)
    return fmt::format("the group's keys and values would take {} bytes, more than {}", bytes,
                       limits_.max_group_bytes);
  return {};
}

ConfigGroups::Outcome ConfigGroups::edit(std::string_view group,
                                         const std::vector<ConfigEdit>& edits,
                                         const std::string& author, WallMs wall_ms) {
  if (auto error = proto::check_name("group", group); !error.empty()) return error;
  // A refused edit leaves no trace: the group's entry is made only to apply.
  static const Own kNone{};
  const auto it = own_.find(group);
  if (auto error = check(it == own_.end() ? kNone : it->second, edits); !error.empty())
    return error;
  return apply(group, own(group), edits, author, wall_ms);
}

// What changes is decided first: an edit that changes nothing issues no version.
std::vector<ConfigHistoryRecord> ConfigGroups::apply(std::string_view group, Own& own,
                                                     const std::vector<ConfigEdit>& edits,
                                                     const std::string& author, WallMs wall_ms) {
  std::vector<ConfigHistoryRecord> records;
  for (const auto& [key, edit] : last_edit_of_each_key(edits)) {
    std::optional<std::string> old;
    if (auto it = own.entries.find(key); it != own.entries.end()) old = it->second.value;
    if (old == edit->value) continue;
    records.push_back(
        {std::string(group), 0, std::string(key), std::move(old), edit->value, author, wall_ms});
  }
  if (records.empty()) return records;
  const auto version = served_.issue();
  for (auto& r : records) {
    r.version = version;
    if (auto it = own.entries.find(r.key); it != own.entries.end()) {
      own.bytes -= bytes_of(r.key, it->second.value);
      own.entries.erase(it);
    }
    if (r.new_value) {
      own.bytes += bytes_of(r.key, *r.new_value);
      own.entries.emplace(
          r.key, proto::ConfigEntry{r.key, *r.new_value,
                                    proto::ConfigOrigin{self_.tier, self_.hub_id, version}});
    }
  }
  remember(own, records);
  // A change of this hub's keys always changes what is served: each entry
  // carries its origin, so even a value equal to the upper tier's differs.
  publish(group, version);
  return records;
}

void ConfigGroups::remember(Own& own, std::vector<ConfigHistoryRecord> records) {
  for (auto& r : records)
    own.history.push_back(std::move(r));
  while (own.history.size() > limits_.history_per_group) {
    own.history_floor = own.history.front().version;
    own.history.pop_front();
  }
}

ConfigGroups::Outcome ConfigGroups::rollback(std::string_view group, std::uint64_t version,
                                             const std::string& author, WallMs wall_ms) {
  auto it = own_.find(group);
  if (it == own_.end()) return fmt::format("this hub has never set a key of group '{}'", group);
  auto& mine = it->second;
  // A group whose keys were all removed before a restart is not served, yet
  // its history still reaches back.
  const auto* served = served_.find(group);
  const auto latest = std::max(served != nullptr ? served->version : 0,
                               mine.history.empty() ? 0 : mine.history.back().version);
  if (version > latest) return fmt::format("group '{}' has no version {} yet", group, version);
  if (version < mine.history_floor)
    return fmt::format("the history of group '{}' before version {} is no longer kept", group,
                       mine.history_floor);
  // Each key changed after `version` goes back to its value before the first such change.
  std::map<std::string, std::optional<std::string>, std::less<>> target;
  for (const auto& r : mine.history)
    if (r.version > version && !target.contains(r.key)) target.emplace(r.key, r.old_value);
  if (target.empty()) return std::vector<ConfigHistoryRecord>{};
  std::vector<ConfigEdit> edits;
  for (auto& [key, value] : target)
    edits.push_back({key, std::move(value)});
  if (auto error = check(mine, edits); !error.empty()) return error;
  return apply(group, mine, edits, author, wall_ms);
}

void ConfigGroups::set_upper(std::string_view group, std::optional<ConfigEntries> entries) {
  if (entries)
    upper_.insert_or_assign(std::string(group), std::move(*entries));
  else if (auto it = upper_.find(group); it != upper_.end())
    upper_.erase(it);
  publish(group, std::nullopt);  // a version only if what is served changes
}

void ConfigGroups::restore(std::string_view group, std::vector<ConfigEntryRecord> entries,
                           std::vector<ConfigHistoryRecord> history) {
  auto& mine = own(group);
  mine.entries.clear();
  mine.bytes = 0;
  for (auto& e : entries) {
    mine.bytes += bytes_of(e.key, e.value);
    auto key = e.key;
    mine.entries.insert_or_assign(
        std::move(key),
        proto::ConfigEntry{std::move(e.key), std::move(e.value),
                           proto::ConfigOrigin{self_.tier, self_.hub_id, e.version}});
  }
  mine.history.assign(std::make_move_iterator(history.begin()),
                      std::make_move_iterator(history.end()));
  mine.history_floor = 0;
  if (!mine.history.empty()) {
    const auto oldest = mine.history.front().version;
    // A snapshot holds at most kConfigHistoryRestored records of a group.
    const bool maybe_cut =
        mine.history.size() >= std::min(limits_.history_per_group, kConfigHistoryRestored);
    mine.history_floor = maybe_cut ? oldest : oldest - 1;
  }
  while (mine.history.size() > limits_.history_per_group) {
    mine.history_floor = mine.history.front().version;
    mine.history.pop_front();
  }
  publish(group, std::nullopt);
}

void ConfigGroups::stamp_latest(std::string_view group, std::size_t count, WallMs wall_ms) {
  auto it = own_.find(group);
  if (it == own_.end()) return;
  auto& history = it->second.history;
  for (auto r = history.rbegin(); r != history.rend() && count > 0; ++r, --count)
    r->wall_ms = wall_ms;
}

void ConfigGroups::publish(std::string_view group, std::optional<std::uint64_t> version) {
  ConfigEntries merged;
  if (auto up = upper_.find(group); up != upper_.end()) merged = up->second;
  if (auto mine = own_.find(group); mine != own_.end())
    for (const auto& [key, entry] : mine->second.entries)
      merged.insert_or_assign(key, entry);
  served_.publish(group, std::move(merged), version);
}

const std::deque<ConfigHistoryRecord>& ConfigGroups::history(std::string_view group) const {
  static const std::deque<ConfigHistoryRecord> kNone;
  auto it = own_.find(group);
  return it == own_.end() ? kNone : it->second.history;
}

}  // namespace cascade::hub
