// A hub whose serving thread falls behind grants longer intervals and leases
// (protocol section 5.17), through HubCore: what the replies grant, and that
// a lease granted long is never cut short while the stretch comes down. A
// frame shed unread (section 5.18) is answered busy and costs no lease.
#include <gtest/gtest.h>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

constexpr Duration kInterval{2000};
constexpr Duration kLease{6000};
constexpr Duration kPass{10};

HubCoreConfig config() {
  HubCoreConfig c{"hub-a", 1, kLease};
  c.beat_interval = kInterval;
  return c;
}

// The serving loop for `span`: passes of 10 ms, busy `busy_share` of each,
// the core ticked after each as the server does.
void serve(HubCore& hub, FakeClock& clock, Duration span, double busy_share, bool backlog) {
  for (const auto until = clock.now() + span; clock.now() < until;) {
    clock.advance(kPass);
    hub.on_serving_pass(clock.now(),
                        std::chrono::duration_cast<std::chrono::microseconds>(kPass * busy_share),
                        backlog);
    hub.tick(clock.now());
  }
}

class OverloadTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubCore hub{config(), /*epoch=*/7, clock.now()};

  void TearDown() override { expect_totals_kept(hub, "the test"); }

  proto::DownBeat send(const proto::UpBeat& b) {
    auto r = hub.handle(clock.now(), b);
    auto* down = std::get_if<proto::DownBeat>(&r.reply);
    EXPECT_NE(down, nullptr) << "reply is not a DownBeat";
    return down ? *down : proto::DownBeat{};
  }
  void fall_behind(Duration span) { serve(hub, clock, span, 1.0, true); }
  void keep_up(Duration span) { serve(hub, clock, span, 0.1, false); }
};

TEST_F(OverloadTest, AHubThatKeepsUpGrantsItsLeaseAndNoInterval) {
  keep_up(Duration{5000});
  const auto down = send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  EXPECT_EQ(down.interval_ms, 0u);
  EXPECT_EQ(down.lease_ms, kLease.count());
}

TEST_F(OverloadTest, AHubThatFallsBehindGrantsAnIntervalAndALeaseAsMuchLonger) {
  fall_behind(Duration{400});
  const auto down = send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  EXPECT_EQ(down.interval_ms, 2 * kInterval.count());
  EXPECT_EQ(down.lease_ms, 2 * kLease.count());
  EXPECT_EQ(hub.governor().stretch(), 2u);
}

// The node told to beat every 4 s keeps its instances for the 12 s lease it
// was granted, not the configured 6 s.
TEST_F(OverloadTest, ANodeGrantedALongerLeaseIsNotExpiredAtTheConfiguredOne) {
  fall_behind(Duration{400});
  send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  fall_behind(2 * kLease - Duration{100});
  EXPECT_EQ(hub.counters().nodes_expired, 0u);
  fall_behind(Duration{200});
  EXPECT_EQ(hub.counters().nodes_expired, 1u);
}

// The crashed hub had told its fleet to beat every 16 s: the restarted one
// (its governor back at 1) must not expire them at the configured 6 s lease
// before their next beat. (At 1M, 200,000 live agents were: docs/
// benchmarks.md, "Hub restart at 1M instances".)
TEST_F(OverloadTest, AHubRestartedWhileItsFleetWasStretchedGivesTheStretchedLeaseAsGrace) {
  fall_behind(Duration{400} + 6 * kInterval);
  ASSERT_EQ(hub.governor().stretch(), 8u);
  send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  const auto batch = hub.take_persist_batch();
  ASSERT_EQ(batch.settings.size(), 1u);
  EXPECT_EQ(batch.settings[0], (SettingRecord{std::string(kSettingGrantedStretch), 8}));

  HubSnapshot snapshot;
  snapshot.nodes = batch.node_upserts;
  snapshot.instances = batch.instance_upserts;
  snapshot.settings = batch.settings;
  HubCore restarted{config(), /*epoch=*/8, clock.now()};
  restarted.restore(snapshot, clock.now());
  serve(restarted, clock, 8 * kLease - Duration{100}, 0.1, false);
  EXPECT_EQ(restarted.counters().nodes_expired, 0u) << "a live agent beating every 16 s";
  serve(restarted, clock, Duration{200}, 0.1, false);
  EXPECT_EQ(restarted.counters().nodes_expired, 1u) << "one that never came back goes then";
}

