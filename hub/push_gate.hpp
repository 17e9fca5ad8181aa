#pragma once
// Decides when and to whom a hub pushes urgent updates between beats.
//
// An isolation (or readmission) should reach every consumer of the service
// within milliseconds, not at its next beat. Why these rules:
// - Coalescing: the first change arms a short timer (`delay`); everything
//   that changes until it fires goes out together, one DownBeat per consumer.
// - Storm cap: at most `max_per_second` pushes per second across all
//   consumers (a token bucket, so a quiet hub can push a burst at once).
//   Consumers over the cap are not lost: their next beat brings the change.
// - The notify switch: with it on, only `share_percent` of a service's
//   consumers are pushed to per flush, rotating, so during a storm the hub
//   spends a bounded share of its work on pushes and the rest learn by beat.
//
// Sans-IO: time comes in as `now`.

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

struct PushConfig {
  Duration delay{5};                      // coalescing window after the first change
  std::uint32_t max_per_second = 50'000;  // across all consumers; 0 = never push
  bool notify_switch = false;             // on: push to only share_percent of consumers
  std::uint32_t share_percent = 100;      // 1..100, used while the switch is on
};

// "" when usable, else what is wrong.
std::string check_push_config(const PushConfig& config);

struct PushCounters {
  std::uint64_t flushes = 0;
  std::uint64_t sent = 0;       // consumers pushed to
  std::uint64_t over_rate = 0;  // consumers skipped by the per-second cap
  std::uint64_t by_switch = 0;  // consumers skipped by the notify switch
};

// `Key` identifies a service (the hub uses its registry entry's address).
template <typename Key>
class PushGate {
 public:
  explicit PushGate(PushConfig config) : config_(config) {}

  void mark(MonoTime now, Key service) {
    if (pending_.insert(service).second && !due_) due_ = now + config_.delay;
  }
  std::optional<MonoTime> next_deadline() const { return due_; }

  // The services to push now (empty before the coalescing timer fired).
  std::vector<Key> take(MonoTime now) {
    if (!due_ || now < *due_) return {};
    due_.reset();
    ++rotation_;
    ++counters_.flushes;
    refill(now);
    std::vector<Key> out(pending_.begin(), pending_.end());
    pending_.clear();
    return out;
  }

  // Whether the `ordinal`-th consumer of a service gets this flush's push.
  bool admit(std::size_t ordinal) {
    if (config_.notify_switch && (ordinal + rotation_) % 100 >= config_.share_percent) {
      ++counters_.by_switch;
      return false;
    }
    if (tokens_ < 1.0) {
      ++counters_.over_rate;
      return false;
    }
    tokens_ -= 1.0;
    ++counters_.sent;
    return true;
  }

  void set_switch(bool on, std::uint32_t share_percent) {
    config_.notify_switch = on;
    config_.share_percent = share_percent;
  }
  const PushConfig& config() const { return config_; }
  const PushCounters& counters() const { return counters_; }

 private:
  void refill(MonoTime now) {
    const double rate = static_cast<double>(config_.max_per_second);
    if (last_refill_) {
      const auto elapsed = static_cast<double>((now - *last_refill_).count()) / 1000.0;
      tokens_ = std::min(rate, tokens_ + elapsed * rate);
    } else {
      tokens_ = rate;
    }
    last_refill_ = now;
  }

  PushConfig config_;
  std::unordered_set<Key> pending_;
  std::optional<MonoTime> due_;
  std::optional<MonoTime> last_refill_;
  double tokens_ = 0;
  std::uint64_t rotation_ = 0;
  PushCounters counters_;
};

}  // namespace cascade::hub
