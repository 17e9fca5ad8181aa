#include "cascade/hub/config_centre.hpp"

#include <algorithm>

namespace cascade::hub {

ConfigCentre::ConfigCentre(ConfigIdentity self, std::uint64_t hub_epoch, const PushConfig& push,
                           ConfigLimits limits)
    : groups_(std::move(self), hub_epoch, limits), push_gate_(push) {}

std::uint64_t ConfigCentre::add_update(std::string_view group, std::uint64_t held,
                                       std::vector<proto::ConfigUpdate>& out) {
  auto update = groups_.update_for(group, held);
  if (!update) return held;
  switch (update->kind) {
    case proto::UpdateKind::kFull:
      ++counters_.updates_full;
      break;
    case proto::UpdateKind::kDelta:
      ++counters_.updates_delta;
      break;
    case proto::UpdateKind::kGone:
      ++counters_.updates_gone;
      break;
  }
  out.push_back(std::move(*update));
  return out.back().version;
}

// A beat whose groups are those of the last one only moves the held versions,
// in place: no allocation on the beat path while nothing changes.
void ConfigCentre::on_beat(std::string_view node, const std::vector<proto::ConfigUse>& uses,
                           std::vector<proto::ConfigUpdate>& out, const AwaitsUpper& awaits_upper) {
  follow(node, uses);
  for (const auto& use : uses) {
    auto& held = followers_.find(use.group)->second.find(node)->second;
    // What the node declares is what it holds: an answer that came late (a
    // reply overtaken by a push) is repaired at its next beat.
    held = use.version;
    if (awaits_upper && awaits_upper(use.group)) continue;  // answered by push once the copy came
    held = add_update(use.group, held, out);
  }
}

// The groups a node follows change rarely: the index is rebuilt only when its
// beat declared other groups than last time.
void ConfigCentre::follow(std::string_view node, const std::vector<proto::ConfigUse>& uses) {
  auto known = followed_by_.find(node);
  const bool same_groups =
      known != followed_by_.end() &&
      std::equal(uses.begin(), uses.end(), known->second.begin(), known->second.end(),
                 [](const proto::ConfigUse& use, const std::string& g) { return use.group == g; });
  if (same_groups) return;
  forget(node);
  if (uses.empty()) return;
  known = followed_by_.emplace(std::string(node), std::vector<std::string>{}).first;
  for (const auto& use : uses) {
    if (followers_[use.group].emplace(std::string(node), use.version).second) {
      known->second.push_back(use.group);
      ++subscriptions_;
    }
  }
}

std::vector<proto::ConfigUse> ConfigCentre::held_by(std::string_view node) const {
  std::vector<proto::ConfigUse> held;
  auto known = followed_by_.find(node);
  if (known == followed_by_.end()) return held;
  held.reserve(known->second.size());
  for (const auto& group : known->second)
    held.push_back({group, followers_.find(group)->second.find(node)->second});
  return held;
}

void ConfigCentre::forget(std::string_view node) {
  auto it = followed_by_.find(node);
  if (it == followed_by_.end()) return;
  for (const auto& group : it->second) {
    auto holders = followers_.find(group);
    if (holders == followers_.end()) continue;
    if (auto held = holders->second.find(node); held != holders->second.end()) {
      holders->second.erase(held);
      --subscriptions_;
    }
    if (holders->second.empty()) followers_.erase(holders);
  }
  followed_by_.erase(it);
}

ConfigGroups::Outcome ConfigCentre::changed(MonoTime now, std::string_view group,
                                            ConfigGroups::Outcome outcome) {
  auto* records = std::get_if<std::vector<ConfigHistoryRecord>>(&outcome);
  if (records == nullptr) {
    ++counters_.edits_refused;
    return outcome;
  }
  if (!records->empty()) {
    ++counters_.edits;
    records_.insert(records_.end(), records->begin(), records->end());
    push_gate_.mark(now, std::string(group));
  }
  return outcome;
}

ConfigGroups::Outcome ConfigCentre::edit(MonoTime now, std::string_view group,
                                         const std::vector<ConfigEdit>& edits,
                                         const std::string& author, WallMs wall_ms) {
  return changed(now, group, groups_.edit(group, edits, author, wall_ms));
}

ConfigGroups::Outcome ConfigCentre::rollback(MonoTime now, std::string_view group,
                                             std::uint64_t version, const std::string& author,
                                             WallMs wall_ms) {
  return changed(now, group, groups_.rollback(group, version, author, wall_ms));
}

void ConfigCentre::set_upper(MonoTime now, std::string_view group,
                             std::optional<ConfigEntries> entries) {
  groups_.set_upper(group, std::move(entries));
  // Its followers hear of a change, and those left waiting for the copy of
  // their first answer (see on_beat) hear of it whatever it brought.
  if (followers_behind(group)) push_gate_.mark(now, std::string(group));
}

bool ConfigCentre::followers_behind(std::string_view group) const {
  auto holders = followers_.find(group);
  if (holders == followers_.end()) return false;
  const auto* served = groups_.served(group);
  const auto version = served ? served->version : kNeverServedVersion;
  return std::any_of(holders->second.begin(), holders->second.end(),
                     [version](const auto& holder) { return holder.second != version; });
}

std::map<std::string, std::vector<proto::ConfigUpdate>> ConfigCentre::take_pushes(
    MonoTime now, PushBudget& budget, const AwaitsUpper& awaits_upper) {
  auto groups = push_gate_.take(now, budget);
  std::sort(groups.begin(), groups.end());
  std::map<std::string, std::vector<proto::ConfigUpdate>> pushes;
  for (const auto& group : groups) {
    auto holders = followers_.find(group);
    // A group awaiting its upper copy is marked again by set_upper; if the
    // wait ends otherwise (the upper tier is down), its followers learn at
    // their next beat.
    if (holders == followers_.end() || (awaits_upper && awaits_upper(group))) continue;
    std::size_t ordinal = 0;
    bool sent = false;
    for (auto& [node, held] : holders->second) {
      if (!push_gate_.admit(budget, ordinal++)) continue;
      auto& updates = pushes[node];
      const auto before = updates.size();
      held = add_update(group, held, updates);
      sent = sent || updates.size() > before;
      if (updates.empty()) pushes.erase(node);
    }
    if (sent) push_gate_.pushed(now, group);
  }
  return pushes;
}

std::vector<ConfigHistoryRecord> ConfigCentre::take_records() {
  return std::exchange(records_, {});
}

void ConfigCentre::stamp(std::vector<ConfigHistoryRecord>& records, WallMs wall_ms) {
  std::map<std::string_view, std::size_t> per_group;
  for (auto& r : records) {
    r.wall_ms = wall_ms;
    ++per_group[r.group];
  }
  // Records are taken in the order they were made, so those not yet
  // committed are the newest of each group's history.
  for (const auto& [group, count] : per_group)
    groups_.stamp_latest(group, count, wall_ms);
}

void ConfigCentre::requeue_records(const std::vector<ConfigHistoryRecord>& failed) {
  records_.insert(records_.begin(), failed.begin(), failed.end());
}

void ConfigCentre::restore(const std::vector<ConfigEntryRecord>& entries,
                           const std::vector<ConfigHistoryRecord>& history) {
  struct Stored {
    std::vector<ConfigEntryRecord> entries;
    std::vector<ConfigHistoryRecord> history;
  };
  std::map<std::string, Stored, std::less<>> groups;
  for (const auto& e : entries)
    groups[e.group].entries.push_back(e);
  for (const auto& r : history)
    groups[r.group].history.push_back(r);
  for (auto& [name, stored] : groups)
    groups_.restore(name, std::move(stored.entries), std::move(stored.history));
}

std::size_t ConfigCentre::followers(std::string_view group) const {
  auto it = followers_.find(group);
  return it == followers_.end() ? 0 : it->second.size();
}

}  // namespace cascade::hub