// Nor does it tell that fleet, at its first replies, to beat eight times as
// often: it resumes at the stretch the fleet holds and relaxes it as any.
TEST_F(OverloadTest, AHubRestartedWhileItsFleetWasStretchedResumesAtThatStretch) {
  fall_behind(Duration{400} + 6 * kInterval);
  ASSERT_EQ(hub.governor().stretch(), 8u);
  HubSnapshot snapshot;
  snapshot.settings = {{std::string(kSettingGrantedStretch), 8}};
  HubCore restarted{config(), /*epoch=*/8, clock.now()};
  restarted.restore(snapshot, clock.now());
  auto r = restarted.handle(clock.now(), beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  const auto* down = std::get_if<proto::DownBeat>(&r.reply);
  ASSERT_NE(down, nullptr);
  EXPECT_EQ(down->interval_ms, 8 * kInterval.count());
  EXPECT_EQ(down->lease_ms, 8 * kLease.count());
  serve(restarted, clock, Duration{120'000}, 0.05, false);
  EXPECT_EQ(restarted.governor().stretch(), 1u) << "a calm hub relaxes a resumed stretch";
}

// While the stretch comes down, a new lease is granted until at least the
// latest deadline already granted: one granted long is not outlived by
// shorter ones queued after it, and the node holding it keeps it. (A lease of
// five intervals here: at three, each halving comes just as the longest
// lease granted at the level before runs out.)
TEST(OverloadLeaseTest, WhileTheStretchComesDownNoGrantedLeaseIsCutShort) {
  FakeClock clock;
  auto c = config();
  c.lease = 5 * kInterval;
  HubCore hub{c, /*epoch=*/7, clock.now()};
  const auto beat_now = [&](const std::string& node, const std::string& address) {
    auto r = hub.handle(clock.now(), beat_with_set(node, 1, {reg("svc", node, address)}));
    return std::get<proto::DownBeat>(r.reply);
  };
  serve(hub, clock, Duration{400} + 6 * kInterval, 1.0, true);
  ASSERT_EQ(hub.governor().stretch(), 8u);
  const auto first = beat_now("long", "10.0.0.1:80");
  ASSERT_EQ(Duration{first.lease_ms}, 8 * c.lease);
  const auto granted_at = clock.now();
  while (hub.governor().stretch() == 8)  // the load passed
    serve(hub, clock, Duration{100}, 0.05, false);
  const auto later = beat_now("short", "10.0.0.2:80");
  const auto left_of_first = 8 * c.lease - (clock.now() - granted_at);
  ASSERT_LT(4 * c.lease, left_of_first) << "the test needs a shorter lease to grant";
  EXPECT_EQ(Duration{later.lease_ms}, left_of_first);
  EXPECT_EQ(Duration{later.interval_ms}, 4 * kInterval);
  serve(hub, clock, left_of_first - Duration{100}, 0.05, false);
  EXPECT_EQ(hub.counters().nodes_expired, 0u) << "the node granted 80 s still holds its lease";
  serve(hub, clock, Duration{200}, 0.05, false);
  EXPECT_EQ(hub.counters().nodes_expired, 2u);
  expect_totals_kept(hub, "the test");
}

TEST_F(OverloadTest, TheStretchReturnsToOneAfterTheLoadAndTheRepliesStopGrantingAnInterval) {
  fall_behind(Duration{400});
  fall_behind(Duration{2000});
  ASSERT_EQ(hub.governor().stretch(), 4u);
  keep_up(Duration{60'000});
  EXPECT_EQ(hub.governor().stretch(), 1u);
  const auto down = send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  EXPECT_EQ(down.interval_ms, 0u);
  EXPECT_EQ(down.lease_ms, kLease.count());
}

TEST_F(OverloadTest, StatusShowsTheStretchAndItsChanges) {
  fall_behind(Duration{400});
  const auto status = hub.status(clock.now());
  const auto value = [&](const std::string& name) {
    for (const auto& [key, v] : status.counters)
      if (key == name) return v;
    ADD_FAILURE() << name << " not in status";
    return std::uint64_t{0};
  };
  EXPECT_EQ(value("interval_stretch"), 2u);
  EXPECT_EQ(value("interval_stretched"), 1u);
  EXPECT_EQ(value("interval_relaxed"), 0u);
}

// ---------------------------------------------- shed frames (section 5.18)

TEST_F(OverloadTest, ABusyReplyNamesTheShedMessageAndAsksForTheGrantedInterval) {
  auto busy = hub.on_frame_shed(clock.now(), 42, Duration{27});
  EXPECT_EQ(busy.code, proto::ErrorCode::kBusy);
  EXPECT_EQ(busy.ref, 42u);
  EXPECT_EQ(busy.retry_after_ms, kInterval.count());
  fall_behind(Duration{400});
  busy = hub.on_frame_shed(clock.now(), 0, Duration{27});
  EXPECT_EQ(busy.retry_after_ms, 2 * kInterval.count()) << "the stretched interval";
  EXPECT_EQ(hub.counters().frames_shed, 2u);
}

// The node's beats were shed: the hub cannot tell it from a dead one, so its
// lease waits for the retry the busy reply asked for; a node that stays
// silent past that expires as before.
TEST_F(OverloadTest, ALeaseThatRunsOutWhileTheHubShedsWaitsForTheRetryItAskedFor) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  keep_up(kLease - Duration{500});
  Duration advice{0};
  for (int i = 0; i < 10; ++i) {  // a second of shedding across the lease's end
    advice = Duration{hub.on_frame_shed(clock.now(), 0, Duration{25}).retry_after_ms};
    keep_up(Duration{100});
  }
  EXPECT_EQ(hub.counters().nodes_expired, 0u);
  EXPECT_EQ(hub.counters().expiries_postponed, 1u);
  keep_up(2 * advice - Duration{200});  // the grace: twice the last retry advice
  EXPECT_EQ(hub.counters().nodes_expired, 0u);
  keep_up(Duration{400});
  EXPECT_EQ(hub.counters().nodes_expired, 1u) << "silent past the grace";
}

TEST_F(OverloadTest, ANodeWhoseBeatWasShedKeepsItsInstancesWhenItComesBack) {
  const auto registration = reg("svc", "i1", "10.0.0.1:80");
  send(beat_with_set("n1", 1, {registration}));
  keep_up(kLease - Duration{100});
  hub.on_frame_shed(clock.now(), 2, Duration{25});
  keep_up(kInterval + Duration{500});  // its retry, after the advice and some jitter
  send(beat("n1", 3, digest({registration})));
  keep_up(kLease - Duration{100});
  EXPECT_EQ(hub.counters().nodes_expired, 0u);
  EXPECT_EQ(hub.counters().instances_expired, 0u);
}

TEST_F(OverloadTest, WithoutSheddingALeaseRunsOutOnTime) {
  send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}));
  keep_up(kLease + Duration{100});
  EXPECT_EQ(hub.counters().nodes_expired, 1u);
  EXPECT_EQ(hub.counters().expiries_postponed, 0u);
}

}  // namespace
}  // namespace cascade::hub
