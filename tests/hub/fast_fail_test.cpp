// Fast-fail isolation through HubCore on a fake clock: callers' failure
// reports isolate a provider's instance (quorum, cap, readmission), the hub
// pushes the change to every consumer between beats (coalesced, notify switch,
// rate cap), and across tiers a report reaches the tier that holds the address
// and the isolation comes back down to the reporting tier's consumers.

#include <gtest/gtest.h>

#include <limits>
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

std::string address(int i) {
  return "10.0.0." + std::to_string(i) + ":80";
}
std::string provider_id(int i) {
  return "p" + std::to_string(i);
}
std::string consumer_id(int i) {
  return "c" + std::to_string(i);
}

HubCoreConfig hub_config() {
  HubCoreConfig config;
  config.hub_id = "hub-a";
  config.lease = Duration{6000};
  return config;  // isolation: 2 reporters or 5 reports in 10 s, 10 s ±10%, cap 50%; push delay 5
                  // ms
}

// P1..P4 provide `pay`; `consumers` agents use it (so the hub follows them).
class FastFailFleet {
 public:
  explicit FastFailFleet(HubCoreConfig config, int consumers = 3) : rig(std::move(config)) {
    for (int i = 1; i <= 4; ++i)
      rig.provider(provider_id(i), {reg(kService, provider_id(i), address(i))});
    for (int i = 1; i <= consumers; ++i)
      rig.consumer(consumer_id(i), {kService});
    consumer_count = consumers;
  }

  // Two distinct callers report the address of provider `i`: the quorum.
  void isolate(int i) {
    rig.report("c1", kService, address(i));
    rig.report("c2", kService, address(i));
  }
  // Consumers that received at least one push.
  int pushed_consumers() const {
    int n = 0;
    for (int i = 1; i <= consumer_count; ++i)
      n += rig.pushes_to(consumer_id(i)).empty() ? 0 : 1;
    return n;
  }
  // What consumer `c` holds of provider `p`'s instance (asserts that it holds it).
  Health held_health(int c, int p) {
    const auto& list = rig.list(consumer_id(c), kService);
    auto it = list.instances.find(provider_id(p));
    EXPECT_NE(it, list.instances.end()) << consumer_id(c) << " does not hold " << provider_id(p);
    return it == list.instances.end() ? Health::kOk : it->second.health;
  }

  HubRig rig;
  int consumer_count = 0;
};

class FastFail : public ::testing::Test {
 protected:
  FastFailFleet fleet{hub_config()};
  HubRig& rig = fleet.rig;
};

TEST_F(FastFail, TwoDistinctReportersIsolateTheInstanceWithAReason) {
  rig.report("c1", kService, address(1));
  EXPECT_EQ(rig.health(kService, "p1"), Health::kOk) << "one caller is not a quorum";
  rig.report("c2", kService, address(1));

  const auto* p1 = rig.entry(kService, "p1");
  ASSERT_NE(p1, nullptr);
  EXPECT_EQ(p1->verdict().health, Health::kIsolated);
  EXPECT_EQ(p1->served("p1").health, Health::kIsolated);
  EXPECT_FALSE(p1->served("p1").health_reason.empty()) << "an isolation says why";
  EXPECT_EQ(rig.health(kService, "p2"), Health::kOk);
  EXPECT_EQ(rig.status().isolated, 1u);
  EXPECT_EQ(rig.hub.counters().isolations, 1u);
  EXPECT_EQ(rig.hub.counters().signals_counted, 2u);
}

