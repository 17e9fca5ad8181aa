// The hub's own queue (hub/inbound_queue.hpp): frames come out oldest
// first, marked to shed once they waited past the bound in a queue that
// stands (not a burst), and the queue stops taking frames at its frame and
// byte limits.
#include "cascade/hub/inbound_queue.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cascade::hub {
namespace {

InboundQueue::Frames frame(const std::string& payload) {
  InboundQueue::Frames frames;
  frames.emplace_back(std::string_view("peer"));
  frames.emplace_back(std::string_view(payload));
  return frames;
}

MonoTime at(std::int64_t ms) {
  return MonoTime{Duration{ms}};
}

TEST(InboundQueueTest, FramesComeOutOldestFirstWithHowLongTheyWaited) {
  InboundQueue queue({.shed_after = Duration{20}});
  queue.push(at(100), frame("a"));
  queue.push(at(105), frame("b"));
  auto first = queue.pop(at(110));
  ASSERT_TRUE(first);
  EXPECT_EQ(first->frames.back().to_string(), "a");
  EXPECT_EQ(first->waited, Duration{10});
  EXPECT_FALSE(first->shed);
  auto second = queue.pop(at(125));
  ASSERT_TRUE(second);
  EXPECT_EQ(second->frames.back().to_string(), "b");
  EXPECT_EQ(second->waited, Duration{20});
  EXPECT_FALSE(second->shed) << "at the bound is within it";
  EXPECT_FALSE(queue.pop(at(130)));
}

// A registration wave, a proxy's flush: past the bound for a moment, then
// drained. Nothing of it is shed.
TEST(InboundQueueTest, ABurstThatDrainsBeforeTheQueueStandsIsServedWhole) {
  InboundQueue queue({.shed_after = Duration{20}, .standing_for = Duration{100}, .min_depth = 0});
  for (int i = 0; i < 10; ++i)
    queue.push(at(0), frame("burst"));
  queue.push(at(95), frame("after"));
  for (int i = 0; i < 10; ++i)
    EXPECT_FALSE(queue.pop(at(25 + 8 * i))->shed) << "frame " << i;  // waited 25..97 ms
  EXPECT_FALSE(queue.pop(at(100))->shed) << "the queue drained: the wait starts over";
}

// The hub is behind: frames have waited past the bound for 100 ms on end.
TEST(InboundQueueTest, AQueueStandingPastTheBoundShedsWhatWaitedTooLong) {
  InboundQueue queue({.shed_after = Duration{20}, .standing_for = Duration{100}, .min_depth = 0});
  for (int i = 0; i < 12; ++i)
    queue.push(at(10 * i), frame("old"));
  queue.push(at(135), frame("fresh"));
  std::vector<bool> shed;
  for (int i = 0; i < 12; ++i)
    shed.push_back(queue.pop(at(30 + 10 * i))->shed);  // each waited 30 ms
  EXPECT_EQ(std::count(shed.begin(), shed.begin() + 10, true), 0) << "not standing yet";
  EXPECT_TRUE(shed[10]) << "past the bound for 100 ms";
  EXPECT_TRUE(shed[11]);
  EXPECT_FALSE(queue.pop(at(145))->shed) << "within the bound: served";
}

// Shedding keeps the wait near the bound: a frame past it soon after a shed
// is shed at once, not after another 100 ms of waiting. Ten quiet standing
// periods later, the queue must stand again.
TEST(InboundQueueTest, SoonAfterAShedAFramePastTheBoundIsShedAtOnce) {
  InboundQueue queue({.shed_after = Duration{20}, .standing_for = Duration{100}, .min_depth = 0});
  queue.push(at(0), frame("a"));
  queue.push(at(0), frame("b"));
  ASSERT_FALSE(queue.pop(at(30))->shed);
  ASSERT_TRUE(queue.pop(at(130))->shed);
  queue.push(at(130), frame("fresh"));
  EXPECT_FALSE(queue.pop(at(135))->shed);
  queue.push(at(140), frame("late"));
  EXPECT_TRUE(queue.pop(at(170))->shed) << "shed lately: at once";
  queue.push(at(1'200), frame("much later"));
  EXPECT_FALSE(queue.pop(at(1'230))->shed) << "a second without a shed: it must stand again";
}

// A registration wave's batches take longer each than the bound: a handful
// queued waits past it, and is still served, not shed.
TEST(InboundQueueTest, AShortQueueOfHeavyFramesIsNeverShed) {
  const auto shed_of_eight_heavy_frames = [](std::size_t min_depth) {
    InboundQueue queue(
        {.shed_after = Duration{20}, .standing_for = Duration{50}, .min_depth = min_depth});
    for (int i = 0; i < 8; ++i)
      queue.push(at(0), frame("1024 full sets"));
    int shed = 0;
    for (int i = 0; i < 8; ++i)
      shed += queue.pop(at(30 * (i + 1)))->shed ? 1 : 0;  // 30 ms of work each
    return shed;
  };
  EXPECT_EQ(shed_of_eight_heavy_frames(64), 0);
  EXPECT_GT(shed_of_eight_heavy_frames(0), 0) << "as deep a queue of light frames would be";
}

TEST(InboundQueueTest, ABoundOfZeroNeverSheds) {
  InboundQueue queue({.shed_after = Duration{0}, .standing_for = Duration{0}, .min_depth = 0});
  for (int i = 0; i < 3; ++i)
    queue.push(at(0), frame("old"));
  for (int i = 0; i < 3; ++i)
    EXPECT_FALSE(queue.pop(at(60'000 + i))->shed);
}

TEST(InboundQueueTest, TheQueueStopsTakingFramesAtItsFrameLimit) {
  InboundQueue queue({.shed_after = Duration{20}, .max_frames = 2});
  EXPECT_TRUE(queue.has_room());
  queue.push(at(0), frame("a"));
  EXPECT_TRUE(queue.has_room());
  queue.push(at(0), frame("b"));
  EXPECT_FALSE(queue.has_room());
  queue.pop(at(1));
  EXPECT_TRUE(queue.has_room());
}

TEST(InboundQueueTest, TheQueueStopsTakingFramesAtItsByteLimitButTakesOneWhenEmpty) {
  InboundQueue queue({.shed_after = Duration{20}, .max_frames = 100, .max_bytes = 10});
  queue.push(at(0), frame(std::string(64, 'x')));  // larger than the limit: taken, alone
  EXPECT_FALSE(queue.has_room());
  queue.pop(at(1));
  EXPECT_TRUE(queue.empty());
  EXPECT_TRUE(queue.has_room());
  queue.push(at(2), frame("12345"));
  EXPECT_TRUE(queue.has_room());
  queue.push(at(2), frame("67890"));
  EXPECT_FALSE(queue.has_room()) << "10 bytes queued";
  EXPECT_EQ(queue.size(), 2u);
}

}  // namespace
}  // namespace cascade::hub
