#pragma once
// The config centre as a hub serves it: the groups (hub/config_groups.hpp),
// who follows each, what a beat's reply carries, and the pushes a change
// makes between beats. Sans-IO, owned by HubCore.
//
// Following. A node follows exactly the groups its last beat declared
// (UpBeat::configs, or their digest standing for the list last sent: see
// held_by); a group it stops declaring is dropped at that beat, as service
// uses are. Each follower's held version is what the hub last sent
// it (or, before that, what it declared), so a push is a delta from there.
//
// First answers. A follower's first beat for a group (declared at version 0)
// is answered even when no tier has the group: `gone` at kNeverServedVersion
// (hub/served_config.hpp), so it knows it waits for nothing. What a beat
// declares is what the follower holds, always: a reply overtaken by a push
// leaves it on an older version, which its next beat declares and the hub
// repairs. A tiered hub may not know yet: while its upper
// tier's copy of the group is on its way (the beat's `awaits_upper` says so),
// the group is left out of the reply and the follower hears by push once the
// copy came (set_upper), whatever it brought.
//
// Pushes. A change marks its group in a PushGate of its own (its coalescing
// delay: hub/push_gate.hpp); when the gate fires, every follower of every
// marked group gets one pushed DownBeat with the updates of all its marked
// groups, as far as the hub's PushBudget allows: the notify switch and the
// per-second cap are the hub's, shared with the service lists' pushes, and
// passed in at each flush. Followers held back learn at their next beat.
// Groups go in name order and followers in node-id order, so a capped flush
// reaches the same followers in every replay.

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/string_map.hpp"
#include "cascade/hub/config_groups.hpp"
#include "cascade/hub/metrics.hpp"
#include "cascade/hub/push_gate.hpp"

namespace cascade::hub {

class ConfigCentre {
 public:
  // `push`: how changes coalesce before they are pushed (its delay and repeat gap).
  ConfigCentre(ConfigIdentity self, std::uint64_t hub_epoch, const PushConfig& push,
               ConfigLimits limits = {});

  // Whether the upper tier's copy of a group is still on its way (empty: no
  // upper tier, nothing to wait for).
  using AwaitsUpper = std::function<bool(std::string_view group)>;

  // The updates a beat's reply carries for the groups it declared; the node
  // follows exactly these groups from now on (none: it follows nothing).
  // Groups `awaits_upper` names are left out (see "First answers").
  void on_beat(std::string_view node, const std::vector<proto::ConfigUse>& uses,
               std::vector<proto::ConfigUpdate>& out, const AwaitsUpper& awaits_upper = {});
  // What the hub believes the node holds: the groups its last list declared,
  // each at the version last sent to it (or declared). A beat that sends the
  // digest of its list instead (UpBeat::configs_digest) stands for this when
  // the digests match.
  std::vector<proto::ConfigUse> held_by(std::string_view node) const;
  // A beat's digest did not match held_by(): its reply asks for the list.
  void count_list_requested() { ++counters_.lists_requested; }
  // The node is gone (expired, deregistered): it follows nothing.
  void forget(std::string_view node);

  // An operator's edit or rollback of this hub's keys: on a change its
  // followers get a push and the records wait in take_records().
  ConfigGroups::Outcome edit(MonoTime now, std::string_view group,
                             const std::vector<ConfigEdit>& edits, const std::string& author,
                             WallMs wall_ms);
  ConfigGroups::Outcome rollback(MonoTime now, std::string_view group, std::uint64_t version,
                                 const std::string& author, WallMs wall_ms);
  // The upper tier's copy of a group changed, or came (nullopt: it has none).
  void set_upper(MonoTime now, std::string_view group, std::optional<ConfigEntries> entries);

  // Followers to push to now, each with its updates (empty before the gate
  // fires), as many as `budget` (the hub's, shared with the service lists'
  // pushes) admits. Groups `awaits_upper` names wait for set_upper, which
  // marks them again: a first answer is the whole group, never this tier's
  // keys alone.
  std::map<std::string, std::vector<proto::ConfigUpdate>> take_pushes(
      MonoTime now, PushBudget& budget, const AwaitsUpper& awaits_upper = {});
  std::optional<MonoTime> next_deadline() const { return push_gate_.next_deadline(); }
  // History records of the changes since the last call, to persist, in the
  // order they were made.
  std::vector<ConfigHistoryRecord> take_records();
  // Stamps the commit's wall time on `records` (the last take_records()) and
  // on the same records in the groups' history, which `config history` shows.
  void stamp(std::vector<ConfigHistoryRecord>& records, WallMs wall_ms);
  // Records of a batch that failed to commit: taken again first, in order.
  void requeue_records(const std::vector<ConfigHistoryRecord>& failed);
  // A restart: this hub's keys and their history as the store kept them
  // (HubSnapshot::config_entries, config_history), group by group.
  void restore(const std::vector<ConfigEntryRecord>& entries,
               const std::vector<ConfigHistoryRecord>& history);

  const ConfigGroups& groups() const { return groups_; }
  // Groups followed, with how many nodes follow each.
  std::size_t followers(std::string_view group) const;
  std::size_t subscriptions() const { return subscriptions_; }
  const ConfigCentreCounters& counters() const { return counters_; }
  // A reply named a group stale (HubCore knows the upper tier's copy's age).
  void count_served_stale() { ++counters_.served_stale; }
  // What this centre's flushes pushed and held back (by the shared budget).
  const PushCounters& push_counters() const { return push_gate_.counters(); }

 private:
  // Adds the update for a holder of `held`, if it needs one; the version it then holds.
  std::uint64_t add_update(std::string_view group, std::uint64_t held,
                           std::vector<proto::ConfigUpdate>& out);
  // Some follower does not hold the version served (or waits for its first answer).
  bool followers_behind(std::string_view group) const;
  // Makes the node follow exactly the groups of `uses` (held versions are
  // set by on_beat).
  void follow(std::string_view node, const std::vector<proto::ConfigUse>& uses);
  ConfigGroups::Outcome changed(MonoTime now, std::string_view group,
                                ConfigGroups::Outcome outcome);

  ConfigGroups groups_;
  PushGate<std::string> push_gate_;
  // group -> follower -> the version it holds.
  std::map<std::string, std::map<std::string, std::uint64_t, std::less<>>, std::less<>> followers_;
  StringMap<std::vector<std::string>> followed_by_;  // node -> groups
  std::size_t subscriptions_ = 0;
  std::vector<ConfigHistoryRecord> records_;
  ConfigCentreCounters counters_;
};

}  // namespace cascade::hub
