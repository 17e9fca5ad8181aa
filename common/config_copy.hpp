#pragma once
// A subscriber's copy of the config groups it follows, kept current by the
// ConfigUpdates of its hub (schemas/protocol-v1.md, section 5.16). An agent
// holds one for its application; a hub's uplink holds one of the tier above.
// Sans-IO: it reads no clock.
//
//   ConfigCopy copy(Duration{300'000});          // unused groups go after 5 minutes
//   copy.use(now, "orders.limits");              // follow it: the next beat declares it
//   beat.configs = copy.uses();                  // [group, version held]
//   auto changed = copy.apply(now, down.config_updates);   // from replies and pushes
//
// Updates apply as ServiceUpdates do: a delta only on exactly the version held
// (otherwise the copy declares version 0 from then on, which no hub issues, so
// the hub sends the whole group); full replaces; gone empties (no tier has the
// group). A beat's reply confirms every group the beat declared, changed or not.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::proto {

using ConfigValues = std::map<std::string, ConfigEntry, std::less<>>;

struct HeldConfig {
  std::uint64_t version = 0;  // 0: nothing received yet
  ConfigValues entries;
  bool received = false;  // a hub has answered for the group (entries, or gone)
  bool gone = false;      // the hub said no tier has the group
  // False when the version may not be one the hub can continue from (a delta
  // missed its base, or the copy came from a snapshot): declared as 0.
  bool version_trusted = true;
  // When the tier that holds the group last confirmed it: the last reply
  // that covered it, or earlier by the age a reply gave for a stale group.
  MonoTime confirmed_at{};
  bool source_stale = false;  // the last reply named it stale (its upper tier is cut off)
  MonoTime last_used{};
  MonoTime followed_since{};  // when the copy started following it (how long an answer takes)
  // Restored from the agent's snapshot and not confirmed by a hub since: the
  // wall time a hub last confirmed it (0 otherwise). Its age is wall time:
  // the monotonic clock of the run that saved it is gone.
  WallMs snapshot_wall_ms = 0;
};

struct ConfigApplied {
  std::vector<std::string> changed;  // groups whose values changed (or that arrived)
  bool missed_base = false;          // a delta did not apply: worth a beat soon
};

class ConfigCopy {
 public:
  explicit ConfigCopy(Duration unused_ttl) : ttl_(unused_ttl) {}

  // Follow `group` (from now on the beats declare it) and mark it used.
  void use(MonoTime now, std::string_view group);
  // Follow `group` whether used or not (it never expires).
  void pin(MonoTime now, std::string_view group);
  bool follows(std::string_view group) const { return held_.find(group) != held_.end(); }

  // What a beat declares: every followed group with the version held (0 when
  // not trusted). At most kMaxConfigUsesPerBeat, the most recently used first
  // past that bound.
  std::vector<ConfigUse> uses() const;

  // The updates of a reply or a push.
  ConfigApplied apply(MonoTime now, const std::vector<ConfigUpdate>& updates);
  // A reply to a beat that declared `declared`: each is current as of now,
  // but for those the reply names `stale`, which are as old as it says.
  void confirm(MonoTime now, const std::vector<ConfigUse>& declared,
               const std::vector<StaleConfig>& stale = {});

  // Groups not used for the TTL (and not pinned) are dropped; their names.
  std::vector<std::string> expire(MonoTime now);

  // The versions held were issued by another hub than the one answering from
  // now on (the subscriber moved): the beats declare 0, so each group comes
  // whole once. The values are kept and served meanwhile.
  void distrust();

  // A group restored from a snapshot, last confirmed at `confirmed_wall_ms`:
  // its values, served until a hub answers (its version is not trusted: the
  // first beat asks for the whole group). Followed as if used now.
  void restore(MonoTime now, std::string_view group, std::uint64_t version, ConfigValues entries,
               bool gone = false, WallMs confirmed_wall_ms = 0);

  const HeldConfig* find(std::string_view group) const;
  const std::map<std::string, HeldConfig, std::less<>>& groups() const { return held_; }
  std::size_t size() const { return held_.size(); }

 private:
  // Whether the group's values changed.
  bool apply_one(MonoTime now, HeldConfig& held, const ConfigUpdate& update, bool& missed_base);

  Duration ttl_;
  std::map<std::string, HeldConfig, std::less<>> held_;
  std::set<std::string, std::less<>> pinned_;
};

}  // namespace cascade::proto
