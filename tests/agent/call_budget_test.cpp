#include "cascade/agent/call_budget.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <deque>
#include <ostream>
#include <stdexcept>

#include "cascade/common/random.hpp"

namespace cascade::agent {
namespace {

int grant_all(CallBudget& budget, MonoTime now) {
  int granted = 0;
  while (budget.try_spend_extra(now))
    ++granted;
  return granted;
}

TEST(CallBudget, GrantsExtrasUpToTheRatioOfPrimariesPlusTheFloor) {
  FakeClock clock;
  CallBudget budget(BudgetConfig{});  // 15% + 3
  for (int i = 0; i < 100; ++i)
    budget.record_primary(clock.now());
  EXPECT_EQ(grant_all(budget, clock.now()), 18);
  const BudgetStats s = budget.stats(clock.now());
  EXPECT_EQ(s.primaries, 100u);
  EXPECT_EQ(s.extras_granted, 18u);
  EXPECT_EQ(s.extras_denied, 1u);
  EXPECT_EQ(s.allowance, 18u);
}

TEST(CallBudget, QuietServiceCanStillRetryUpToTheFloor) {
  FakeClock clock;
  CallBudget budget(BudgetConfig{});
  budget.record_primary(clock.now());  // 15% of 1 rounds to nothing
  EXPECT_EQ(grant_all(budget, clock.now()), 3);
}

TEST(CallBudget, ZeroFloorMeansAStrictRatio) {
  FakeClock clock;
  BudgetConfig config;
  config.min_extra_per_window = 0;
  CallBudget budget(config);
  EXPECT_FALSE(budget.try_spend_extra(clock.now()));
  for (int i = 0; i < 13; ++i)
    budget.record_primary(clock.now());
  EXPECT_EQ(grant_all(budget, clock.now()), 1);  // floor(0.15 * 13) = 1
}

TEST(CallBudget, SpentBudgetComesBackAsTheWindowSlides) {
  FakeClock clock;
  CallBudget budget(BudgetConfig{});  // 10 x 1 s
  for (int i = 0; i < 20; ++i)
    budget.record_primary(clock.now());
  EXPECT_EQ(grant_all(budget, clock.now()), 6);
  clock.advance(Duration{9999});
  EXPECT_FALSE(budget.try_spend_extra(clock.now()));
  clock.advance(Duration{1});  // the first second leaves the window, with its grants
  EXPECT_EQ(grant_all(budget, clock.now()), 3);  // the floor; its 20 primaries left too
}

// Any mix of primaries and extra requests, over time: every grant keeps the
// window's extras within ratio * primaries + floor, and every refusal was
// needed. The reference recounts the window from a log of every event.
struct Scenario {
  double ratio = 0.15;
  std::uint32_t floor = 3;
  std::uint64_t seed = 1;
};
void PrintTo(const Scenario& s, std::ostream* os) {
  *os << "ratio " << s.ratio << ", floor " << s.floor << ", seed " << s.seed;
}

class CallBudgetProperty : public testing::TestWithParam<Scenario> {};

TEST_P(CallBudgetProperty, GrantedExtrasNeverExceedTheBoundUnderAnyMix) {
  const Scenario sc = GetParam();
  BudgetConfig config;
  config.extra_ratio = sc.ratio;
  config.min_extra_per_window = sc.floor;
  CallBudget budget(config);
  FakeClock clock;
  Rng rng(sc.seed);

  struct Event {
    std::int64_t bucket;
    bool primary;  // else a granted extra
  };
  std::deque<Event> log;
  auto bucket_of = [&](MonoTime t) { return to_ms(t) / config.bucket_width.count(); };
  const auto n = static_cast<std::int64_t>(config.buckets);

  std::uint64_t grants = 0;
  std::uint64_t refusals = 0;
  double extra_share = 0;
  for (int step = 0; step < 50'000; ++step) {
    // Phases of 500 steps, each with its own share of extra requests (0% to
    // 90%), so the budget is both starved and flooded.
    if (step % 500 == 0) extra_share = static_cast<double>(rng.uniform(0, 9)) / 10.0;
    if (rng.unit() < 0.2) clock.advance(Duration{rng.uniform(0, 400)});
    const std::int64_t now_bucket = bucket_of(clock.now());
    while (!log.empty() && log.front().bucket <= now_bucket - n)
      log.pop_front();

    if (rng.unit() >= extra_share) {
      budget.record_primary(clock.now());
      log.push_back({now_bucket, true});
      continue;
    }
    std::uint64_t primaries = 0;
    std::uint64_t extras = 0;
    for (const Event& e : log)
      (e.primary ? primaries : extras) += 1;
    const double bound = sc.ratio * static_cast<double>(primaries) + sc.floor;
    if (budget.try_spend_extra(clock.now())) {
      ++grants;
      log.push_back({now_bucket, false});
      ASSERT_LE(static_cast<double>(extras + 1), bound + 1e-9) << "step " << step;
    } else {
      ++refusals;
      // Refused only when one more would break the bound (floor of the share).
      ASSERT_GT(extras + 1, static_cast<std::uint64_t>(
                                std::floor(sc.ratio * static_cast<double>(primaries) + 1e-9)) +
                                sc.floor)
          << "step " << step;
    }
  }
  // The mix really exercised both sides.
  if (sc.ratio > 0 || sc.floor > 0) {
    EXPECT_GT(grants, 100u);
  }
  EXPECT_GT(refusals, 100u);
}

INSTANTIATE_TEST_SUITE_P(Mixes, CallBudgetProperty,
                         testing::Values(Scenario{0.15, 3, 1}, Scenario{0.15, 3, 2},
                                         Scenario{0.5, 0, 3}, Scenario{0.0, 0, 4},
                                         Scenario{1.0, 10, 5}));

TEST(CallBudget, BadConfigIsRefusedWithAClearMessage) {
  BudgetConfig c;
  c.extra_ratio = -0.1;
  EXPECT_NE(check_budget_config(c).find("extra_ratio"), std::string::npos);
  EXPECT_THROW(CallBudget{c}, std::invalid_argument);
  c = BudgetConfig{};
  c.bucket_width = Duration{0};
  EXPECT_NE(check_budget_config(c).find("bucket_width"), std::string::npos);
  c = BudgetConfig{};
  c.buckets = 0;
  EXPECT_NE(check_budget_config(c).find("buckets"), std::string::npos);
  EXPECT_EQ(check_budget_config(BudgetConfig{}), "");
}

}  // namespace
}  // namespace cascade::agent
