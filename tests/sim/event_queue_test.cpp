#include "cascade/sim/event_queue.hpp"

#include <gtest/gtest.h>

#include <map>
#include <utility>
#include <vector>

#include "cascade/common/random.hpp"

namespace cascade::sim {
namespace {

const MonoTime kStart = mono_from_ms(1000);

TEST(SimEventQueueTest, EventsRunInTimeOrderThenSchedulingOrder) {
  EventQueue q(kStart);
  std::vector<int> ran;
  q.at(kStart + Duration{20}, [&] { ran.push_back(3); });
  q.at(kStart + Duration{10}, [&] { ran.push_back(1); });
  q.at(kStart + Duration{10}, [&] { ran.push_back(2); });
  q.run_until(kStart + Duration{100});
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(q.now(), kStart + Duration{100});
}

TEST(SimEventQueueTest, ClockReadsTheEventTimeWhileItRuns) {
  EventQueue q(kStart);
  MonoTime seen{};
  q.after(Duration{7}, [&] { seen = q.now(); });
  q.run_until(kStart + Duration{50});
  EXPECT_EQ(seen, kStart + Duration{7});
}

TEST(SimEventQueueTest, EventsAfterTheHorizonWaitForTheNextRun) {
  EventQueue q(kStart);
  int ran = 0;
  q.after(Duration{60}, [&] { ++ran; });
  q.run_until(kStart + Duration{59});
  EXPECT_EQ(ran, 0);
  q.run_until(kStart + Duration{60});
  EXPECT_EQ(ran, 1);
}

TEST(SimEventQueueTest, AnEventScheduledInThePastRunsNowAfterWhatIsDue) {
  EventQueue q(kStart);
  std::vector<int> ran;
  q.after(Duration{5}, [&] {
    q.at(kStart, [&] { ran.push_back(2); });
    ran.push_back(1);
  });
  q.after(Duration{5}, [&] { ran.push_back(3); });
  q.run_until(kStart + Duration{5});
  EXPECT_EQ(ran, (std::vector<int>{1, 3, 2}));
}

// An event scheduled beyond the wheel's horizon and one scheduled for the
// same millisecond once it came within: the first scheduled runs first.
TEST(SimEventQueueTest, AnEventFromBeyondTheHorizonKeepsItsPlaceAmongLaterOnes) {
  EventQueue q(kStart);
  std::vector<int> ran;
  const MonoTime far = kStart + Duration{10'000};
  q.at(far, [&] { ran.push_back(1); });
  q.at(kStart + Duration{9'000}, [&] { q.at(far, [&] { ran.push_back(2); }); });
  q.at(far, [&] { ran.push_back(3); });
  q.run_until(far);
  EXPECT_EQ(ran, (std::vector<int>{1, 3, 2}));
  EXPECT_EQ(q.pending(), 0u);
  EXPECT_EQ(q.executed(), 4u);
}

TEST(SimEventQueueTest, AQuietQueueJumpsToItsNextEventAnHourAhead) {
  EventQueue q(kStart);
  MonoTime seen{};
  q.after(Duration{3'600'000}, [&] { seen = q.now(); });
  q.run_until(kStart + Duration{7'200'000});
  EXPECT_EQ(seen, kStart + Duration{3'600'000});
  EXPECT_EQ(q.now(), kStart + Duration{7'200'000});
}

// The order a single heap of every event by (time, scheduling order) gives,
// for random schedules near and far, made before and while the queue runs,
// with runs that stop anywhere: the queue's must be the same.
TEST(SimEventQueueTest, RunsInTheOrderOfOneHeapOfEveryEvent) {
  struct Reference {
    std::map<std::pair<MonoTime, std::uint64_t>, int> events;
    std::uint64_t seq = 0;
  };
  for (std::uint64_t seed = 1; seed <= 20; ++seed) {
    Rng rng(seed);
    EventQueue q(kStart);
    Reference ref;
    std::vector<int> ran;
    std::vector<int> expected;
    int next_id = 0;
    // Each event, when it runs, may schedule one more: near, far or in the past.
    std::function<void(MonoTime)> schedule = [&](MonoTime base) {
      const auto pick = rng.uniform(0, 9);
      const Duration delay{pick < 5   ? rng.uniform(0, 50)
                           : pick < 8 ? rng.uniform(3'000, 6'000)
                                      : rng.uniform(-5, 20'000)};
      const int id = next_id++;
      const MonoTime when = std::max(base + delay, q.now());
      ref.events.emplace(std::make_pair(when, ref.seq++), id);
      q.at(base + delay, [&, id] {
        ran.push_back(id);
        if (next_id < 3'000) schedule(q.now());
      });
    };
    for (int i = 0; i < 200; ++i)
      schedule(kStart);
    // The reference: take the earliest, run it (its child is scheduled by
    // the queue's own run; mirror the ids as they come).
    MonoTime until = kStart;
    while (q.pending() > 0) {
      until = until + Duration{rng.uniform(0, 7'000)};
      q.run_until(until);
    }
    for (const auto& [key, id] : ref.events)
      expected.push_back(id);
    ASSERT_EQ(ran, expected) << "seed " << seed;
  }
}

}  // namespace
}  // namespace cascade::sim
