#include "cascade/sim/lock_step.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

namespace cascade::sim {
namespace {

const MonoTime kStart = mono_from_ms(1000);

struct Partition {
  std::vector<MonoTime> windows;
  std::thread::id thread;
  LockStep::Window window() {
    return [this](MonoTime until) {
      windows.push_back(until);
      thread = std::this_thread::get_id();
    };
  }
};

class SimLockStepTest : public ::testing::TestWithParam<bool> {};

TEST_P(SimLockStepTest, BothPartitionsRunEveryWindowInOrderBeforeRunReturns) {
  Partition first, second;
  {
    LockStep step(first.window(), second.window(), GetParam());
    for (int ms = 0; ms < 1000; ++ms) {
      step.run(kStart + Duration{ms});
      ASSERT_EQ(second.windows.size(), first.windows.size()) << "window " << ms;
      ASSERT_EQ(second.windows.back(), kStart + Duration{ms});
    }
  }
  EXPECT_EQ(first.windows, second.windows);
  EXPECT_EQ(first.thread, std::this_thread::get_id());
  EXPECT_EQ(second.thread == std::this_thread::get_id(), !GetParam())
      << "threaded: the second partition runs on the worker";
}

TEST_P(SimLockStepTest, WhatTheSecondPartitionThrowsIsRethrownAndTheNextWindowRuns) {
  int second_runs = 0;
  LockStep step([](MonoTime) {},
                [&](MonoTime until) {
                  ++second_runs;
                  if (until == kStart + Duration{1}) throw std::runtime_error("hub failed");
                },
                GetParam());
  step.run(kStart);
  EXPECT_THROW(step.run(kStart + Duration{1}), std::runtime_error);
  step.run(kStart + Duration{2});
  EXPECT_EQ(second_runs, 3);
}

TEST_P(SimLockStepTest, WhenTheFirstPartitionThrowsTheSecondStillFinishesItsWindow) {
  int second_runs = 0;
  LockStep step([](MonoTime) { throw std::logic_error("agent failed"); },
                [&](MonoTime) { ++second_runs; }, GetParam());
  EXPECT_THROW(step.run(kStart), std::logic_error);
  EXPECT_EQ(second_runs, 1) << "the other window ends before run() rethrows";
}

// The balance counts windows, and on one thread no one ever waits.
TEST_P(SimLockStepTest, BalanceCountsTheWindowsInWhichTheFirstWaitedForTheSecond) {
  constexpr int kWindows = 50;
  LockStep step([](MonoTime) {},
                [](MonoTime) { std::this_thread::sleep_for(std::chrono::milliseconds(1)); },
                GetParam());
  for (int ms = 0; ms < kWindows; ++ms)
    step.run(kStart + Duration{ms});
  EXPECT_EQ(step.balance().windows, kWindows);
  if (GetParam())
    EXPECT_GT(step.balance().first_waited, kWindows / 2) << "the second sleeps, the first does not";
  else
    EXPECT_EQ(step.balance().first_waited, 0u);
}

INSTANTIATE_TEST_SUITE_P(OnOneThreadAndOnTwo, SimLockStepTest, ::testing::Bool(),
                         [](const auto& p) { return p.param ? "Threaded" : "OneThread"; });

}  // namespace
}  // namespace cascade::sim
