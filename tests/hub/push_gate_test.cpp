// PushGate's timing: the coalescing delay, the repeat gap, and which keys a
// flush takes together.

#include "cascade/hub/push_gate.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <string>
#include <vector>

namespace cascade::hub {
namespace {

constexpr MonoTime kStart{Duration{1'000'000}};

class PushGateTest : public ::testing::Test {
 protected:
  // Delay 5 ms, gap 100 ms (the defaults), no cap.
  std::vector<std::string> take_at(Duration since_start) {
    auto keys = gate.take(kStart + since_start, budget);
    std::sort(keys.begin(), keys.end());
    return keys;
  }
  MonoTime at(Duration since_start) const { return kStart + since_start; }
  // "a" changed at 0 and was pushed at 5 ms: its gap runs until 105 ms.
  void push_a_at_5ms() {
    gate.mark(at(Duration{0}), "a");
    ASSERT_EQ(take_at(Duration{5}), std::vector<std::string>{"a"});
    gate.pushed(at(Duration{5}), "a");
  }

  PushConfig config{};
  PushBudget budget{config};
  PushGate<std::string> gate{config};
};

TEST_F(PushGateTest, AChangeIsTakenOnceTheDelayHasPassed) {
  gate.mark(at(Duration{0}), "a");
  EXPECT_EQ(gate.next_deadline(), at(Duration{5}));
  EXPECT_TRUE(take_at(Duration{4}).empty());
  EXPECT_EQ(take_at(Duration{5}), std::vector<std::string>{"a"});
  EXPECT_FALSE(gate.next_deadline().has_value());
}

TEST_F(PushGateTest, KeysMarkedWhileTheTimerRunsGoOutTogether) {
  gate.mark(at(Duration{0}), "a");
  gate.mark(at(Duration{3}), "b");  // its own delay would end at 8
  EXPECT_EQ(take_at(Duration{5}), (std::vector<std::string>{"a", "b"}));
}

TEST_F(PushGateTest, AKeyPushedWithinTheGapWaitsForItsEnd) {
  push_a_at_5ms();

  gate.mark(at(Duration{10}), "a");
  EXPECT_EQ(gate.next_deadline(), at(Duration{105}));
  EXPECT_TRUE(take_at(Duration{15}).empty());
  EXPECT_EQ(take_at(Duration{105}), std::vector<std::string>{"a"});
}

TEST_F(PushGateTest, AKeyHeldByTheGapDoesNotHoldBackAnother) {
  push_a_at_5ms();

  gate.mark(at(Duration{10}), "a");
  gate.mark(at(Duration{10}), "b");
  EXPECT_EQ(take_at(Duration{15}), std::vector<std::string>{"b"});
  EXPECT_EQ(gate.next_deadline(), at(Duration{105})) << "a still pending";
}

TEST_F(PushGateTest, AFlushThatPushedNothingStartsNoGap) {
  gate.mark(at(Duration{0}), "a");
  ASSERT_EQ(take_at(Duration{5}), std::vector<std::string>{"a"});  // every consumer was current

  gate.mark(at(Duration{10}), "a");
  EXPECT_EQ(take_at(Duration{15}), std::vector<std::string>{"a"});
}

TEST_F(PushGateTest, AKeyPushedLongerThanAGapAgoIsOnlyDelayed) {
  push_a_at_5ms();

  gate.mark(at(Duration{300}), "a");
  EXPECT_EQ(gate.next_deadline(), at(Duration{305}));
}

TEST(PushGateNoGap, AGapOfZeroFlushesEveryChangeAfterTheDelay) {
  PushConfig config;
  config.repeat_gap = Duration{0};
  PushBudget budget{config};
  PushGate<std::string> gate{config};
  gate.mark(kStart, "a");
  ASSERT_EQ(gate.take(kStart + Duration{5}, budget).size(), 1u);
  gate.pushed(kStart + Duration{5}, "a");
  gate.mark(kStart + Duration{6}, "a");
  EXPECT_EQ(gate.next_deadline(), kStart + Duration{11});
}

}  // namespace
}  // namespace cascade::hub
