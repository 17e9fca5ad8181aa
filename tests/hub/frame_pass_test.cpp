// A server loop's pass over queued frames ends at its time budget or frame
// cap, so the loop's other duties (mailbox, timers, commits) are never kept
// waiting behind a saturating load for longer than about one budget.

#include "cascade/hub/frame_pass.hpp"

#include <gtest/gtest.h>

namespace cascade::hub {
namespace {

// How many frames a pass takes when each costs `per_frame` of the clock,
// out of a queue that never empties.
std::size_t frames_taken(FakeClock& clock, Duration budget, std::size_t max_frames,
                         Duration per_frame) {
  std::size_t taken = 0;
  for (FramePass pass(clock, budget, max_frames); pass.another() && taken < 1'000'000;) {
    ++taken;
    clock.advance(per_frame);
  }
  return taken;
}

TEST(FramePass, EndsOnceItsBudgetHasPassed) {
  FakeClock clock;
  EXPECT_EQ(frames_taken(clock, Duration{5}, 4096, Duration{1}), 5u);
}

TEST(FramePass, EndsAtItsFrameCapWhenFramesCostNoTime) {
  FakeClock clock;
  EXPECT_EQ(frames_taken(clock, Duration{5}, 4096, Duration{0}), 4096u);
}

TEST(FramePass, AlwaysTakesOneFrameEvenWhenThatFrameOutlastsTheBudget) {
  FakeClock clock;
  EXPECT_EQ(frames_taken(clock, Duration{5}, 4096, Duration{50}), 1u);
}

TEST(FramePass, TakesNothingWithACapOfZero) {
  FakeClock clock;
  FramePass pass(clock, Duration{5}, 0);
  EXPECT_FALSE(pass.another());
}

TEST(FramePass, BudgetCountsFromTheStartOfThePass) {
  FakeClock clock;
  FramePass pass(clock, Duration{5}, 4096);
  clock.advance(Duration{4});
  EXPECT_TRUE(pass.another());  // the first frame
  EXPECT_TRUE(pass.another());  // 4 ms in: still within
  clock.advance(Duration{1});
  EXPECT_FALSE(pass.another());  // 5 ms in: spent
}

}  // namespace
}  // namespace cascade::hub
