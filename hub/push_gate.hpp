#pragma once
// Decides when and to whom a hub pushes urgent updates between beats.
//
// An isolation (or readmission), or a config change, should reach every
// consumer of the service or follower of the group within milliseconds, not
// at its next beat. Why these rules:
// - Coalescing: the first change arms a short timer (`delay`); everything
//   that changes until it fires goes out together, one DownBeat per consumer.
//   Each kind of push has a gate of its own (PushGate): service lists and
//   config groups are marked, timed and flushed apart.
// - Repeat gap: a key pushed at t is not flushed again before t +
//   `repeat_gap`. A lone change still goes out after `delay`; a key that keeps
//   changing (a tenth of a large service expiring over an interval) is pushed
//   at most once per gap, each push carrying everything since the last, so a
//   mass change costs consumers × (duration / gap) pushes, not one per tick.
//   Every kind of change shares it: an isolation of a service pushed within
//   the last gap waits for the gap's end (at most `repeat_gap` later).
// - Storm cap: at most `max_per_second` pushes per second across all
//   consumers (a token bucket, so a quiet hub can push a burst at once).
//   Consumers over the cap are not lost: their next beat brings the change.
// - The notify switch: with it on, only `share_percent` of a service's
//   consumers (or a group's followers) are pushed to per flush, rotating, so
//   during a storm the hub spends a bounded share of its work on pushes and
//   the rest learn by beat.
// The cap and the switch are the hub's, not a gate's: one PushBudget, which
// every gate's flush draws from, so the switch holds back every kind of push
// and all kinds together stay within max_per_second.
//
// Sans-IO: time comes in as `now`.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

struct PushConfig {
  Duration delay{5};                      // coalescing window after the first change
  std::uint32_t max_per_second = 50'000;  // across all consumers; 0 = never push
  bool notify_switch = false;             // on: push to only share_percent of consumers
  std::uint32_t share_percent = 100;      // 1..100, used while the switch is on
  Duration repeat_gap{100};               // a key pushed is not flushed again within
};

// "" when usable, else what is wrong.
std::string check_push_config(const PushConfig& config);

// Per gate: what its flushes pushed and held back.
struct PushCounters {
  std::uint64_t flushes = 0;
  std::uint64_t sent = 0;       // consumers pushed to
  std::uint64_t over_rate = 0;  // consumers skipped by the per-second cap
  std::uint64_t by_switch = 0;  // consumers skipped by the notify switch
};

// The notify switch and the per-second cap of one hub, shared by its gates.
class PushBudget {
 public:
  enum class Verdict { kPush, kOverRate, kBySwitch };

  explicit PushBudget(PushConfig config) : config_(config) {}

  // Adds the tokens earned since the last refill (a full bucket the first time).
  void refill(MonoTime now);
  // Whether the `ordinal`-th consumer of a key gets a push in a flush whose
  // rotation is `rotation` (the switch's share moves with it); a push takes
  // a token.
  Verdict admit(std::size_t ordinal, std::uint64_t rotation);

  void set_switch(bool on, std::uint32_t share_percent) {
    config_.notify_switch = on;
    config_.share_percent = share_percent;
  }
  const PushConfig& config() const { return config_; }

 private:
  PushConfig config_;
  std::optional<MonoTime> last_refill_;
  double tokens_ = 0;
};

// `Key` identifies what changed: a service (the hub uses its registry
// entry's address) or a config group (its name).
template <typename Key>
class PushGate {
 public:
  explicit PushGate(const PushConfig& config)
      : delay_(config.delay), repeat_gap_(config.repeat_gap) {}

  void mark(MonoTime now, Key key) {
    if (pending_.contains(key)) return;
    auto due = now + delay_;
    if (auto last = pushed_.find(key); last != pushed_.end())
      due = std::max(due, last->second + repeat_gap_);
    pending_.emplace(std::move(key), due);
    if (!due_ || due < *due_) due_ = due;
  }
  std::optional<MonoTime> next_deadline() const { return due_; }

  // The keys to push now (empty before the earliest one is due); `budget` is
  // topped up for the flush. Every pending key the repeat gap does not hold
  // goes out with the one that fell due, so changes a few milliseconds apart
  // still reach a consumer in one push.
  std::vector<Key> take(MonoTime now, PushBudget& budget) {
    if (!due_ || now < *due_) return {};
    forget_pushed_before(now - repeat_gap_);
    std::vector<Key> out;
    due_.reset();
    for (auto it = pending_.begin(); it != pending_.end();) {
      if (it->second > now && pushed_.contains(it->first)) {  // held by the gap
        if (!due_ || it->second < *due_) due_ = it->second;
        ++it;
        continue;
      }
      out.push_back(std::move(it->first));
      it = pending_.erase(it);
    }
    ++rotation_;
    ++counters_.flushes;
    budget.refill(now);
    return out;
  }

  // The flush of `key` at `now` pushed something: its next flush waits for
  // the repeat gap. (A flush that found every consumer current does not
  // delay the next change, such as a first answer that waited for an upper
  // tier's copy.)
  void pushed(MonoTime now, const Key& key) { pushed_[key] = now; }

  // `key` stops existing (a service entry freed): a pending flush of it and
  // its repeat gap go. The earliest due time may stay earlier than needed;
  // a flush at it finds nothing and recomputes it.
  void forget(const Key& key) {
    pending_.erase(key);
    pushed_.erase(key);
  }

  // Whether the `ordinal`-th consumer of a key gets this flush's push, as
  // `budget` (the hub's, shared by every gate) decides.
  bool admit(PushBudget& budget, std::size_t ordinal) {
    switch (budget.admit(ordinal, rotation_)) {
      case PushBudget::Verdict::kPush:
        ++counters_.sent;
        return true;
      case PushBudget::Verdict::kOverRate:
        ++counters_.over_rate;
        return false;
      case PushBudget::Verdict::kBySwitch:
        ++counters_.by_switch;
        return false;
    }
    return false;
  }

  const PushCounters& counters() const { return counters_; }

 private:
  // Only keys pushed within the last gap can delay a mark.
  void forget_pushed_before(MonoTime cutoff) {
    std::erase_if(pushed_, [cutoff](const auto& f) { return f.second <= cutoff; });
  }

  Duration delay_;
  Duration repeat_gap_;
  std::unordered_map<Key, MonoTime> pending_;  // key -> when it is due
  std::unordered_map<Key, MonoTime> pushed_;   // key -> its last push, within the gap
  std::optional<MonoTime> due_;                // the earliest pending key's
  std::uint64_t rotation_ = 0;
  PushCounters counters_;
};

}  // namespace cascade::hub
