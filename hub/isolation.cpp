#include "cascade/hub/isolation.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace cascade::hub {

std::string check_isolation_policy(const IsolationPolicy& p) {
  if (p.min_reporters == 0 || p.min_reports == 0)
    return "isolation quorum: reporters and reports must be at least 1";
  if (p.window.count() <= 0) return "isolation window must be positive";
  if (p.base_isolation.count() <= 0 || p.max_isolation < p.base_isolation)
    return "isolation time: base must be positive and not above the maximum";
  // Written so that NaN fails every check.
  if (!(p.growth >= 1.0)) return "isolation growth must be at least 1";
  if (!(p.jitter >= 0.0 && p.jitter < 1.0)) return "isolation jitter must be in [0, 1)";
  if (!(p.max_isolated_share >= 0.0 && p.max_isolated_share <= 1.0))
    return "isolation cap must be a share in [0, 1]";
  if (p.probation.count() < 0) return "isolation probation must not be negative";
  if (p.max_tracked == 0) return "isolation max_tracked must be at least 1";
  return "";
}

IsolationTracker::IsolationTracker(IsolationPolicy policy, std::uint64_t rng_seed)
    : policy_(policy), rng_(rng_seed) {}

ReportOutcome IsolationTracker::on_report(MonoTime now, const proto::InstanceKey& target,
                                          const std::string& reporter, std::uint32_t count,
                                          ServiceLoad load) {
  if (!policy_.enabled) return {ReportVerdict::kDisabled, Duration{0}, {}};
  counters_.reports += count;
  auto [it, fresh] = targets_.try_emplace(target);
  if (fresh) {
    it->second.recency = recency_.insert(recency_.end(), target);
    make_room();
  } else {
    recency_.splice(recency_.end(), recency_, it->second.recency);
  }
  Target& t = it->second;
  t.last_report = now;
  if (t.isolated_until) return {ReportVerdict::kIsolated, Duration{0}, {}};
  t.recent.push_back({now, reporter, count});
  prune(now, t);
  std::uint32_t reporters = 0;
  std::uint32_t failures = 0;
  if (!quorum(t, reporters, failures)) return {ReportVerdict::kCounted, Duration{0}, {}};
  if (!can_isolate_one_more(load, policy_.max_isolated_share)) {
    ++counters_.capped;
    return {ReportVerdict::kCapped, Duration{0}, {}};
  }
  if (now >= t.probation_until) t.strikes = 0;  // a clean probation starts over
  const auto length = isolation_time(t.strikes++);
  t.isolated_until = now + length;
  t.recent.clear();
  ends_.insert({*t.isolated_until, target});
  ++counters_.isolations;
  auto reason = fmt::format("isolated {} ms: {} failures from {} callers in {} ms", length.count(),
                            failures, reporters, policy_.window.count());
  return {ReportVerdict::kIsolate, length, std::move(reason)};
}

void IsolationTracker::prune(MonoTime now, Target& t) const {
  while (!t.recent.empty() && t.recent.front().at + policy_.window <= now)
    t.recent.pop_front();
}

bool IsolationTracker::quorum(const Target& t, std::uint32_t& reporters,
                              std::uint32_t& failures) const {
  std::set<std::string_view> distinct;
  failures = 0;
  for (const auto& r : t.recent) {
    distinct.insert(r.reporter);
    failures += r.count;
  }
  reporters = static_cast<std::uint32_t>(distinct.size());
  return reporters >= policy_.min_reporters ||
         (failures >= policy_.min_reports && reporters >= policy_.min_reporters_for_volume);
}

// base * growth^strikes, capped, then jittered (still capped).
Duration IsolationTracker::isolation_time(std::uint32_t strikes) {
  const double base = static_cast<double>(policy_.base_isolation.count());
  const double cap = static_cast<double>(policy_.max_isolation.count());
  const double grown = std::min(cap, base * std::pow(policy_.growth, strikes));
  const auto jittered = rng_.jittered(Duration{static_cast<std::int64_t>(grown)}, policy_.jitter);
  return std::min(jittered, policy_.max_isolation);
}

bool IsolationTracker::can_isolate_one_more(ServiceLoad load, double share) {
  const auto allowed = static_cast<std::uint32_t>(std::floor(share * load.up));
  return load.isolated + 1 <= allowed;
}

std::vector<proto::InstanceKey> IsolationTracker::due(MonoTime now) {
  forget_quiet(now);
  std::vector<proto::InstanceKey> out;
  while (!ends_.empty() && ends_.begin()->first <= now) {
    auto key = ends_.begin()->second;
    ends_.erase(ends_.begin());
    auto it = targets_.find(key);
    if (it == targets_.end()) continue;
    it->second.isolated_until.reset();
    it->second.probation_until = now + policy_.probation;
    ++counters_.readmissions;
    out.push_back(std::move(key));
  }
  return out;
}

std::optional<MonoTime> IsolationTracker::next_deadline() const {
  if (ends_.empty()) return std::nullopt;
  return ends_.begin()->first;
}

bool IsolationTracker::readmit(MonoTime now, const proto::InstanceKey& target) {
  auto it = targets_.find(target);
  if (it == targets_.end() || !it->second.isolated_until) return false;
  ends_.erase({*it->second.isolated_until, target});
  it->second.isolated_until.reset();
  it->second.probation_until = now + policy_.probation;
  ++counters_.readmissions;
  return true;
}

void IsolationTracker::forget(const proto::InstanceKey& target) {
  auto it = targets_.find(target);
  if (it == targets_.end()) return;
  if (it->second.isolated_until) ends_.erase({*it->second.isolated_until, target});
  erase(it);
}

void IsolationTracker::erase(std::map<proto::InstanceKey, Target>::iterator it) {
  recency_.erase(it->second.recency);
  targets_.erase(it);
}

void IsolationTracker::forget_quiet(MonoTime now) {
  constexpr int kMaxPerCall = 1024;
  for (int n = 0; n < kMaxPerCall && !recency_.empty(); ++n) {
    auto it = targets_.find(recency_.front());
    const Target& t = it->second;
    const bool quiet =
        t.last_report + policy_.window <= now && !t.isolated_until && now >= t.probation_until;
    if (!quiet) return;  // the rest were reported more recently
    erase(it);
  }
}

bool IsolationTracker::is_isolated(const proto::InstanceKey& target) const {
  auto it = targets_.find(target);
  return it != targets_.end() && it->second.isolated_until.has_value();
}

// At the limit, forget the instance reported least recently that is not
// isolated now (an isolated one must still be readmitted). The recency list
// makes this O(1) unless the oldest are isolated, and at most
// max_isolated_share of a service can be.
void IsolationTracker::make_room() {
  if (targets_.size() <= policy_.max_tracked) return;
  const auto newest = std::prev(recency_.end());  // the one being added stays
  for (auto pos = recency_.begin(); pos != newest; ++pos) {
    auto it = targets_.find(*pos);
    if (it->second.isolated_until) continue;
    erase(it);
    ++counters_.forgotten;
    return;
  }
}

}  // namespace cascade::hub
