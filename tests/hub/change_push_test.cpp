// Every change of a served list reaches the consumers between beats: a new
// instance, a graceful deregistration, an expiry and a status change are
// pushed within the push delay like isolations, in the hub's own tier and,
// through an L2, in another datacenter.

#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <vector>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/hub/tier_harness.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using proto::Health;

const std::string kService = "pay";
constexpr Duration kPushDelay{5};  // PushConfig's default coalescing window

HubCoreConfig one_hub() {
  HubCoreConfig config;
  config.hub_id = "hub-a";
  config.lease = Duration{6000};
  return config;
}

// Providers p1 and p2 offer `pay`; consumers c1..c3 use it. Every list is
// current after the set-up, so any later update a consumer gets is news.
class ChangePush : public ::testing::Test {
 protected:
  void SetUp() override {
    rig.provider("p1", {reg(kService, "p1", "10.0.0.1:80")});
    rig.provider("p2", {reg(kService, "p2", "10.0.0.2:80")});
    for (const auto& c : consumers)
      rig.consumer(c, {kService});
    rig.advance(Duration{100});
  }

  // Moves the clock in 1 ms steps (agents beat when due) until every
  // consumer holds the hub's list of `pay`; how long that took.
  std::optional<Duration> time_until_consumers_current(Duration limit) {
    for (Duration waited{0}; waited <= limit; waited += Duration{1}) {
      if (consumers_current()) return waited;
      rig.advance(Duration{1}, Duration{1});
    }
    return std::nullopt;
  }
  bool consumers_current() {
    const auto* svc = rig.hub.registry().find(test_support::key(kService));
    for (const auto& c : consumers)
      if (rig.list(c, kService).version != svc->version) return false;
    return true;
  }
  std::size_t pushes_to_consumers() const {
    std::size_t n = 0;
    for (const auto& c : consumers)
      n += rig.pushes_to(c).size();
    return n;
  }
  bool held_by_every_consumer(const std::string& id) {
    for (const auto& c : consumers)
      if (!rig.list(c, kService).instances.contains(id)) return false;
    return true;
  }

  HubRig rig{one_hub()};
  const std::vector<std::string> consumers{"c1", "c2", "c3"};
};

TEST_F(ChangePush, ANewInstanceOfAFollowedServiceIsPushedWithinThePushDelay) {
  rig.provider("p3", {reg(kService, "p3", "10.0.0.3:80")});
  EXPECT_EQ(pushes_to_consumers(), 0u) << "coalesced: nothing before the push delay";

  const auto took = time_until_consumers_current(Duration{1000});
  ASSERT_TRUE(took.has_value()) << "consumers learn a new instance between beats";
  EXPECT_LE(*took, kPushDelay);
  EXPECT_TRUE(held_by_every_consumer("p3"));
  EXPECT_EQ(pushes_to_consumers(), consumers.size()) << "one push per consumer";
  EXPECT_EQ(rig.pushes_to("c1").back().updates.at(0).kind, proto::UpdateKind::kDelta);
}

TEST_F(ChangePush, AGracefulDeregistrationIsPushedAsARemoval) {
  rig.deregister("p1");

  const auto took = time_until_consumers_current(Duration{1000});
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kPushDelay);
  for (const auto& c : consumers) {
    SCOPED_TRACE(c);
    EXPECT_FALSE(rig.list(c, kService).instances.contains("p1"));
    const auto& update = rig.pushes_to(c).back().updates.at(0);
    EXPECT_EQ(update.removed, std::vector<std::string>{"p1"});
    EXPECT_TRUE(update.upserts.empty());
  }
}

TEST_F(ChangePush, AnExpiryIsPushedAtTheTickThatExpiresTheLease) {
  rig.silence("p1");
  const auto* svc = rig.hub.registry().find(test_support::key(kService));
  const auto version = svc->version;
  while (svc->version == version)  // the lease runs out (or the guard holds p1 unconfirmed)
    rig.advance(Duration{1}, Duration{1});
  const auto pushes_before = pushes_to_consumers();

  const auto took = time_until_consumers_current(Duration{1000});
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kPushDelay);
  EXPECT_EQ(pushes_to_consumers(), pushes_before + consumers.size());
  const auto& held = rig.list("c1", kService).instances;
  EXPECT_TRUE(!held.contains("p1") || held.at("p1").health == Health::kUnconfirmed)
      << "p1 is gone or served as unconfirmed, as the hub serves it";
}

