#include "cascade/hub/isolation.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace cascade::hub {
namespace {

using proto::InstanceKey;

constexpr ServiceLoad kRoomy{.up = 10, .isolated = 0};  // the cap never holds back

MonoTime at(std::int64_t ms) {
  return mono_from_ms(ms);
}

InstanceKey key(const std::string& id) {
  return InstanceKey{.service = proto::ServiceKey{.name = "svc", .group = "g"}, .id = id};
}

// Exact isolation times: no jitter.
IsolationPolicy exact_policy() {
  IsolationPolicy p;
  p.jitter = 0.0;
  return p;
}

// Two distinct callers: the reporter quorum of the default policy.
ReportOutcome isolate(IsolationTracker& t, MonoTime now, const InstanceKey& target,
                      ServiceLoad load = kRoomy) {
  t.on_report(now, target, "caller-a", 1, load);
  return t.on_report(now, target, "caller-b", 1, load);
}

// Isolates the target at `now`, then lets the isolation run out; returns when it ended.
MonoTime isolate_and_serve(IsolationTracker& t, MonoTime now, const InstanceKey& target) {
  const auto out = isolate(t, now, target);
  EXPECT_EQ(out.verdict, ReportVerdict::kIsolate);
  const MonoTime end = now + out.isolation;
  EXPECT_EQ(t.due(end), std::vector<InstanceKey>{target});
  return end;
}

// --- Quorum ---

TEST(IsolationTracker, TwoDistinctCallersWithinTheWindowIsolate) {
  IsolationTracker t(exact_policy(), 1);
  EXPECT_EQ(t.on_report(at(1000), key("i1"), "caller-a", 1, kRoomy).verdict,
            ReportVerdict::kCounted);
  EXPECT_FALSE(t.is_isolated(key("i1")));
  const auto out = t.on_report(at(2000), key("i1"), "caller-b", 1, kRoomy);
  EXPECT_EQ(out.verdict, ReportVerdict::kIsolate);
  EXPECT_EQ(out.isolation, Duration{10'000});
  EXPECT_FALSE(out.reason.empty());
  EXPECT_TRUE(t.is_isolated(key("i1")));
  EXPECT_EQ(t.counters().isolations, 1u);
}

TEST(IsolationTracker, OneCallerWithFourFailuresDoesNotIsolate) {
  IsolationTracker t(exact_policy(), 1);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(t.on_report(at(1000 + i), key("i1"), "caller-a", 1, kRoomy).verdict,
              ReportVerdict::kCounted);
  }
  EXPECT_FALSE(t.is_isolated(key("i1")));
  EXPECT_EQ(t.counters().reports, 4u);
  EXPECT_EQ(t.counters().isolations, 0u);
}

TEST(IsolationTracker, FiveFailuresFromOneCallerIsolate) {
  IsolationTracker t(exact_policy(), 1);
  for (int i = 0; i < 4; ++i)
    t.on_report(at(1000 + i), key("i1"), "caller-a", 1, kRoomy);
  EXPECT_EQ(t.on_report(at(1004), key("i1"), "caller-a", 1, kRoomy).verdict,
            ReportVerdict::kIsolate);
  EXPECT_TRUE(t.is_isolated(key("i1")));
}

TEST(IsolationTracker, FailuresFoldedIntoOneSignalCountTowardTheQuorum) {
  IsolationTracker t(exact_policy(), 1);
  EXPECT_EQ(t.on_report(at(1000), key("i1"), "caller-a", 4, kRoomy).verdict,
            ReportVerdict::kCounted);
  EXPECT_EQ(t.on_report(at(1001), key("i2"), "caller-a", 5, kRoomy).verdict,
            ReportVerdict::kIsolate);
  EXPECT_FALSE(t.is_isolated(key("i1")));
  EXPECT_TRUE(t.is_isolated(key("i2")));
  EXPECT_EQ(t.counters().reports, 9u);
}

TEST(IsolationTracker, ReportsOlderThanTheWindowDoNotCount) {
  IsolationTracker t(exact_policy(), 1);  // window 10 s
  t.on_report(at(1000), key("i1"), "caller-a", 1, kRoomy);
  // Exactly one window later the first report has left it.
  EXPECT_EQ(t.on_report(at(11'000), key("i1"), "caller-b", 1, kRoomy).verdict,
            ReportVerdict::kCounted);
  EXPECT_FALSE(t.is_isolated(key("i1")));
  // caller-b's report is still inside the window for a report 1 ms short of it.
  EXPECT_EQ(t.on_report(at(20'999), key("i1"), "caller-c", 1, kRoomy).verdict,
            ReportVerdict::kIsolate);
}

TEST(IsolationTracker, WindowSlidesOverSingleCallerFailures) {
  IsolationTracker t(exact_policy(), 1);
  for (int i = 0; i < 4; ++i)
    t.on_report(at(1000 * i), key("i1"), "caller-a", 1, kRoomy);  // at 0, 1, 2, 3 s
  // At 10 s the report from 0 s is gone: still 4 failures in the window.
  EXPECT_EQ(t.on_report(at(10'000), key("i1"), "caller-a", 1, kRoomy).verdict,
            ReportVerdict::kCounted);
  // At 10.5 s: reports from 1, 2, 3, 10 and 10.5 s make five.
  EXPECT_EQ(t.on_report(at(10'500), key("i1"), "caller-a", 1, kRoomy).verdict,
            ReportVerdict::kIsolate);
}

// --- Cap ---

TEST(IsolationTracker, AtMostHalfOfFourUpInstancesIsolated) {
  IsolationTracker t(exact_policy(), 1);  // share 0.5
  ServiceLoad load{.up = 4, .isolated = 0};
  EXPECT_EQ(isolate(t, at(1000), key("i1"), load).verdict, ReportVerdict::kIsolate);
  load.isolated = 1;
  EXPECT_EQ(isolate(t, at(1000), key("i2"), load).verdict, ReportVerdict::kIsolate);
  load.isolated = 2;
  EXPECT_EQ(t.counters().capped, 0u);
  EXPECT_EQ(isolate(t, at(1000), key("i3"), load).verdict, ReportVerdict::kCapped);
  EXPECT_FALSE(t.is_isolated(key("i3")));
  EXPECT_EQ(t.counters().capped, 1u);
  EXPECT_EQ(t.counters().isolations, 2u);
  // Each further report at quorum while capped is counted again.
  EXPECT_EQ(t.on_report(at(1001), key("i3"), "caller-c", 1, load).verdict, ReportVerdict::kCapped);
  EXPECT_EQ(t.counters().capped, 2u);
}

TEST(IsolationTracker, CappedInstanceIsolatesOnceTheCapLeavesRoom) {
  IsolationTracker t(exact_policy(), 1);
  EXPECT_EQ(isolate(t, at(1000), key("i3"), ServiceLoad{.up = 4, .isolated = 2}).verdict,
            ReportVerdict::kCapped);
  EXPECT_EQ(
      t.on_report(at(2000), key("i3"), "caller-c", 1, ServiceLoad{.up = 4, .isolated = 1}).verdict,
      ReportVerdict::kIsolate);
}

TEST(IsolationTracker, ServiceWithOneUpInstanceIsNeverIsolated) {
  IsolationTracker t(exact_policy(), 1);
  const ServiceLoad lone{.up = 1, .isolated = 0};
  for (int i = 0; i < 10; ++i) {
    const auto out = t.on_report(at(1000 + i), key("i1"), "caller-" + std::to_string(i), 3, lone);
    EXPECT_NE(out.verdict, ReportVerdict::kIsolate) << "report " << i;
  }
  EXPECT_FALSE(t.is_isolated(key("i1")));
  EXPECT_EQ(t.counters().isolations, 0u);
  EXPECT_GT(t.counters().capped, 0u);
  EXPECT_FALSE(t.next_deadline().has_value());
}

// --- Isolation time ---

TEST(IsolationTracker, IsolationTimeIsBaseWithinJitter) {
  IsolationPolicy p;  // base 10 s, jitter ±10%
  std::set<Duration> seen;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    IsolationTracker t(p, seed);
    const auto out = isolate(t, at(1000), key("i1"));
    ASSERT_EQ(out.verdict, ReportVerdict::kIsolate);
    EXPECT_GE(out.isolation, Duration{9'000}) << "seed " << seed;
    EXPECT_LE(out.isolation, Duration{11'000}) << "seed " << seed;
    seen.insert(out.isolation);
  }
  EXPECT_GT(seen.size(), 1u) << "isolation times are not jittered";
}

TEST(IsolationTracker, IsolationTimeIsReproducibleFromTheSeed) {
  IsolationTracker a(IsolationPolicy{}, 42);
  IsolationTracker b(IsolationPolicy{}, 42);
  EXPECT_EQ(isolate(a, at(1000), key("i1")).isolation, isolate(b, at(1000), key("i1")).isolation);
}

TEST(IsolationTracker, IsolationAgainWithinProbationGrowsUpToTheMaximum) {
  IsolationPolicy p = exact_policy();
  p.growth = 2.0;
  p.max_isolation = Duration{35'000};
  p.probation = Duration{60'000};
  IsolationTracker t(p, 1);
  const std::vector<Duration> expected{Duration{10'000}, Duration{20'000}, Duration{35'000},
                                       Duration{35'000}};
  MonoTime now = at(1000);
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const auto out = isolate(t, now, key("i1"));
    ASSERT_EQ(out.verdict, ReportVerdict::kIsolate) << "isolation " << i;
    EXPECT_EQ(out.isolation, expected[i]) << "isolation " << i;
    now += out.isolation;
    ASSERT_EQ(t.due(now), std::vector<InstanceKey>{key("i1")});
    now += Duration{59'999};  // the last millisecond of probation
  }
}

TEST(IsolationTracker, IsolationAgainWithinProbationGrowsByAboutGrowthWithJitter) {
  IsolationPolicy p;  // jitter ±10%, growth 2
  IsolationTracker t(p, 7);
  const MonoTime end = isolate_and_serve(t, at(1000), key("i1"));
  const auto out = isolate(t, end + Duration{1000}, key("i1"));
  ASSERT_EQ(out.verdict, ReportVerdict::kIsolate);
  EXPECT_GE(out.isolation, Duration{18'000});
  EXPECT_LE(out.isolation, Duration{22'000});
}

TEST(IsolationTracker, JitteredIsolationNeverExceedsTheMaximum) {
  IsolationPolicy p;
  p.jitter = 0.5;
  p.max_isolation = Duration{12'000};
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    IsolationTracker t(p, seed);
    MonoTime now = at(1000);
    for (int i = 0; i < 3; ++i) {
      const auto out = isolate(t, now, key("i1"));
      ASSERT_EQ(out.verdict, ReportVerdict::kIsolate);
      EXPECT_LE(out.isolation, Duration{12'000}) << "seed " << seed << " isolation " << i;
      now += out.isolation;
      t.due(now);
    }
  }
}

// A fleet isolated at the maximum must not come back all in the same instant.
TEST(IsolationTracker, IsolationsAtTheMaximumAreStillJittered) {
  IsolationPolicy p;  // jitter ±10%
  p.max_isolation = Duration{15'000};
  std::set<Duration> seen;
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    IsolationTracker t(p, seed);
    MonoTime now = at(1000);
    Duration last{0};
    for (int i = 0; i < 4; ++i) {  // the 3rd and 4th would be 40 s and 80 s uncapped
      const auto out = isolate(t, now, key("i1"));
      ASSERT_EQ(out.verdict, ReportVerdict::kIsolate);
      last = out.isolation;
      now += out.isolation;
      t.due(now);
    }
    EXPECT_GE(last, Duration{13'500}) << "seed " << seed;
    EXPECT_LE(last, Duration{15'000}) << "seed " << seed;
    seen.insert(last);
  }
  EXPECT_GT(seen.size(), 1u) << "isolations at the maximum all end together";
}

TEST(IsolationTracker, AfterACleanProbationTheTimeStartsOverFromBase) {
  IsolationTracker t(exact_policy(), 1);  // probation 60 s
  MonoTime end = isolate_and_serve(t, at(1000), key("i1"));
  end = isolate_and_serve(t, end + Duration{1000}, key("i1"));  // 20 s, probation again
  const auto out = isolate(t, end + Duration{60'000}, key("i1"));
  ASSERT_EQ(out.verdict, ReportVerdict::kIsolate);
  EXPECT_EQ(out.isolation, Duration{10'000});
}

// --- Deadlines and readmission ---

TEST(IsolationTracker, DueReturnsTheInstanceAtItsEndTimeNotBefore) {
  IsolationTracker t(exact_policy(), 1);
  EXPECT_FALSE(t.next_deadline().has_value());
  ASSERT_EQ(isolate(t, at(1000), key("i1")).verdict, ReportVerdict::kIsolate);
  EXPECT_EQ(t.next_deadline(), at(11'000));
  EXPECT_TRUE(t.due(at(10'999)).empty());
  EXPECT_TRUE(t.is_isolated(key("i1")));
  EXPECT_EQ(t.due(at(11'000)), std::vector<InstanceKey>{key("i1")});
  EXPECT_FALSE(t.is_isolated(key("i1")));
  EXPECT_FALSE(t.next_deadline().has_value());
  EXPECT_EQ(t.counters().readmissions, 1u);
  EXPECT_TRUE(t.due(at(20'000)).empty());
}

TEST(IsolationTracker, NextDeadlineIsTheEarliestOfSeveralIsolations) {
  IsolationTracker t(exact_policy(), 1);
  ASSERT_EQ(isolate(t, at(5000), key("i1")).verdict, ReportVerdict::kIsolate);
  ASSERT_EQ(isolate(t, at(2000), key("i2")).verdict, ReportVerdict::kIsolate);
  EXPECT_EQ(t.next_deadline(), at(12'000));
  EXPECT_EQ(t.due(at(12'000)), std::vector<InstanceKey>{key("i2")});
  EXPECT_EQ(t.next_deadline(), at(15'000));
  EXPECT_EQ(t.due(at(15'000)), std::vector<InstanceKey>{key("i1")});
}

TEST(IsolationTracker, ReportsDuringAnIsolationDoNotExtendIt) {
  IsolationTracker t(exact_policy(), 1);
  ASSERT_EQ(isolate(t, at(1000), key("i1")).verdict, ReportVerdict::kIsolate);
  for (int i = 0; i < 6; ++i) {
    EXPECT_EQ(
        t.on_report(at(5000 + i), key("i1"), "caller-" + std::to_string(i), 1, kRoomy).verdict,
        ReportVerdict::kIsolated);
  }
  EXPECT_EQ(t.next_deadline(), at(11'000));
  EXPECT_EQ(t.counters().isolations, 1u);
  EXPECT_EQ(t.due(at(11'000)), std::vector<InstanceKey>{key("i1")});
  // Nor do they count toward a quorum once it is back.
  EXPECT_EQ(t.on_report(at(11'001), key("i1"), "caller-z", 1, kRoomy).verdict,
            ReportVerdict::kCounted);
}

TEST(IsolationTracker, ReadmitLiftsAnIsolationEarly) {
  IsolationTracker t(exact_policy(), 1);
  EXPECT_FALSE(t.readmit(at(1000), key("i1")));  // never seen
  ASSERT_EQ(isolate(t, at(1000), key("i1")).verdict, ReportVerdict::kIsolate);
  EXPECT_TRUE(t.readmit(at(3000), key("i1")));
  EXPECT_FALSE(t.is_isolated(key("i1")));
  EXPECT_FALSE(t.next_deadline().has_value());
  EXPECT_TRUE(t.due(at(20'000)).empty());
  EXPECT_EQ(t.counters().readmissions, 1u);
  EXPECT_FALSE(t.readmit(at(3001), key("i1")));  // no longer isolated
  EXPECT_EQ(t.counters().readmissions, 1u);
}

TEST(IsolationTracker, ReadmittedInstanceIsOnProbation) {
  IsolationTracker t(exact_policy(), 1);
  ASSERT_EQ(isolate(t, at(1000), key("i1")).verdict, ReportVerdict::kIsolate);
  ASSERT_TRUE(t.readmit(at(3000), key("i1")));
  EXPECT_EQ(isolate(t, at(4000), key("i1")).isolation, Duration{20'000});
}

TEST(IsolationTracker, ForgetDropsStateAndThePendingEnd) {
  IsolationTracker t(exact_policy(), 1);
  const MonoTime end = isolate_and_serve(t, at(1000), key("i1"));  // on probation now
  ASSERT_EQ(isolate(t, end + Duration{1000}, key("i1")).isolation, Duration{20'000});
  t.forget(key("i1"));
  EXPECT_FALSE(t.is_isolated(key("i1")));
  EXPECT_EQ(t.tracked(), 0u);
  EXPECT_FALSE(t.next_deadline().has_value());
  EXPECT_TRUE(t.due(at(100'000)).empty());
  EXPECT_EQ(t.counters().readmissions, 1u);  // only the earlier one
  // Back again, it starts from nothing: one report is below quorum, and no probation.
  const MonoTime later = end + Duration{2000};
  EXPECT_EQ(t.on_report(later, key("i1"), "caller-a", 1, kRoomy).verdict, ReportVerdict::kCounted);
  EXPECT_EQ(t.on_report(later, key("i1"), "caller-b", 1, kRoomy).isolation, Duration{10'000});
}

TEST(IsolationTracker, ForgetOfAnUnknownInstanceIsHarmless) {
  IsolationTracker t(exact_policy(), 1);
  ASSERT_EQ(isolate(t, at(1000), key("i1")).verdict, ReportVerdict::kIsolate);
  t.forget(key("other"));
  EXPECT_TRUE(t.is_isolated(key("i1")));
  EXPECT_EQ(t.next_deadline(), at(11'000));
}

// --- Policy ---

TEST(IsolationTracker, DisabledPolicyNeverIsolates) {
  IsolationPolicy p = exact_policy();
  p.enabled = false;
  IsolationTracker t(p, 1);
  for (int i = 0; i < 10; ++i) {
    EXPECT_EQ(
        t.on_report(at(1000 + i), key("i1"), "caller-" + std::to_string(i), 5, kRoomy).verdict,
        ReportVerdict::kDisabled);
  }
  EXPECT_FALSE(t.is_isolated(key("i1")));
  EXPECT_FALSE(t.next_deadline().has_value());
  EXPECT_EQ(t.counters().isolations, 0u);
  EXPECT_EQ(t.tracked(), 0u);
}

TEST(IsolationTracker, MaxTrackedForgetsTheLeastRecentlyReportedInstance) {
  IsolationPolicy p = exact_policy();
  p.max_tracked = 2;
  IsolationTracker t(p, 1);
  t.on_report(at(1000), key("i1"), "caller-a", 1, kRoomy);
  t.on_report(at(2000), key("i2"), "caller-a", 1, kRoomy);
  t.on_report(at(3000), key("i1"), "caller-a", 1, kRoomy);  // i1 is now the more recent
  EXPECT_EQ(t.tracked(), 2u);
  t.on_report(at(4000), key("i3"), "caller-a", 1, kRoomy);
  EXPECT_EQ(t.tracked(), 2u);
  EXPECT_EQ(t.counters().forgotten, 1u);
  // i1 kept its two reports from caller-a: a second caller isolates it.
  EXPECT_EQ(t.on_report(at(4500), key("i1"), "caller-b", 1, kRoomy).verdict,
            ReportVerdict::kIsolate);
  // i2's report was forgotten (this makes room by forgetting i3, the oldest not isolated).
  EXPECT_EQ(t.on_report(at(5000), key("i2"), "caller-b", 1, kRoomy).verdict,
            ReportVerdict::kCounted);
  EXPECT_EQ(t.counters().forgotten, 2u);
}

TEST(IsolationTracker, MaxTrackedKeepsIsolatedInstances) {
  IsolationPolicy p = exact_policy();
  p.max_tracked = 1;
  IsolationTracker t(p, 1);
  ASSERT_EQ(isolate(t, at(1000), key("i1")).verdict, ReportVerdict::kIsolate);
  t.on_report(at(2000), key("i2"), "caller-a", 1, kRoomy);
  EXPECT_TRUE(t.is_isolated(key("i1")));
  EXPECT_EQ(t.counters().forgotten, 0u);
  EXPECT_EQ(t.next_deadline(), at(11'000));
  EXPECT_EQ(t.due(at(11'000)), std::vector<InstanceKey>{key("i1")});
}

TEST(IsolationPolicyCheck, DefaultPolicyIsUsable) {
  EXPECT_EQ(check_isolation_policy(IsolationPolicy{}), "");
}

TEST(IsolationPolicyCheck, RejectsEachBadField) {
  struct Case {
    const char* name;
    void (*spoil)(IsolationPolicy&);
    const char* message_mentions;
  };
  const std::vector<Case> cases{
      {"min_reporters 0", [](IsolationPolicy& p) { p.min_reporters = 0; }, "quorum"},
      {"min_reports 0", [](IsolationPolicy& p) { p.min_reports = 0; }, "quorum"},
      {"window 0", [](IsolationPolicy& p) { p.window = Duration{0}; }, "window"},
      {"window negative", [](IsolationPolicy& p) { p.window = Duration{-1}; }, "window"},
      {"base 0", [](IsolationPolicy& p) { p.base_isolation = Duration{0}; }, "base"},
      {"base negative", [](IsolationPolicy& p) { p.base_isolation = Duration{-5}; }, "base"},
      {"max below base",
       [](IsolationPolicy& p) {
         p.base_isolation = Duration{10'000};
         p.max_isolation = Duration{9'999};
       },
       "maximum"},
      {"growth below 1", [](IsolationPolicy& p) { p.growth = 0.99; }, "growth"},
      {"jitter negative", [](IsolationPolicy& p) { p.jitter = -0.01; }, "jitter"},
      {"jitter 1", [](IsolationPolicy& p) { p.jitter = 1.0; }, "jitter"},
      {"share negative", [](IsolationPolicy& p) { p.max_isolated_share = -0.1; }, "cap"},
      {"share above 1", [](IsolationPolicy& p) { p.max_isolated_share = 1.01; }, "cap"},
      {"max_tracked 0", [](IsolationPolicy& p) { p.max_tracked = 0; }, "max_tracked"},
  };
  for (const auto& c : cases) {
    IsolationPolicy p;
    c.spoil(p);
    const auto message = check_isolation_policy(p);
    EXPECT_NE(message, "") << c.name;
    EXPECT_NE(message.find(c.message_mentions), std::string::npos) << c.name << ": " << message;
  }
}

TEST(IsolationPolicyCheck, AcceptsTheEdgesOfEachRange) {
  IsolationPolicy p;
  p.min_reporters = 1;
  p.min_reports = 1;
  p.window = Duration{1};
  p.base_isolation = Duration{1};
  p.max_isolation = Duration{1};
  p.growth = 1.0;
  p.jitter = 0.0;
  p.max_isolated_share = 0.0;
  p.max_tracked = 1;
  EXPECT_EQ(check_isolation_policy(p), "");
  p.max_isolated_share = 1.0;
  p.jitter = 0.99;
  EXPECT_EQ(check_isolation_policy(p), "");
}

}  // namespace
}  // namespace cascade::hub