TEST_F(FastFail, IsolationIsPushedToEveryConsumerAfterThePushDelayAsADelta) {
  std::vector<std::uint64_t> held;
  for (int c = 1; c <= 3; ++c)
    held.push_back(rig.list(consumer_id(c), kService).version);
  ASSERT_NE(held[0], 0u) << "consumers hold the list from their first beat";

  fleet.isolate(1);
  rig.tick();
  rig.advance(Duration{4}, Duration{1});
  EXPECT_EQ(rig.push_count(), 0u) << "coalescing: nothing before the push delay (5 ms)";
  rig.advance(Duration{1});

  for (int c = 1; c <= 3; ++c) {
    SCOPED_TRACE(consumer_id(c));
    const auto& pushes = rig.pushes_to(consumer_id(c));
    ASSERT_EQ(pushes.size(), 1u);
    const auto& push = pushes[0];
    EXPECT_TRUE(push.push);
    EXPECT_EQ(push.ack_seq, 0u) << "a push answers no beat";
    EXPECT_EQ(push.node_id, consumer_id(c));
    EXPECT_EQ(push.hub_id, "hub-a");
    ASSERT_EQ(push.updates.size(), 1u);
    const auto& update = push.updates[0];
    EXPECT_EQ(update.kind, proto::UpdateKind::kDelta);
    EXPECT_EQ(update.from_version, held[static_cast<std::size_t>(c - 1)]);
    ASSERT_EQ(update.upserts.size(), 1u) << "only the isolated instance changed";
    EXPECT_EQ(update.upserts[0].id, "p1");
    EXPECT_EQ(update.upserts[0].health, Health::kIsolated);
    EXPECT_FALSE(update.upserts[0].health_reason.empty());
    EXPECT_EQ(fleet.held_health(c, 1), Health::kIsolated);
  }
  EXPECT_TRUE(rig.pushes_to("p1").empty()) << "providers use nothing: no push";
  EXPECT_EQ(rig.hub.counters().pushes, 3u);
  EXPECT_TRUE(rig.other_messages().empty());

  // The consumers hold the pushed version: their next beats need nothing.
  rig.advance(Duration{2000});
  for (int c = 1; c <= 3; ++c) {
    auto reply = std::get<proto::DownBeat>(rig.beat(consumer_id(c)));
    EXPECT_TRUE(reply.updates.empty()) << consumer_id(c);
  }
}

TEST_F(FastFail, OneReporterWithFourReportsDoesNotIsolate) {
  for (int n = 0; n < 4; ++n)
    rig.report("c1", kService, address(1));
  rig.advance(Duration{100});
  EXPECT_EQ(rig.health(kService, "p1"), Health::kOk);
  EXPECT_EQ(rig.hub.counters().signals_counted, 4u);
  EXPECT_EQ(rig.hub.counters().isolations, 0u);
  EXPECT_EQ(rig.push_count(), 0u);
  // The fifth failure from the same caller reaches min_reports.
  rig.report("c1", kService, address(1));
  EXPECT_EQ(rig.health(kService, "p1"), Health::kIsolated);
}

TEST_F(FastFail, CapIsolatesAtMostHalfOfFourUpInstancesAndCountsTheThird) {
  fleet.isolate(1);
  fleet.isolate(2);
  rig.report("c1", kService, address(3));
  auto third = rig.report("c2", kService, address(3), 1, /*request_id=*/77);

  EXPECT_EQ(rig.health(kService, "p1"), Health::kIsolated);
  EXPECT_EQ(rig.health(kService, "p2"), Health::kIsolated);
  EXPECT_EQ(rig.health(kService, "p3"), Health::kOk) << "the cap holds the third back";
  EXPECT_EQ(rig.health(kService, "p4"), Health::kOk);
  const auto status = rig.status();
  EXPECT_EQ(status.isolated, 2u);
  EXPECT_EQ(rig.counter("isolations_capped"), 1u);
  EXPECT_EQ(rig.counter("isolations"), 2u);
  const auto& ack = std::get<proto::ReportAck>(third.reply);
  EXPECT_EQ(ack.accepted, 1u);
  EXPECT_EQ(ack.isolated, 0u);
}

