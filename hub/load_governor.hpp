#pragma once
// Slows the fleet down when the hub's serving thread falls behind, instead of
// letting frames queue (protocol section 5.17).
//
// A hub grants every node its lease, and since revision 7 its interval: the
// one lever that lowers the offered load at its source. The governor keeps a
// stretch factor (1, 2, 4, ... up to max_stretch) that the core multiplies
// the interval and the lease it grants by. It is fed once per pass of the
// serving loop with how long the loop was busy, whether the pass ended with
// frames still queued and how many beats it has served, and judges per window:
//
//   - saturated for two windows in a row (frames left queued at the end of
//     most passes, or busy nearly all the time): double the stretch, then
//     wait one interval of the old grant (every node has beaten once and
//     taken the new one by then) before doubling again;
//   - calm for a whole granted interval, at a load low enough that twice it
//     would still leave headroom: halve it. The load is the beats served
//     per second against the rate served while saturated (the capacity as
//     measured, the work of ZeroMQ's I/O thread and the machine's other
//     load included); the loop's busy time alone undercounts it.
//
// Deterministic and clock-free: the adapter (hub/hub_server.cpp) measures the
// time and passes it in.

#include <cstdint>
#include <optional>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

struct LoadGovernorConfig {
  // 1 turns the governor off: replies never grant an interval.
  std::uint32_t max_stretch = 8;
  Duration window{200};  // passes are judged in windows this long
  // A window is saturated when at least this share of its passes ended with
  // frames queued, or the loop was busy at least `saturated_busy` of it.
  double saturated_backlog_share = 0.5;
  double saturated_busy = 0.95;
  // Halved only below this share of the capacity (beats per second served
  // while saturated; before that is known, of the loop's time busy): at
  // half the stretch the load doubles, and twice this must stay clear of
  // saturation.
  double calm_share = 0.35;
  // A loop busy less than this is calm whatever it serves: what saturated it
  // may not have been renewals (a registration wave, a flood of queries),
  // and the capacity measured then says little of them. (Low: the loop's
  // busy time misses ZeroMQ's I/O thread, about as busy as it.)
  double idle_busy = 0.2;
  // A halving the load undid (saturated again within two of the intervals it
  // shortened) is tried again after a calm twice as long each time, up to
  // this: a fleet whose own interval is far below the hub's comes back at
  // many times the load when its grant shortens, not twice.
  Duration max_relax_hold{std::chrono::minutes(5)};
  // Consecutive saturated windows before the first doubling: a burst (a
  // registration wave, a compaction) is served from the queue, not by
  // slowing the whole fleet.
  std::uint32_t saturated_windows = 2;
};

class LoadGovernor {
 public:
  LoadGovernor(const LoadGovernorConfig& config, Duration beat_interval);

  // One pass of the serving loop that ended at `now`: `busy` of it was spent
  // working (not waiting in poll), `backlog` says frames were left queued,
  // `beats` is the count of beats handled since the start and `shed` of
  // frames shed (protocol section 5.18; running totals). A window in which
  // any frame was shed is saturated: the hub refused work. Microseconds:
  // most passes of a loop that keeps up take less than one.
  void on_pass(MonoTime now, std::chrono::microseconds busy, bool backlog, std::uint64_t beats,
               std::uint64_t shed = 0);

  // A restarted hub's fleet still holds the stretch the crashed hub granted
  // (hub/granted_stretch.hpp): start from it, so that the first replies do
  // not tell every node to beat that many times as often at once. It is
  // relaxed, as any stretch, after a calm granted interval.
  void resume(MonoTime now, std::uint32_t stretch);

  std::uint32_t stretch() const { return stretch_; }
  // The interval the hub grants: 0 while unstretched (nodes keep their own).
  Duration granted_interval() const;

  struct Counters {
    std::uint64_t stretched = 0;  // times the stretch was doubled
    std::uint64_t relaxed = 0;    // times it was halved
  };
  const Counters& counters() const { return counters_; }

 private:
  void close_window(MonoTime now);
  bool saturated(Duration length) const;
  bool calm(Duration length, double beats_per_second) const;
  void watch_last_halving(MonoTime now, bool doubling);
  void change_stretch(MonoTime now, std::uint32_t to);
  Duration interval_at(std::uint32_t stretch) const { return beat_interval_ * stretch; }

  LoadGovernorConfig config_;
  Duration beat_interval_;
  std::uint32_t stretch_ = 1;
  MonoTime window_start_{};
  bool started_ = false;
  std::chrono::microseconds busy_{0};
  std::uint32_t passes_ = 0;
  std::uint32_t backlogged_ = 0;
  std::uint64_t beats_ = 0;            // the running total at the last pass
  std::uint64_t beats_at_window_ = 0;  // ... when the window began
  std::uint64_t shed_ = 0;             // frames shed: the running total at the last pass
  std::uint64_t shed_at_window_ = 0;   // ... when the window began
  double capacity_ = 0;                // beats per second served while saturated (smoothed)
  std::uint32_t saturated_in_a_row_ = 0;
  // The effect of the last change is judged only after it: by then every
  // node has beaten once at the interval it held and taken the new grant.
  MonoTime settled_at_{};
  std::optional<MonoTime> calm_since_;
  // The calm a halving needs beyond one granted interval, and until when the
  // last halving is watched for a saturation it caused.
  Duration relax_hold_{0};
  std::optional<MonoTime> relax_watched_until_;
  Counters counters_;
};

}  // namespace cascade::hub
