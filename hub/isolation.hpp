#pragma once
// Fast-fail isolation: callers report the provider addresses their calls
// failed on, and an instance enough callers agree about is taken out of
// every consumer's list for a while, well before its lease would tell.
//
// Why these rules:
// - Quorum: one caller's bad network is not the provider's fault, so it takes
//   `min_reporters` distinct callers, or `min_reports` failures in all (one
//   caller hammering a dead address), within `window`.
// - Isolation is not death: the instance keeps its lease and comes back on
//   its own after an isolation time that grows with each repeat while on
//   probation (capped, jittered so a fleet's isolations do not end together).
//   Neither a fresh beat nor a success ends it early, unless the policy says
//   so for a restarted provider (`readmit_on_restart`).
// - Cap: never more than `max_isolated_share` of a service's UP instances. A
//   storm of reports (the callers' own network failing) must not empty a
//   service; every isolation the cap held back is counted.
//
// Sans-IO: time comes in as `now`; jitter comes from an injected Rng.

#include <cstdint>
#include <deque>
#include <list>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/common/random.hpp"

namespace cascade::hub {

struct IsolationPolicy {
  bool enabled = true;
  std::uint32_t min_reporters = 2;  // distinct callers within the window isolate ...
  std::uint32_t min_reports = 5;    // ... or this many failures from anyone
  // ... reported by at least this many distinct callers. 1 lets a single
  // caller isolate by volume; a hub with keys uses 2, so that one
  // compromised key cannot isolate anything alone (docs/security.md).
  std::uint32_t min_reporters_for_volume = 1;
  Duration window{10'000};
  Duration base_isolation{10'000};  // the first isolation of an instance
  double growth = 2.0;              // each isolation again within probation lasts this much longer
  Duration max_isolation{std::chrono::minutes(5)};
  double jitter = 0.1;                // ±10% on every isolation time
  Duration probation{60'000};         // after readmission: another isolation then grows
  double max_isolated_share = 0.5;    // of a service's UP instances, rounded down
  bool readmit_on_restart = false;    // a provider that restarted (new epoch) comes back at once
  std::size_t max_tracked = 100'000;  // instances with recent reports; the oldest are forgotten
};

// "" when the policy is usable, else what is wrong with it.
std::string check_isolation_policy(const IsolationPolicy& policy);

// The service's counts the cap is computed from.
struct ServiceLoad {
  std::uint32_t up = 0;        // UP instances, isolated ones included
  std::uint32_t isolated = 0;  // of them, isolated now
};

enum class ReportVerdict : std::uint8_t {
  kCounted,   // below the quorum
  kIsolate,   // the quorum is reached: isolate it now
  kCapped,    // the quorum is reached but the service's cap holds it back
  kIsolated,  // already isolated
  kDisabled,  // isolation is switched off
};

struct ReportOutcome {
  ReportVerdict verdict = ReportVerdict::kCounted;
  Duration isolation{0};  // kIsolate: for how long
  std::string reason;     // kIsolate: for humans (Instance::health_reason)
};

struct IsolationCounters {
  std::uint64_t reports = 0;  // failures counted (sum of signal counts)
  std::uint64_t isolations = 0;
  std::uint64_t readmissions = 0;
  std::uint64_t capped = 0;     // quorum reached but the cap held the isolation back
  std::uint64_t forgotten = 0;  // tracked instances dropped to stay within max_tracked
};

class IsolationTracker {
 public:
  IsolationTracker(IsolationPolicy policy, std::uint64_t rng_seed);

  // One failure signal about an instance (count failures from one reporter).
  ReportOutcome on_report(MonoTime now, const proto::InstanceKey& target,
                          const std::string& reporter, std::uint32_t count, ServiceLoad load);
  // Isolations that ended by now: readmit these (each on probation).
  std::vector<proto::InstanceKey> due(MonoTime now);
  std::optional<MonoTime> next_deadline() const;

  // Lifts an isolation now (an operator, or a restarted provider under
  // readmit_on_restart). True if it was isolated.
  bool readmit(MonoTime now, const proto::InstanceKey& target);
  // The instance left the registry: nothing about it is kept.
  void forget(const proto::InstanceKey& target);

  bool is_isolated(const proto::InstanceKey& target) const;
  // The isolations in force, soonest to end first: fn(instance, ends_at)
  // until it returns false. Costs what it lists (the hub's admin API).
  template <typename Fn>
  void for_each_isolation(Fn&& fn) const {
    for (const auto& [ends_at, target] : ends_)
      if (!fn(target, ends_at)) return;
  }
  std::size_t isolation_count() const { return ends_.size(); }
  const IsolationPolicy& policy() const { return policy_; }
  const IsolationCounters& counters() const { return counters_; }
  std::size_t tracked() const { return targets_.size(); }

 private:
  struct Report {
    MonoTime at;
    std::string reporter;
    std::uint32_t count = 1;
  };
  struct Target {
    std::deque<Report> recent;  // within the window, oldest first
    std::optional<MonoTime> isolated_until;
    std::uint32_t strikes = 0;  // isolations in a row, each within probation of the last
    MonoTime probation_until{};
    MonoTime last_report{};
    std::list<proto::InstanceKey>::iterator recency;  // its place in recency_
  };

  void prune(MonoTime now, Target& t) const;
  bool quorum(const Target& t, std::uint32_t& reporters, std::uint32_t& failures) const;
  Duration isolation_time(std::uint32_t strikes);
  void make_room();
  // Drops targets with nothing left to remember (no report in the window,
  // not isolated, probation over), least recently reported first, a bounded
  // number per call: memory follows the reports of the last window.
  void forget_quiet(MonoTime now);
  void erase(std::map<proto::InstanceKey, Target>::iterator it);
  static bool can_isolate_one_more(ServiceLoad load, double share);

  IsolationPolicy policy_;
  Rng rng_;
  std::map<proto::InstanceKey, Target> targets_;
  std::list<proto::InstanceKey> recency_;                   // least recently reported first
  std::set<std::pair<MonoTime, proto::InstanceKey>> ends_;  // active isolations by end time
  IsolationCounters counters_;
};

}  // namespace cascade::hub