TEST_F(ChangePush, AStatusChangeIsPushed) {
  auto down = reg(kService, "p2", "10.0.0.2:80");
  down.instance.status = proto::InstanceStatus::kDown;
  rig.provider("p2", {down});  // the digest moved: the hub asks for the set
  rig.beat("p2");
  ASSERT_EQ(rig.entry(kService, "p2")->status(), proto::InstanceStatus::kDown);

  const auto took = time_until_consumers_current(Duration{1000});
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kPushDelay);
  EXPECT_EQ(rig.list("c2", kService).instances.at("p2").status, proto::InstanceStatus::kDown);
}

// A mass change (providers joining every 10 ms for 1 s) is pushed at most
// once per repeat gap, each push carrying everything since the last, and the
// consumers hold the last change within a gap of it.
TEST_F(ChangePush, AServiceThatKeepsChangingIsPushedAtMostOncePerRepeatGap) {
  constexpr Duration kRepeatGap = PushConfig{}.repeat_gap;
  constexpr int kJoins = 100;
  for (int i = 0; i < kJoins; ++i) {
    const auto id = "n" + std::to_string(i);
    rig.provider(id, {reg(kService, id, "10.1.0." + std::to_string(i) + ":80")});
    rig.advance(Duration{10}, Duration{1});
  }
  const auto took = time_until_consumers_current(kRepeatGap + kPushDelay);
  ASSERT_TRUE(took.has_value()) << "the last change is pushed once the gap has passed";
  EXPECT_TRUE(held_by_every_consumer("n" + std::to_string(kJoins - 1)));

  const auto span = Duration{10} * kJoins + *took;
  const auto most = static_cast<std::size_t>(span / kRepeatGap) + 1;
  for (const auto& c : consumers) {
    SCOPED_TRACE(c);
    const auto& pushed = rig.agent(c).pushed_at;
    EXPECT_LE(pushed.size(), most) << "one push per gap, not one per change";
    EXPECT_GE(pushed.size(), most - 2) << "pushed all along, not only at the end";
    for (std::size_t i = 1; i < pushed.size(); ++i)
      EXPECT_GE(pushed[i] - pushed[i - 1], kRepeatGap);
  }
}

// The gap holds back only a key that was just flushed: a change after a quiet
// gap goes out after the coalescing delay alone.
TEST_F(ChangePush, AChangeAfterAQuietGapIsPushedWithinThePushDelay) {
  rig.provider("p3", {reg(kService, "p3", "10.0.0.3:80")});
  ASSERT_TRUE(time_until_consumers_current(Duration{1000}).has_value());
  rig.advance(PushConfig{}.repeat_gap, Duration{1});

  rig.deregister("p3");
  const auto took = time_until_consumers_current(Duration{1000});
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kPushDelay);
}

// Three consumers holding the same version are sent one update built once;
// each counts as sent.
TEST_F(ChangePush, EveryConsumersUpdateIsCountedAsSent) {
  const auto deltas = rig.counter("updates_delta");
  rig.provider("p3", {reg(kService, "p3", "10.0.0.3:80")});
  ASSERT_TRUE(time_until_consumers_current(Duration{1000}).has_value());
  EXPECT_EQ(rig.counter("updates_delta"), deltas + consumers.size());
}

TEST_F(ChangePush, AServiceNobodyFollowsIsNotPushed) {
  rig.provider("p9", {reg("audit", "p9", "10.0.0.9:80")});
  rig.advance(Duration{100});
  EXPECT_EQ(pushes_to_consumers(), 0u);
  EXPECT_EQ(rig.hub.counters().pushes, 0u);
}

