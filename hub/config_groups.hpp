#pragma once
// A hub's config centre: the groups it serves, made of its own keys over the
// keys of the tier above (docs/design-config.md). Sans-IO: operators' edits,
// rollbacks and the upper tier's groups come in; versioned updates for
// subscribers and history records (to persist and to show) come out.
//
//   ConfigGroups config({"hub-dc1", 1}, hub_epoch);
//   auto done = config.edit("orders.limits", {{"max_in_flight", "64"}}, "ops", wall_ms);
//   config.set_upper("orders.limits", entries_from_l2);   // the uplink's copy
//   auto update = config.update_for("orders.limits", held_version);
//
// Override order: a key this hub sets is served over the upper tier's value of
// the same key, whatever their versions; removing it here serves the upper
// value again. Every entry keeps its origin (tier, hub, version there).
//
// Limits (common/protocol.hpp) bound each tier's own keys: a key's length,
// a value's size, the keys and bytes of a group. An edit that would pass one
// is refused whole, with what is wrong.

#include <cstdint>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/hub/served_config.hpp"
#include "cascade/hub/store.hpp"

namespace cascade::hub {

// One key of an edit: the value to set, or nullopt to remove the key.
using ConfigEdit = proto::ConfigEdit;

struct ConfigIdentity {
  std::string hub_id;
  std::uint32_t tier = 1;
};

struct ConfigLimits {
  std::size_t max_key_bytes = proto::kMaxConfigKeyBytes;
  std::size_t max_value_bytes = proto::kMaxConfigValueBytes;
  std::size_t max_group_bytes = proto::kMaxConfigGroupBytes;  // keys and values of one tier
  std::size_t max_keys_per_group = proto::kMaxConfigKeysPerGroup;
  // Records kept in memory (a rollback reaches this far); a restart restores as many.
  std::size_t history_per_group = kConfigHistoryRestored;
  std::size_t log_per_group = 64;  // versions a subscriber can be behind and get a delta
};

class ConfigGroups {
 public:
  // The changes an edit or a rollback made (empty: it changed nothing), or
  // why it was refused.
  using Outcome = std::variant<std::vector<ConfigHistoryRecord>, std::string>;

  ConfigGroups(ConfigIdentity self, std::uint64_t hub_epoch, ConfigLimits limits = {});

  // Sets and removes this hub's keys of `group`, all in one version.
  Outcome edit(std::string_view group, const std::vector<ConfigEdit>& edits,
               const std::string& author, WallMs wall_ms);
  // Puts this hub's keys of `group` back as they were at `version` (a version
  // the group's history shows), as a new change.
  Outcome rollback(std::string_view group, std::uint64_t version, const std::string& author,
                   WallMs wall_ms);
  // The upper tier's copy of the group, as this hub's uplink holds it; nullopt
  // when the upper tier has no such group.
  void set_upper(std::string_view group, std::optional<ConfigEntries> entries);

  // A restart: this hub's keys of `group` and their history as the store kept
  // them (HubSnapshot). The keys keep their origin version, the records their
  // order and times; the group is served under a version of this
  // incarnation (followers get it whole). Of the history the last
  // history_per_group records are kept; a rollback reaches back to the
  // version before the oldest, or, when the history came cut at the limit
  // (the records before may share its version), to the oldest's own version.
  void restore(std::string_view group, std::vector<ConfigEntryRecord> entries,
               std::vector<ConfigHistoryRecord> history);
  // Stamps the commit's wall time on the group's last `count` records: those
  // of a batch taken for commit (records are committed in the order they are
  // made, so the ones not yet committed are always the newest).
  void stamp_latest(std::string_view group, std::size_t count, WallMs wall_ms);

  std::optional<proto::ConfigUpdate> update_for(std::string_view group, std::uint64_t held) const {
    return served_.update_for(group, held);
  }
  const ServedConfig::Group* served(std::string_view group) const { return served_.find(group); }
  const ServedConfig& served() const { return served_; }
  // This hub's changes to the group, oldest first (the last history_per_group).
  const std::deque<ConfigHistoryRecord>& history(std::string_view group) const;

 private:
  struct Own {
    ConfigEntries entries;  // this hub's keys, origin = this hub
    std::size_t bytes = 0;  // keys and values
    std::deque<ConfigHistoryRecord> history;
    // Changes up to this version are no longer in `history`.
    std::uint64_t history_floor = 0;
  };

  std::string check(const Own& own, const std::vector<ConfigEdit>& edits) const;
  // Applies the edits that change something under one new version, issued
  // only when one does; the records.
  std::vector<ConfigHistoryRecord> apply(std::string_view group, Own& own,
                                         const std::vector<ConfigEdit>& edits,
                                         const std::string& author, WallMs wall_ms);
  void remember(Own& own, std::vector<ConfigHistoryRecord> records);
  // Serves this hub's keys over the upper copy, under `version` or, when
  // nullopt, under a version issued only if what is served changes.
  void publish(std::string_view group, std::optional<std::uint64_t> version);
  Own& own(std::string_view group);

  ConfigIdentity self_;
  ConfigLimits limits_;
  ServedConfig served_;
  std::map<std::string, Own, std::less<>> own_;
  std::map<std::string, ConfigEntries, std::less<>> upper_;
};

}  // namespace cascade::hub
