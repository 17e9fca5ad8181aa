// The scale scenario's change tracker (sim/change_tracker.hpp) on a fake
// clock and fake consumer caches: when a change counts as seen by all, when
// an addition is undone by its own removal, and how a fault stretches a
// deadline.

#include "cascade/sim/change_tracker.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>
#include <string>
#include <utility>

namespace cascade::sim {
namespace {

const proto::ServiceKey kOrders{"orders", "default"};
constexpr Duration kBound{10'000};
constexpr Duration kRecovery{2000};
constexpr std::size_t kPhase = 3;

class ChangeTrackerTest : public ::testing::Test {
 protected:
  ChangeTrackerTest()
      : tracker_([this] { return now_; },
                 [this](std::size_t agent, const proto::ServiceKey&, const std::string& id) {
                   return std::optional<bool>(cached_.contains({agent, id}));
                 },
                 index_, kBound, kRecovery) {
    tracker_.add_consumer(1, {kOrders});
    tracker_.add_consumer(2, {kOrders});
  }

  // The consumer's cache now lists (or no longer lists) the instance, and a
  // DownBeat naming the service arrives.
  void update(std::size_t agent, const std::string& id, bool listed) {
    if (listed)
      cached_.insert({agent, id});
    else
      cached_.erase({agent, id});
    proto::DownBeat down;
    down.updates.emplace_back().service = kOrders;
    tracker_.on_agent_received(now_, agent, down);
  }
  void advance(Duration d) { now_ += d; }
  const ChangeTracker::Change& change(std::size_t i) const { return tracker_.changes().at(i); }

  MonoTime now_ = mono_from_ms(1000);
  std::unordered_map<std::string, std::uint32_t> index_{{"orders", 0}};
  std::set<std::pair<std::size_t, std::string>> cached_;
  ChangeTracker tracker_;
};

TEST_F(ChangeTrackerTest, AChangeIsSeenByAllWhenTheLastConsumerCacheHoldsIt) {
  tracker_.note_change(0, "a", /*added=*/true, kPhase);
  advance(Duration{100});
  update(1, "a", true);
  EXPECT_FALSE(change(0).seen_by_all) << "consumer 2 has not seen it";
  advance(Duration{50});
  update(2, "b", true);  // another instance: not this change
  EXPECT_FALSE(change(0).seen_by_all);
  update(2, "a", true);
  ASSERT_TRUE(change(0).seen_by_all);
  EXPECT_EQ(*change(0).seen_by_all - change(0).at, Duration{150});
  EXPECT_EQ(change(0).phase, kPhase);
}

TEST_F(ChangeTrackerTest, ARemovalIsSeenWhenNoCacheListsTheInstanceAnyMore) {
  cached_ = {{1, "a"}, {2, "a"}};
  tracker_.note_change(0, "a", /*added=*/false, kPhase);
  update(1, "a", false);
  update(2, "a", true);  // an update that still lists it
  EXPECT_FALSE(change(0).seen_by_all);
  update(2, "a", false);
  EXPECT_TRUE(change(0).seen_by_all);
  ASSERT_EQ(tracker_.removed().size(), 1u);
  EXPECT_EQ(tracker_.removed().front().instance_id, "a");
}

TEST_F(ChangeTrackerTest, AnAdditionRemovedBeforeEveryConsumerSawItIsUndoneNotUnseen) {
  tracker_.note_change(0, "a", /*added=*/true, kPhase);
  update(1, "a", true);
  advance(Duration{100});
  tracker_.note_change(0, "a", /*added=*/false, kPhase);  // consumer 2 never saw "a"
  EXPECT_TRUE(change(0).undone);
  EXPECT_FALSE(change(0).seen_by_all);
  update(2, "a", true);  // too late to count: the addition is no longer followed
  EXPECT_FALSE(change(0).seen_by_all);
  update(1, "a", false);
  update(2, "a", false);
  EXPECT_TRUE(change(1).seen_by_all) << "the removal is followed as any other";
  EXPECT_FALSE(change(1).undone);
}

TEST_F(ChangeTrackerTest, AnAdditionPastItsDeadlineStaysUnseenWhenItsInstanceGoes) {
  tracker_.note_change(0, "a", /*added=*/true, kPhase);
  update(1, "a", true);
  advance(kBound + Duration{1});
  tracker_.note_change(0, "a", /*added=*/false, kPhase);
  EXPECT_FALSE(change(0).undone) << "a removal cannot excuse an addition already late";
  EXPECT_FALSE(change(0).seen_by_all);
}

TEST_F(ChangeTrackerTest, AnotherInstanceRemovalUndoesNothing) {
  tracker_.note_change(0, "a", /*added=*/true, kPhase);
  tracker_.note_change(0, "b", /*added=*/false, kPhase);
  EXPECT_FALSE(change(0).undone);
}

TEST_F(ChangeTrackerTest, AFaultOverlappingTheBoundStretchesTheDeadlinePastItsEnd) {
  const MonoTime at = now_;
  EXPECT_EQ(tracker_.deadline(at), at + kBound);
  tracker_.fault(at + Duration{5000}, at + Duration{8000});
  EXPECT_EQ(tracker_.deadline(at), at + Duration{8000} + kRecovery + kBound);
  tracker_.fault(at + kBound + kRecovery + Duration{20'000}, at + Duration{40'000});
  EXPECT_EQ(tracker_.deadline(at), at + Duration{8000} + kRecovery + kBound)
      << "a fault after the deadline changes nothing";
}

}  // namespace
}  // namespace cascade::sim