// A consumer that looked a service up before anyone registered it is told
// of the first registration between its beats, like any change.
TEST_F(ChangePush, TheFirstRegistrationOfAServiceAWaitingConsumerUsesIsPushed) {
  rig.consumer("c9", {"audit"});
  rig.advance(Duration{100});
  ASSERT_TRUE(rig.list("c9", "audit").instances.empty());
  rig.provider("p9", {reg("audit", "p9", "10.0.0.9:80")});
  for (Duration waited{0}; waited <= kPushDelay && rig.pushes_to("c9").empty();
       waited += Duration{1})
    rig.advance(Duration{1}, Duration{1});
  ASSERT_EQ(rig.pushes_to("c9").size(), 1u) << "pushed within the push delay, not at a beat";
  EXPECT_TRUE(rig.list("c9", "audit").instances.contains("p9"));
}

// Its second beat finds the waiter entry its first one left: still "gone".
TEST_F(ChangePush, AWaitingConsumerWithAStaleVersionStillHearsTheServiceIsGone) {
  for (std::uint64_t seq = 1; seq <= 2; ++seq) {
    SCOPED_TRACE(seq);
    const auto reply = std::get<proto::DownBeat>(
        rig.handle(beat("c9", seq, digest({}), {use("audit", 12345)})).reply);
    ASSERT_EQ(reply.updates.size(), 1u);
    EXPECT_EQ(reply.updates[0].kind, proto::UpdateKind::kGone);
  }
  ASSERT_NE(rig.hub.registry().find(test_support::key("audit")), nullptr);
}

// ---------------------------------------------------------------- across tiers

// dc1 and dc2, one L1 each, under one L2: providers in dc2, consumers in dc1,
// whose hub follows `pay` at the L2.
class ChangePushAcrossTiers : public ::testing::Test {
 protected:
  void SetUp() override {
    net.add({.id = "l2", .tier = 2});
    net.add({.id = "l1-dc1", .upstreams = {"l2"}});
    net.add({.id = "l1-dc2", .upstreams = {"l2"}});
    net.advance(Duration{100});
    net.agent("l1-dc2", "p1", {reg(kService, "p1", "10.2.0.1:80")});
    net.agent("l1-dc2", "p2", {reg(kService, "p2", "10.2.0.2:80")});
    net.advance(Duration{100});
    for (const auto& c : consumers)
      net.consumer("l1-dc1", c, {kService});
    net.advance(Duration{4100});  // two beats: asked from L2, then followed
    for (const auto& c : consumers)
      EXPECT_EQ(net.list(c, kService).instances.size(), 2u) << c << " follows pay across tiers";
  }

  // Moves the clock in 1 ms steps until every dc1 consumer holds (or no
  // longer holds) instance `id`; how long that took.
  std::optional<Duration> time_until_consumers_see(const std::string& id, bool present) {
    for (Duration waited{0}; waited <= Duration{3000}; waited += Duration{1}) {
      bool all = true;
      for (const auto& c : consumers)
        all = all && net.list(c, kService).instances.contains(id) == present;
      if (all) return waited;
      net.advance(Duration{1}, Duration{1});
    }
    return std::nullopt;
  }
  // Pushes each consumer got so far (the first answer may have been pushed
  // to some of them, when it came after their beat).
  std::vector<std::size_t> pushes_so_far() const {
    std::vector<std::size_t> counts;
    for (const auto& c : consumers)
      counts.push_back(net.pushes_to(c).size());
    return counts;
  }
  void expect_learnt_by_push(const std::vector<std::size_t>& pushes_before) {
    for (std::size_t i = 0; i < consumers.size(); ++i)
      EXPECT_GT(net.pushes_to(consumers[i]).size(), pushes_before[i])
          << consumers[i] << " learnt by push";
  }

  TierHarness net;
  const std::vector<std::string> consumers{"c1", "c2"};
  // Up to dc2's uplink change delay (20 ms), then two pushes of 5 ms each.
  static constexpr Duration kCrossTierBound{50};
};

