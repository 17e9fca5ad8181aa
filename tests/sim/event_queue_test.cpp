#include "cascade/sim/event_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

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

}  // namespace
}  // namespace cascade::sim