TEST_F(FastFail, ReadmissionAfterTheIsolationTimeIsPushedToo) {
  fleet.isolate(1);
  rig.advance(Duration{8990});  // the isolation lasts 10 s ±10%
  EXPECT_EQ(rig.health(kService, "p1"), Health::kIsolated);
  for (int c = 1; c <= 3; ++c)
    ASSERT_EQ(rig.pushes_to(consumer_id(c)).size(), 1u) << "the isolation only, so far";

  rig.advance(Duration{2020});  // past 11 s, plus the push delay
  EXPECT_EQ(rig.health(kService, "p1"), Health::kOk);
  EXPECT_TRUE(rig.entry(kService, "p1")->served("p1").health_reason.empty());
  EXPECT_EQ(rig.hub.counters().readmissions, 1u);
  EXPECT_EQ(rig.status().isolated, 0u);
  for (int c = 1; c <= 3; ++c) {
    SCOPED_TRACE(consumer_id(c));
    const auto& pushes = rig.pushes_to(consumer_id(c));
    ASSERT_EQ(pushes.size(), 2u) << "the readmission is pushed, not left to the next beat";
    ASSERT_EQ(pushes[1].updates.size(), 1u);
    const auto* p1 = find_upsert(pushes[1].updates[0], "p1");
    ASSERT_NE(p1, nullptr);
    EXPECT_EQ(p1->health, Health::kOk);
    EXPECT_EQ(fleet.held_health(c, 1), Health::kOk);
  }
}

TEST_F(FastFail, QuerySeesTheIsolatedInstanceWithItsHealth) {
  fleet.isolate(1);
  const auto reply = rig.query(kService);
  ASSERT_TRUE(reply.found);
  ASSERT_EQ(reply.instances.size(), 4u) << "isolated, not removed";
  for (const auto& in : reply.instances) {
    SCOPED_TRACE(in.id);
    if (in.id == "p1") {
      EXPECT_EQ(in.health, Health::kIsolated);
      EXPECT_FALSE(in.health_reason.empty());
    } else {
      EXPECT_EQ(in.health, Health::kOk);
      EXPECT_TRUE(in.health_reason.empty());
    }
  }
}

TEST_F(FastFail, IsolationKeepsTheLeaseOfTheProviderThatStillBeats) {
  fleet.isolate(1);
  rig.advance(Duration{8000});  // longer than the 6 s lease, shorter than the isolation
  EXPECT_TRUE(rig.hub.knows_node("p1"));
  EXPECT_EQ(rig.hub.counters().nodes_expired, 0u);
  EXPECT_EQ(rig.status().instances, 4u);
  EXPECT_EQ(rig.health(kService, "p1"), Health::kIsolated)
      << "fresh beats do not end an isolation early";
  const auto reply = rig.beat("p1");
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(reply));
}

TEST_F(FastFail, ReportWithRequestIdGetsAReportAckWithCounts) {
  auto first = rig.report("c1", kService, address(1), 1, /*request_id=*/11);
  EXPECT_FALSE(first.no_reply);
  ASSERT_TRUE(std::holds_alternative<proto::ReportAck>(first.reply));
  EXPECT_EQ(std::get<proto::ReportAck>(first.reply), (proto::ReportAck{11, 1, 0, 0, 0}));

  auto second = rig.report("c2", kService, address(1), 1, /*request_id=*/12);
  ASSERT_TRUE(std::holds_alternative<proto::ReportAck>(second.reply));
  EXPECT_EQ(std::get<proto::ReportAck>(second.reply), (proto::ReportAck{12, 1, 0, 0, 1}));

  auto silent = rig.report("c3", kService, address(2));
  EXPECT_TRUE(silent.no_reply) << "request_id 0: fire and forget";
}