TEST_F(ChangePushAcrossTiers, ADeregistrationInDc2ReachesDc1ConsumersByPushWithin50ms) {
  const auto pushes_before = pushes_so_far();
  net.stop("p1");
  const auto took = time_until_consumers_see("p1", false);
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kCrossTierBound);
  expect_learnt_by_push(pushes_before);
}

TEST_F(ChangePushAcrossTiers, ANewInstanceInDc2ReachesDc1ConsumersByPushWithin50ms) {
  const auto pushes_before = pushes_so_far();
  net.agent("l1-dc2", "p3", {reg(kService, "p3", "10.2.0.3:80")});
  const auto took = time_until_consumers_see("p3", true);
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kCrossTierBound);
  expect_learnt_by_push(pushes_before);
}

// Two providers, one silent: eviction protection may hold it (served as
// unconfirmed) rather than expire it. Either way dc1 learns it by push.
TEST_F(ChangePushAcrossTiers, AnExpiryInDc2ReachesDc1ConsumersByPushWithin50msOfTheExpiry) {
  net.kill("p1");
  const auto* svc = net.hub("l1-dc2").registry().find(test_support::key(kService));
  const auto expired_or_held = [&] {
    return !svc->instances.contains("p1") ||
           svc->instances.at("p1").health() == Health::kUnconfirmed;
  };
  while (!expired_or_held())
    net.advance(Duration{1}, Duration{1});
  const bool removed = !svc->instances.contains("p1");
  const auto pushes_before = pushes_so_far();

  std::optional<Duration> took;
  for (Duration waited{0}; !took && waited <= Duration{3000}; waited += Duration{1}) {
    bool all = true;
    for (const auto& c : consumers) {
      const auto& held = net.list(c, kService).instances;
      all = all && (removed ? !held.contains("p1")
                            : held.contains("p1") && held.at("p1").health == Health::kUnconfirmed);
    }
    if (all)
      took = waited;
    else
      net.advance(Duration{1}, Duration{1});
  }
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kCrossTierBound);
  expect_learnt_by_push(pushes_before);
}

// A dc1 consumer waiting for a service nobody offers anywhere yet: dc1's hub
// declares the wait upstream (its link pins the service), so L2 follows it
// like any service and pushes the first registration down at once.
TEST_F(ChangePushAcrossTiers,
       AServiceFirstRegisteredInDc2ReachesAWaitingDc1ConsumerByPushWithin50ms) {
  net.consumer("l1-dc1", "c9", {"audit"});
  net.advance(Duration{4100});
  ASSERT_TRUE(net.list("c9", "audit").instances.empty());
  const auto pushes_before = net.pushes_to("c9").size();
  net.agent("l1-dc2", "p9", {reg("audit", "p9", "10.2.0.9:80")});
  std::optional<Duration> took;
  for (Duration waited{0}; !took && waited <= Duration{3000}; waited += Duration{1}) {
    if (net.list("c9", "audit").instances.contains("p9"))
      took = waited;
    else
      net.advance(Duration{1}, Duration{1});
  }
  ASSERT_TRUE(took.has_value());
  EXPECT_LE(*took, kCrossTierBound);
  EXPECT_GT(net.pushes_to("c9").size(), pushes_before) << "learnt by push, not at its beat";
}

// The wait ends with the consumer: dc1's link stops declaring it, and L2
// forgets the empty entry it kept for dc1 (Registry::reclaim).
TEST_F(ChangePushAcrossTiers, AWaitNobodyDeclaresAnyMoreIsDroppedAtEveryTier) {
  net.consumer("l1-dc1", "c9", {"audit"});
  net.advance(Duration{4100});
  const auto audit = test_support::key("audit");
  ASSERT_NE(net.hub("l2").registry().find(audit), nullptr) << "L2 follows dc1's wait";
  net.kill("c9");
  net.advance(Duration{90'000}, Duration{100});  // c9's lease, the link's unused TTL, the grace
  EXPECT_EQ(net.hub("l1-dc1").registry().find(audit), nullptr);
  EXPECT_EQ(net.hub("l2").registry().find(audit), nullptr);
}

}  // namespace
}  // namespace cascade::hub
