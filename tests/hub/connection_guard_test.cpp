// The connection policy on a virtual clock: which connections the hub closes,
// when, and how many per tick.
#include "cascade/hub/connection_guard.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace cascade::hub {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

constexpr Duration kIdle{10'000};
constexpr Duration kBeat{2'000};
const MonoTime kT0 = mono_from_ms(1'000'000);

ConnectionGuardConfig config(std::size_t max_connections = 100, std::size_t cap = 100) {
  ConnectionGuardConfig c;
  c.max_connections = max_connections;
  c.idle_timeout = kIdle;
  c.max_idle_closes_per_tick = cap;
  return c;
}

TEST(ConnectionGuard, AgentBeatingEveryIntervalIsNeverClosed) {
  ConnectionGuard guard(config());
  ASSERT_TRUE(guard.accepted(7, kT0));
  for (auto t = kT0; t < kT0 + kIdle * 20; t += kBeat) {
    guard.valid_message(7, t, PeerKind::kAgent);
    EXPECT_THAT(guard.tick(t + kBeat - Duration{1}), IsEmpty());
  }
  EXPECT_EQ(guard.open(), 1u);
  EXPECT_EQ(guard.counters().connections_idle_closed, 0u);
}

TEST(ConnectionGuard, ConnectionThatSendsNothingIsClosedExactlyAtTheIdleTimeout) {
  ConnectionGuard guard(config());
  guard.accepted(7, kT0);
  EXPECT_THAT(guard.tick(kT0 + kIdle - Duration{1}), IsEmpty());
  EXPECT_THAT(guard.tick(kT0 + kIdle), ElementsAre(7));
  EXPECT_EQ(guard.open(), 0u);
  EXPECT_EQ(guard.counters().connections_idle_closed, 1u);
}

TEST(ConnectionGuard, AgentThatFallsSilentIsClosedOneTimeoutAfterItsLastValidMessage) {
  ConnectionGuard guard(config());
  guard.accepted(7, kT0);
  guard.valid_message(7, kT0 + kBeat, PeerKind::kAgent);
  EXPECT_THAT(guard.tick(kT0 + kIdle), IsEmpty());
  EXPECT_THAT(guard.tick(kT0 + kBeat + kIdle), ElementsAre(7));
}

TEST(ConnectionGuard, NextDeadlineIsTheOldestSilentConnections) {
  ConnectionGuard guard(config());
  EXPECT_FALSE(guard.next_deadline());
  guard.accepted(7, kT0);
  guard.accepted(8, kT0 + kBeat);
  EXPECT_EQ(guard.next_deadline(), kT0 + kIdle);
  guard.valid_message(7, kT0 + kBeat * 2, PeerKind::kAgent);
  EXPECT_EQ(guard.next_deadline(), kT0 + kBeat + kIdle);
}

TEST(ConnectionGuard, LowerTierHubOrProxyIsNeverClosedForIdleness) {
  ConnectionGuard guard(config());
  guard.accepted(7, kT0);
  guard.valid_message(7, kT0 + kBeat, PeerKind::kTrusted);
  guard.valid_message(7, kT0 + kBeat * 2, PeerKind::kAgent);  // stays trusted
  EXPECT_THAT(guard.tick(kT0 + kIdle * 100), IsEmpty());
  EXPECT_EQ(guard.trusted(), 1u);
  guard.closed(7);
  EXPECT_EQ(guard.trusted(), 0u);
  EXPECT_EQ(guard.open(), 0u);
}

TEST(ConnectionGuard, ConnectionBeyondTheLimitIsRefusedUntilASlotFrees) {
  ConnectionGuard guard(config(2));
  EXPECT_TRUE(guard.accepted(7, kT0));
  EXPECT_TRUE(guard.accepted(8, kT0));
  EXPECT_FALSE(guard.accepted(9, kT0));
  EXPECT_EQ(guard.open(), 2u);
  EXPECT_EQ(guard.counters().connections_refused, 1u);
  guard.closed(9);  // the refused one, closed by the shell: not tracked
  EXPECT_EQ(guard.open(), 2u);
  guard.closed(7);
  EXPECT_TRUE(guard.accepted(9, kT0));
  EXPECT_EQ(guard.counters().connections_accepted, 4u);
}

TEST(ConnectionGuard, ZeroLimitAdmitsEveryConnection) {
  ConnectionGuard guard(config(0));
  for (int fd = 0; fd < 1000; ++fd)
    ASSERT_TRUE(guard.accepted(fd, kT0));
  EXPECT_EQ(guard.open(), 1000u);
}

TEST(ConnectionGuard, IdleClosesPerTickAreCappedAndTheRestFollowOnTheNextTick) {
  ConnectionGuard guard(config(100, 3));
  for (int fd = 10; fd < 15; ++fd)
    guard.accepted(fd, kT0 + Duration{fd});
  const auto late = kT0 + kIdle * 2;
  EXPECT_THAT(guard.tick(late), ElementsAre(10, 11, 12));  // oldest deadline first
  EXPECT_EQ(guard.counters().idle_closes_deferred, 1u);
  EXPECT_THAT(guard.tick(late), ElementsAre(13, 14));
  EXPECT_EQ(guard.counters().idle_closes_deferred, 1u);
  EXPECT_EQ(guard.counters().connections_idle_closed, 5u);
}

TEST(ConnectionGuard, CloseOfAConnectionTheGuardClosedIsIgnored) {
  ConnectionGuard guard(config());
  guard.accepted(7, kT0);
  ASSERT_THAT(guard.tick(kT0 + kIdle), ElementsAre(7));
  guard.closed(7);
  EXPECT_EQ(guard.open(), 0u);
  EXPECT_EQ(guard.counters().connections_closed, 1u);
}

TEST(ConnectionGuard, ReusedFdIsANewConnectionWithAFreshDeadline) {
  ConnectionGuard guard(config());
  guard.accepted(7, kT0);
  guard.closed(7);
  guard.accepted(7, kT0 + kIdle - Duration{1});
  EXPECT_THAT(guard.tick(kT0 + kIdle), IsEmpty());
  EXPECT_THAT(guard.tick(kT0 + kIdle * 2 - Duration{1}), ElementsAre(7));
}

TEST(ConnectionGuard, AcceptOnATrackedFdReplacesTheConnectionWhoseCloseWasMissed) {
  ConnectionGuard guard(config());
  guard.accepted(7, kT0);
  guard.valid_message(7, kT0, PeerKind::kTrusted);
  guard.accepted(7, kT0 + kBeat);  // a new peer: not trusted, its own deadline
  EXPECT_EQ(guard.open(), 1u);
  EXPECT_EQ(guard.trusted(), 0u);
  EXPECT_THAT(guard.tick(kT0 + kBeat + kIdle), ElementsAre(7));
}

TEST(ConnectionGuard, MessageOnAnUnknownFdChangesNothing) {
  ConnectionGuard guard(config());
  guard.valid_message(7, kT0, PeerKind::kTrusted);
  EXPECT_EQ(guard.open(), 0u);
  EXPECT_EQ(guard.trusted(), 0u);
}

TEST(ConnectionGuard, ZeroIdleTimeoutNeverClosesForIdleness) {
  auto c = config();
  c.idle_timeout = Duration{0};
  ConnectionGuard guard(c);
  guard.accepted(7, kT0);
  EXPECT_THAT(guard.tick(kT0 + kIdle * 1000), IsEmpty());
  EXPECT_FALSE(guard.next_deadline());
}

TEST(ConnectionGuard, LimitLeavesRoomForTheFilesEverythingElseNeeds) {
  EXPECT_EQ(effective_connection_limit(65'536, 1'048'576, 128), 65'536u);
  EXPECT_EQ(effective_connection_limit(65'536, 1'024, 128), 896u);
  EXPECT_EQ(effective_connection_limit(0, 1'024, 128), 896u);
  EXPECT_EQ(effective_connection_limit(10, 100, 128), 1u);
}

TEST(ConnectionGuard, ConfigWithoutIdleClosesPerTickIsRejected) {
  auto c = config();
  EXPECT_EQ(check_connection_guard_config(c), "");
  c.max_idle_closes_per_tick = 0;
  EXPECT_NE(check_connection_guard_config(c), "");
}

TEST(ConnectionGuard, CountersAreListedByName) {
  ConnectionGuard guard(config(1));
  guard.accepted(7, kT0);
  guard.accepted(8, kT0);
  const auto list = guard.counters().list();
  EXPECT_EQ(list.front(), (std::pair<std::string, std::uint64_t>{"connections_accepted", 2}));
  EXPECT_EQ(list.at(1), (std::pair<std::string, std::uint64_t>{"connections_refused", 1}));
}

}  // namespace
}  // namespace cascade::hub