TEST_F(FastFail, ReportAboutAnUnknownAddressIsAnsweredUnknown) {
  auto r = rig.report("c1", kService, "10.9.9.9:80", 1, /*request_id=*/13);
  ASSERT_TRUE(std::holds_alternative<proto::ReportAck>(r.reply));
  EXPECT_EQ(std::get<proto::ReportAck>(r.reply), (proto::ReportAck{13, 0, 0, 1, 0}));
  auto other_service = rig.report("c1", "no-such-service", address(1), 1, /*request_id=*/14);
  EXPECT_EQ(std::get<proto::ReportAck>(other_service.reply), (proto::ReportAck{14, 0, 0, 1, 0}));
  EXPECT_EQ(rig.hub.counters().signals_unknown, 2u);
  EXPECT_EQ(rig.hub.counters().signals_counted, 0u);
}

TEST_F(FastFail, AgentBeatCarryingHealthIsRejectedAsInvalid) {
  auto isolated = reg(kService, "rogue", "10.0.0.9:80");
  isolated.instance.health = Health::kIsolated;
  auto r = rig.handle(beat_with_set("rogue", 1, {isolated}));
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(r.reply));
  EXPECT_EQ(std::get<proto::ErrorReply>(r.reply).code, proto::ErrorCode::kInvalid);

  auto reason_only = reg(kService, "rogue", "10.0.0.9:80");
  reason_only.instance.health_reason = "trust me";
  r = rig.handle(beat_with_set("rogue", 2, {reason_only}));
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(r.reply));

  // An isolated provider cannot set its own verdict with a delta either.
  fleet.isolate(1);
  auto own_verdict = reg(kService, "p1", address(1));
  own_verdict.instance.health = Health::kUnconfirmed;
  proto::UpBeat delta = beat("p1", 1000, 0);
  delta.delta = proto::RegistrationDelta{false, false, {own_verdict}, {}};
  r = rig.handle(delta);
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(r.reply));
  EXPECT_EQ(std::get<proto::ErrorReply>(r.reply).code, proto::ErrorCode::kInvalid);

  EXPECT_EQ(rig.entry(kService, "rogue"), nullptr);
  EXPECT_FALSE(rig.hub.knows_node("rogue"));
  EXPECT_EQ(rig.health(kService, "p1"), Health::kIsolated);
  EXPECT_EQ(rig.hub.counters().invalid_messages, 3u);
}

// ---------------------------------------------------------------- push fan-out

// Issue 11 (fuzzing; reproducer tests/fuzz/regressions/hub_core/report-hops-at-u32-max):
// hops + 1 wrapped to 0, so a report claiming the largest hop count was sent
// on with its count restarted instead of being dropped.
TEST(FastFailHops, ReportThatCrossedTheMostHubsIsDroppedEvenAtTheLargestCount) {
  auto config = hub_config();
  config.tier = 2;
  HubRig rig(config);
  auto child = beat_with_set("l1-hub", 1, {reg(kService, "p1", address(1))});
  child.sender_tier = 1;  // a hub of the tier below holds the address
  rig.handle(child);
  auto report = [&](std::uint32_t hops) {
    proto::FailureSignal signal{test_support::key(kService), address(1),
                                proto::FailureKind::kTimeout, "c1", 1};
    rig.handle(proto::FailureReport{0, {signal}, hops});
  };
  const std::uint32_t max = config.max_report_hops;

  report(max - 2);
  ASSERT_EQ(rig.other_messages().size(), 1u);
  EXPECT_EQ(std::get<proto::FailureReport>(rig.other_messages()[0].message).hops, max - 1);

  for (const std::uint32_t hops : {max - 1, max, std::numeric_limits<std::uint32_t>::max()})
    report(hops);
  EXPECT_EQ(rig.other_messages().size(), 1u) << "sent on past max_report_hops";
  EXPECT_EQ(rig.hub.counters().signals_dropped, 3u);
}

