#include "cascade/agent/call_budget.hpp"

#include <cmath>

#include "cascade/agent/config_check.hpp"

namespace cascade::agent {
std::string check_budget_config(const BudgetConfig& c) {
  if (auto error = check_window("budget", c); !error.empty()) return error;
  if (!(c.extra_ratio >= 0.0 && std::isfinite(c.extra_ratio)))
    return "budget: extra_ratio must be a finite number >= 0, got " + std::to_string(c.extra_ratio);
  return "";
}

CallBudget::CallBudget(BudgetConfig config)
    : config_(checked(config, check_budget_config)), ring_(config_.buckets, config_.bucket_width) {}

CallBudget::Bucket CallBudget::window_sum(MonoTime now) const {
  Bucket sum;
  ring_.for_each_live(now, [&sum](const Bucket& b) {
    sum.primaries += b.primaries;
    sum.extras_granted += b.extras_granted;
    sum.extras_denied += b.extras_denied;
  });
  return sum;
}

std::uint64_t CallBudget::allowance(std::uint64_t primaries) const {
  // floor(), so "extras + 1 <= ratio * primaries + floor" holds in integers;
  // the epsilon keeps 0.15 * 100 (14.999... in binary) at 15.
  const double share = std::floor(config_.extra_ratio * static_cast<double>(primaries) + 1e-9);
  return static_cast<std::uint64_t>(share) + config_.min_extra_per_window;
}

void CallBudget::record_primary(MonoTime now) {
  ++ring_.at(now).primaries;
}

bool CallBudget::try_spend_extra(MonoTime now) {
  const Bucket sum = window_sum(now);
  Bucket& bucket = ring_.at(now);
  if (sum.extras_granted + 1 > allowance(sum.primaries)) {
    ++bucket.extras_denied;
    return false;
  }
  ++bucket.extras_granted;
  return true;
}

BudgetStats CallBudget::stats(MonoTime now) const {
  const Bucket sum = window_sum(now);
  BudgetStats s;
  s.primaries = sum.primaries;
  s.extras_granted = sum.extras_granted;
  s.extras_denied = sum.extras_denied;
  s.allowance = allowance(sum.primaries);
  return s;
}

}  // namespace cascade::agent
