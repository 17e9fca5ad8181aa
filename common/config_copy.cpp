#include "cascade/common/config_copy.hpp"

#include <algorithm>

namespace cascade::proto {

namespace {
// The oldest a stale group is taken to be: a year.
constexpr std::uint64_t kMaxStaleAgeMs = 365ull * 24 * 3600 * 1000;
}  // namespace

void ConfigCopy::use(MonoTime now, std::string_view group) {
  auto it = held_.find(group);
  if (it == held_.end()) {
    it = held_.emplace(std::string(group), HeldConfig{}).first;
    it->second.followed_since = now;
  }
  it->second.last_used = now;
}

void ConfigCopy::pin(MonoTime now, std::string_view group) {
  pinned_.emplace(group);
  use(now, group);
}

std::vector<ConfigUse> ConfigCopy::uses() const {
  std::vector<const std::pair<const std::string, HeldConfig>*> all;
  all.reserve(held_.size());
  for (const auto& entry : held_)
    all.push_back(&entry);
  if (all.size() > kMaxConfigUsesPerBeat) {
    // Past the bound the most recently used win; ties by name, so every
    // replay declares the same groups.
    std::stable_sort(all.begin(), all.end(), [](const auto* a, const auto* b) {
      return a->second.last_used > b->second.last_used;
    });
    all.resize(kMaxConfigUsesPerBeat);
    std::sort(all.begin(), all.end(),
              [](const auto* a, const auto* b) { return a->first < b->first; });
  }
  std::vector<ConfigUse> out;
  out.reserve(all.size());
  for (const auto* entry : all) {
    const auto& held = entry->second;
    out.push_back({entry->first, held.version_trusted ? held.version : 0});
  }
  return out;
}

ConfigApplied ConfigCopy::apply(MonoTime now, const std::vector<ConfigUpdate>& updates) {
  ConfigApplied applied;
  for (const auto& update : updates) {
    auto it = held_.find(update.group);
    if (it == held_.end()) continue;  // no longer followed: nothing to keep
    if (apply_one(now, it->second, update, applied.missed_base))
      applied.changed.push_back(update.group);
  }
  return applied;
}

bool ConfigCopy::apply_one(MonoTime now, HeldConfig& held, const ConfigUpdate& update,
                           bool& missed_base) {
  const bool first = !held.received;
  switch (update.kind) {
    case UpdateKind::kDelta: {
      // Already there: a push that crossed the beat this delta answers.
      if (held.received && held.version_trusted && held.version == update.version) {
        held.confirmed_at = now;
        return false;
      }
      if (!held.received || !held.version_trusted || held.version != update.from_version) {
        held.version_trusted = false;  // declare 0 from now on: the hub sends it whole
        missed_base = true;
        return false;
      }
      bool changed = false;
      for (const auto& key : update.removed)
        changed |= held.entries.erase(key) > 0;
      for (const auto& entry : update.upserts) {
        auto& slot = held.entries[entry.key];
        changed |= !(slot == entry);
        slot = entry;
      }
      held.version = update.version;
      held.gone = held.entries.empty();  // a group set again after all its keys went
      held.confirmed_at = now;
      held.source_stale = false;
      held.snapshot_wall_ms = 0;
      return changed;
    }
    case UpdateKind::kFull:
    case UpdateKind::kGone: {
      ConfigValues entries;
      if (update.kind == UpdateKind::kFull)
        for (const auto& entry : update.upserts)
          entries.insert_or_assign(entry.key, entry);
      const bool changed = first || entries != held.entries;
      held.entries = std::move(entries);
      held.version = update.version;
      held.version_trusted = true;
      held.received = true;
      held.gone = update.kind == UpdateKind::kGone;
      held.confirmed_at = now;
      held.source_stale = false;
      held.snapshot_wall_ms = 0;
      return changed;
    }
  }
  return false;
}

void ConfigCopy::confirm(MonoTime now, const std::vector<ConfigUse>& declared,
                         const std::vector<StaleConfig>& stale) {
  for (const auto& use : declared) {
    auto it = held_.find(use.group);
    // Only a group the hub has answered for: "current" says nothing of a
    // group whose first answer is still to come.
    if (it != held_.end() && it->second.received && it->second.version_trusted &&
        it->second.version == use.version) {
      it->second.confirmed_at = now;
      it->second.source_stale = false;
    }
  }
  for (const auto& s : stale) {
    auto it = held_.find(s.group);
    if (it == held_.end() || !it->second.received) continue;
    // An age from the wire is any 64-bit number: bounded, so the subtraction
    // cannot overflow.
    const auto age = std::min<std::uint64_t>(s.age_ms, kMaxStaleAgeMs);
    it->second.confirmed_at = now - Duration{static_cast<Duration::rep>(age)};
    it->second.source_stale = true;
  }
}

std::vector<std::string> ConfigCopy::expire(MonoTime now) {
  std::vector<std::string> dropped;
  for (auto it = held_.begin(); it != held_.end();) {
    if (!pinned_.contains(it->first) && now - it->second.last_used >= ttl_) {
      dropped.push_back(it->first);
      it = held_.erase(it);
    } else {
      ++it;
    }
  }
  return dropped;
}

void ConfigCopy::distrust() {
  for (auto& [group, held] : held_)
    held.version_trusted = false;
}

void ConfigCopy::restore(MonoTime now, std::string_view group, std::uint64_t version,
                         ConfigValues entries, bool gone, WallMs confirmed_wall_ms) {
  auto& held = held_[std::string(group)];
  held.version = version;
  held.entries = std::move(entries);
  held.received = true;
  held.gone = gone;
  held.version_trusted = false;
  held.last_used = now;
  held.followed_since = now;
  held.snapshot_wall_ms = confirmed_wall_ms;
}

const HeldConfig* ConfigCopy::find(std::string_view group) const {
  auto it = held_.find(group);
  return it == held_.end() ? nullptr : &it->second;
}

}  // namespace cascade::proto