TEST(FastFailPushFanOut, NotifySwitchAtTenPercentPushesTenOfOneHundredConsumersPerFlush) {
  auto config = hub_config();
  config.push.notify_switch = true;
  config.push.share_percent = 10;
  FastFailFleet fleet(config, 100);
  auto& rig = fleet.rig;
  EXPECT_EQ(rig.status().notify_share_percent, 10u);

  fleet.isolate(1);
  rig.advance(Duration{5});
  EXPECT_EQ(fleet.pushed_consumers(), 10);
  EXPECT_EQ(rig.hub.counters().pushes, 10u);
  EXPECT_EQ(rig.counter("pushes_held_by_switch"), 90u);

  // The others are not lost: their next beat brings the isolation.
  rig.advance(Duration{2000});
  for (int c = 1; c <= 100; ++c)
    EXPECT_EQ(fleet.held_health(c, 1), Health::kIsolated) << consumer_id(c);
}

TEST(FastFailPushFanOut, MaxPerSecondCapsPushesAndCountsTheRestOverRate) {
  auto config = hub_config();
  config.push.max_per_second = 5;
  FastFailFleet fleet(config, 20);
  auto& rig = fleet.rig;

  fleet.isolate(1);
  rig.advance(Duration{5});
  EXPECT_EQ(fleet.pushed_consumers(), 5);
  EXPECT_EQ(rig.counter("pushes_over_rate"), 15u);
  EXPECT_EQ(rig.counter("pushes"), 5u);

  rig.advance(Duration{2000});
  for (int c = 1; c <= 20; ++c)
    EXPECT_EQ(fleet.held_health(c, 1), Health::kIsolated) << consumer_id(c);
}

// ---------------------------------------------------------------- across tiers

// dc1 and dc2, one L1 hub each, under one L2. The providers live in dc1 (two,
// so the 50% cap allows one isolation), the consumers in dc2: their hub
// follows `pay` cross-tier.
class FastFailCrossTier : public ::testing::Test {
 protected:
  static constexpr const char* kDc1Address = "10.1.0.1:80";

  void SetUp() override {
    net.add({.id = "l2", .tier = 2});
    net.add({.id = "l1-dc1", .upstreams = {"l2"}});
    net.add({.id = "l1-dc2", .upstreams = {"l2"}});
    net.advance(Duration{100});
    net.agent("l1-dc1", "p1", {reg(kService, "p1", kDc1Address)});
    net.agent("l1-dc1", "p2", {reg(kService, "p2", "10.1.0.2:80")});
    net.advance(Duration{100});
    for (int c = 1; c <= 3; ++c)
      net.consumer("l1-dc2", consumer_id(c), {kService});
    net.advance(Duration{4100});  // two beats: asked from L2, then followed
  }

  const InstanceEntry* dc1_entry(const std::string& id) {
    const auto* svc = net.hub("l1-dc1").registry().find(test_support::key(kService));
    if (svc == nullptr) return nullptr;
    const hub::InstanceSlot* slot = svc->instances.find(id);
    return slot == nullptr ? nullptr : &slot->entry();
  }
  // The health of p1 in the list consumer `c` holds.
  std::optional<Health> held_p1(int c) {
    const auto& list = net.list(consumer_id(c), kService);
    auto it = list.instances.find("p1");
    if (it == list.instances.end()) return std::nullopt;
    return it->second.health;
  }

  TierHarness net;
};

