#pragma once
// The extra-request budget of one service: how many retries and backup
// requests its callers may add on top of their primary requests.
//
// Without it, retries multiply load exactly when a service is failing: with 2
// retries each, a service at 100% errors receives 3x its normal traffic and
// stays down. Capping extras at a share of the primaries (default 15%) bounds
// that amplification at 1.15x, whatever the callers' retry settings.
//
// Rule, over a sliding window of buckets: an extra request is granted when
//   extras_granted_in_window + 1 <= extra_ratio * primaries_in_window + min_extra_per_window
// The floor lets a quiet service (a few calls a minute, where 15% rounds to
// nothing) still retry now and then; set it to 0 for a strict ratio.
//
// Sans-IO: every method takes `now`. Thread-safety: none; the Caller locks.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cascade/agent/bucket_ring.hpp"
#include "cascade/common/clock.hpp"

namespace cascade::agent {

struct BudgetConfig {
  std::size_t buckets = 10;                // the window is buckets * bucket_width long
  Duration bucket_width{1000};             // ms
  double extra_ratio = 0.15;               // extras per primary request, >= 0
  std::uint32_t min_extra_per_window = 3;  // extras always allowed per window (0: none)
};

// "" when the config is usable, else what is wrong with it.
std::string check_budget_config(const BudgetConfig& config);

struct BudgetStats {
  // Counts in the current window.
  std::uint64_t primaries = 0;
  std::uint64_t extras_granted = 0;
  std::uint64_t extras_denied = 0;
  std::uint64_t allowance = 0;  // extras the window allows in total (granted included)
};

class CallBudget {
 public:
  explicit CallBudget(BudgetConfig config);  // throws std::invalid_argument

  // One primary request (the first attempt of a call) was made.
  void record_primary(MonoTime now);
  // Asks for one extra request (a retry or a backup). True: granted and counted.
  bool try_spend_extra(MonoTime now);

  BudgetStats stats(MonoTime now) const;

 private:
  struct Bucket {
    std::int64_t index = -1;
    std::uint64_t primaries = 0;
    std::uint64_t extras_granted = 0;
    std::uint64_t extras_denied = 0;
  };
  Bucket window_sum(MonoTime now) const;
  std::uint64_t allowance(std::uint64_t primaries) const;

  BudgetConfig config_;
  BucketRing<Bucket> ring_;
};

}  // namespace cascade::agent