TEST_F(FastFailCrossTier, ReportsInDc2AreCountedAtDc1AndItsIsolationIsPushedToDc2Within100ms) {
  for (int c = 1; c <= 3; ++c)
    ASSERT_EQ(held_p1(c), Health::kOk) << consumer_id(c) << " follows pay across tiers";
  // (The first answer may have been pushed to a consumer whose beat came before it.)
  const auto dc2_pushes_before = net.hub("l1-dc2").counters().pushes;

  net.report("l1-dc2", "c1", kService, kDc1Address);
  EXPECT_EQ(dc1_entry("p1")->verdict().health, Health::kOk) << "one reporter";
  net.report("l1-dc2", "c2", kService, kDc1Address);
  const MonoTime quorum = net.clock.now();

  // Up from dc2 (which does not hold the address), down from L2 to dc1 (whose
  // agent holds it), counted and decided there.
  EXPECT_EQ(net.hub("l1-dc2").counters().signals_sent_up, 2u);
  EXPECT_EQ(net.hub("l1-dc2").counters().signals_counted, 0u);
  EXPECT_EQ(net.hub("l2").counters().signals_sent_down, 2u);
  EXPECT_EQ(net.hub("l2").counters().signals_counted, 0u);
  EXPECT_EQ(net.hub("l1-dc1").counters().signals_counted, 2u);
  ASSERT_NE(dc1_entry("p1"), nullptr);
  EXPECT_EQ(dc1_entry("p1")->verdict().health, Health::kIsolated);
  EXPECT_EQ(net.hub("l1-dc1").counters().isolations, 1u);
  EXPECT_TRUE(net.undelivered().empty());

  // Up to L2 as part of dc1's aggregate, pushed to dc2, pushed to its consumers.
  for (Duration waited{0}; waited < Duration{100}; waited += Duration{10}) {
    bool all = true;
    for (int c = 1; c <= 3; ++c)
      all = all && held_p1(c) == Health::kIsolated;
    if (all) break;
    net.advance(Duration{10});
  }
  for (int c = 1; c <= 3; ++c) {
    SCOPED_TRACE(consumer_id(c));
    EXPECT_EQ(held_p1(c), Health::kIsolated);
    const auto& pushes = net.pushes_to(consumer_id(c));
    ASSERT_FALSE(pushes.empty()) << "learnt by push, not by its next beat";
    ASSERT_EQ(pushes.back().updates.size(), 1u);
    const auto* p1 = find_upsert(pushes.back().updates[0], "p1");
    ASSERT_NE(p1, nullptr);
    EXPECT_EQ(p1->health, Health::kIsolated);
    EXPECT_FALSE(p1->health_reason.empty());
    EXPECT_LE(net.pushed_at(consumer_id(c)).back() - quorum, Duration{100});
  }
  const auto* at_l2 = net.hub("l2").registry().find(test_support::key(kService));
  ASSERT_NE(at_l2, nullptr);
  EXPECT_EQ(at_l2->instances.at("p1").served("p1").health, Health::kIsolated)
      << "dc1's aggregate carries the isolation up";
  EXPECT_GE(net.hub("l2").counters().pushes, 1u) << "L2 pushed to dc2's hub";
  EXPECT_EQ(net.hub("l1-dc2").counters().pushes, dc2_pushes_before + 3u) << "one per consumer";
}

TEST_F(FastFailCrossTier, ReadmissionAtDc1IsPushedDownToDc2Consumers) {
  net.report("l1-dc2", "c1", kService, kDc1Address);
  net.report("l1-dc2", "c2", kService, kDc1Address);
  net.advance(Duration{100});
  ASSERT_EQ(held_p1(1), Health::kIsolated);
  std::vector<std::size_t> pushes_before;
  for (int c = 1; c <= 3; ++c)
    pushes_before.push_back(net.pushes_to(consumer_id(c)).size());

  net.advance(Duration{11'000});  // the isolation lasts 10 s ±10%
  EXPECT_EQ(dc1_entry("p1")->verdict().health, Health::kOk);
  for (int c = 1; c <= 3; ++c) {
    SCOPED_TRACE(consumer_id(c));
    EXPECT_EQ(held_p1(c), Health::kOk);
    const auto& pushes = net.pushes_to(consumer_id(c));
    ASSERT_GT(pushes.size(), pushes_before[static_cast<std::size_t>(c - 1)]);
    const auto* p1 = find_upsert(pushes.back().updates.at(0), "p1");
    ASSERT_NE(p1, nullptr);
    EXPECT_EQ(p1->health, Health::kOk);
  }
}

}  // namespace
}  // namespace cascade::hub
