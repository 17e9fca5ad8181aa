// Eviction protection through HubCore on a fake clock: leases that run out
// together go through the eviction guard (hub/eviction_guard.hpp), so a
// window expires at most its share of a service, a partitioned source is held
// rather than dropped, held instances are served as unconfirmed, and every
// hold ends (a beat, room in the window, max_hold, protection switched off).

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;
using proto::Health;

const std::string kService = "orders";
constexpr Duration kLease{6000};

HubCoreConfig hub_config() {
  HubCoreConfig config;
  config.hub_id = "hub-a";
  config.lease = kLease;
  return config;  // eviction: window 60 s, 20% of a service or the registry, cap from 5 instances
}

// Providers with one instance of `orders` each, and a consumer `c1` of it.
class EvictionFleet {
 public:
  explicit EvictionFleet(HubCoreConfig config) : rig(std::move(config)) {}

  void providers(const std::string& prefix, int count, const std::string& source = {}) {
    for (int i = 0; i < count; ++i) {
      const auto id = prefix + std::to_string(i);
      rig.provider(id, {reg(kService, id, "host-" + id + ":80")}, source);
      ids.push_back(id);
    }
  }
  void consumer() { rig.consumer("c1", {kService}); }

  // Of `nodes`, those the hub still knows.
  std::vector<std::string> known(const std::vector<std::string>& nodes) const {
    std::vector<std::string> out;
    for (const auto& id : nodes)
      if (rig.hub.knows_node(id)) out.push_back(id);
    return out;
  }

  HubRig rig;
  std::vector<std::string> ids;
};

class EvictionProtection : public ::testing::Test {
 protected:
  void SetUp() override {
    fleet.providers("n", 10);
    fleet.consumer();
  }

  // n0, n1 and n2 stop beating now; their leases run out together one lease later.
  void three_stop() {
    for (const auto& id : stopped)
      rig.silence(id);
    rig.advance(kLease);
  }
  // The one of the three that is held (asserts there is exactly one).
  std::string held() {
    auto still = fleet.known(stopped);
    EXPECT_EQ(still.size(), 1u);
    return still.empty() ? std::string() : still.front();
  }

  EvictionFleet fleet{hub_config()};
  HubRig& rig = fleet.rig;
  const std::vector<std::string> stopped{"n0", "n1", "n2"};
};

TEST_F(EvictionProtection, ThreeOfTenStopTwoExpireAndOneIsHeldUnconfirmed) {
  for (const auto& id : stopped)
    rig.silence(id);
  rig.advance(kLease - Duration{10});
  EXPECT_EQ(rig.hub.counters().nodes_expired, 0u);
  rig.advance(Duration{10});  // the three leases run out in this tick

  EXPECT_EQ(rig.hub.counters().nodes_expired, 2u) << "20% of 10 instances per window";
  EXPECT_EQ(rig.hub.counters().expiries_held, 1u);
  const auto id = held();
  EXPECT_EQ(rig.health(kService, id), Health::kUnconfirmed);
  EXPECT_FALSE(rig.entry(kService, id)->served(id).health_reason.empty());
  const auto status = rig.status();
  EXPECT_EQ(status.unconfirmed, 1u);
  EXPECT_EQ(status.instances, 8u) << "the held instance is still listed";
  EXPECT_EQ(rig.counter("held_nodes"), 1u);
  EXPECT_EQ(rig.counter("expiry_cap_holds"), 1u);
  for (const auto& live : {"n3", "n9"})
    EXPECT_EQ(rig.health(kService, live), Health::kOk);

  // Consumers learn it between beats: unconfirmed, so they prefer the others.
  rig.advance(Duration{10});
  ASSERT_FALSE(rig.pushes_to("c1").empty());
  const auto& list = rig.list("c1", kService);
  EXPECT_EQ(list.instances.size(), 8u);
  ASSERT_TRUE(list.instances.contains(id));
  EXPECT_EQ(list.instances.at(id).health, Health::kUnconfirmed);
}

TEST_F(EvictionProtection, HeldAgentThatBeatsAgainIsConfirmedAndNeverExpires) {
  three_stop();
  const auto id = held();
  ASSERT_FALSE(id.empty());
  rig.resume(id);
  EXPECT_EQ(rig.health(kService, id), Health::kOk);
  EXPECT_EQ(rig.status().unconfirmed, 0u);
  EXPECT_EQ(rig.counter("held_nodes"), 0u);

  rig.advance(Duration{120'000}, Duration{100});  // past the window and more
  EXPECT_TRUE(rig.hub.knows_node(id));
  EXPECT_EQ(rig.hub.counters().nodes_expired, 2u);
  EXPECT_EQ(rig.health(kService, id), Health::kOk);
  EXPECT_EQ(rig.list("c1", kService).instances.at(id).health, Health::kOk);
}

TEST_F(EvictionProtection, HeldAgentIsReleasedOnceTheWindowHasRoom) {
  three_stop();  // two expired now: the window is full until they leave it
  const auto id = held();
  rig.advance(Duration{60'000} - Duration{10});
  EXPECT_TRUE(rig.hub.knows_node(id)) << "re-asked every lease, still held";
  EXPECT_EQ(rig.status().unconfirmed, 1u);
  rig.advance(Duration{10});
  EXPECT_FALSE(rig.hub.knows_node(id)) << "never stuck: released when the window has room";
  EXPECT_EQ(rig.hub.counters().nodes_expired, 3u);
  const auto status = rig.status();
  EXPECT_EQ(status.unconfirmed, 0u);
  EXPECT_EQ(status.instances, 7u);
}

TEST(EvictionProtectionMaxHold, HeldAgentIsReleasedAfterMaxHoldThoughTheWindowIsFull) {
  auto config = hub_config();
  config.eviction.max_hold = Duration{20'000};  // shorter than the 60 s window
  EvictionFleet fleet(config);
  auto& rig = fleet.rig;
  fleet.providers("n", 10);
  for (const auto& id : {"n0", "n1", "n2"})
    rig.silence(id);
  rig.advance(kLease);
  const auto still = fleet.known({"n0", "n1", "n2"});
  ASSERT_EQ(still.size(), 1u);

  rig.advance(Duration{20'000} - Duration{10});
  EXPECT_TRUE(rig.hub.knows_node(still[0]));
  rig.advance(Duration{10});
  EXPECT_FALSE(rig.hub.knows_node(still[0]));
  EXPECT_EQ(rig.counter("held_released_max_hold"), 1u);
  EXPECT_EQ(rig.status().unconfirmed, 0u);
}

TEST_F(EvictionProtection, MassDeathDrainsAShareEachWindowAndEndsByMaxHold) {
  for (const auto& id : fleet.ids)
    rig.silence(id);
  rig.advance(kLease);
  EXPECT_EQ(rig.hub.counters().nodes_expired, 2u);
  EXPECT_EQ(rig.status().unconfirmed, 8u);
  rig.advance(Duration{60'000}, Duration{100});
  EXPECT_EQ(rig.hub.counters().nodes_expired, 3u) << "20% of the 8 left, rounded down";
  rig.advance(Duration{540'000}, Duration{100});  // max_hold (600 s) since the holds
  EXPECT_EQ(rig.hub.counters().nodes_expired, 10u);
  EXPECT_EQ(rig.status().unconfirmed, 0u);
  EXPECT_EQ(rig.status().instances, 0u);
}

TEST_F(EvictionProtection, GracefulDeregisterIsNeverHeldAndSpendsNoBudget) {
  for (const auto& id : {"n0", "n1", "n2", "n3", "n4"}) {
    auto reply = rig.deregister(id);
    ASSERT_TRUE(std::holds_alternative<proto::DeregisterAck>(reply));
    EXPECT_EQ(std::get<proto::DeregisterAck>(reply).removed, 1u);
  }
  auto status = rig.status();
  EXPECT_EQ(status.instances, 5u) << "half the service left at once: nothing held";
  EXPECT_EQ(status.unconfirmed, 0u);
  EXPECT_EQ(rig.hub.counters().expiries_held, 0u);

  // The deregistrations used none of the window: one death of 5 fits (20%).
  rig.silence("n5");
  rig.advance(kLease);
  EXPECT_FALSE(rig.hub.knows_node("n5"));
  EXPECT_EQ(rig.hub.counters().nodes_expired, 1u);
  EXPECT_EQ(rig.hub.counters().expiries_held, 0u);
}

TEST_F(EvictionProtection, HeldAgentThatDeregistersIsDroppedAtOnce) {
  three_stop();
  const auto id = held();
  auto reply = rig.handle(proto::Deregister{id, 1, 1000});
  ASSERT_TRUE(std::holds_alternative<proto::DeregisterAck>(reply.reply));
  EXPECT_FALSE(rig.hub.knows_node(id));
  EXPECT_EQ(rig.status().unconfirmed, 0u);
  EXPECT_EQ(rig.counter("held_nodes"), 0u);
}

TEST(EvictionProtectionPartition, SilentProxyIsHeldAsAPartitionWhileAnotherProxysDeathExpires) {
  // 16 instances behind two proxies. The shares are raised to 50% so that the
  // budget alone would let all of proxy-A go (8 of 16): only the partition
  // rule holds them, and proxy-B's death still fits the budget.
  auto config = hub_config();
  config.eviction.max_service_share = 0.5;
  config.eviction.max_registry_share = 0.5;
  EvictionFleet fleet(config);
  auto& rig = fleet.rig;
  fleet.providers("a", 8, "proxy-A");
  fleet.providers("b", 8, "proxy-B");
  std::vector<std::string> proxy_a;
  for (int i = 0; i < 8; ++i)
    proxy_a.push_back("a" + std::to_string(i));

  for (const auto& id : proxy_a)
    rig.silence(id);  // proxy-A is cut off
  rig.advance(Duration{2000});
  rig.silence("b0");  // one agent behind proxy-B dies, 2 s later
  rig.advance(kLease - Duration{2000});

  // The first losses cannot be told from deaths; from half the source on, held.
  EXPECT_EQ(rig.hub.counters().nodes_expired, 3u);
  EXPECT_EQ(fleet.known(proxy_a).size(), 5u);
  EXPECT_EQ(rig.counter("held_for_partition"), 5u);
  EXPECT_EQ(rig.counter("partitioned_sources"), 1u);
  EXPECT_EQ(rig.counter("expiry_cap_holds"), 0u);
  EXPECT_EQ(rig.status().unconfirmed, 5u);

  rig.advance(Duration{2000});  // b0's lease runs out
  EXPECT_FALSE(rig.hub.knows_node("b0")) << "proxy-B is not partitioned: its death expires";
  EXPECT_EQ(rig.hub.counters().nodes_expired, 4u);
  EXPECT_EQ(rig.status().unconfirmed, 5u);

  // The partition heals: the held agents are confirmed, the expired ones re-register.
  for (const auto& id : proxy_a)
    rig.resume(id);
  EXPECT_EQ(rig.status().unconfirmed, 0u);
  EXPECT_EQ(rig.counter("held_for_partition"), 0u);
  rig.advance(Duration{2000});
  EXPECT_EQ(rig.status().instances, 15u);
  EXPECT_EQ(rig.hub.counters().nodes_expired, 4u);
}

TEST(EvictionProtectionPartition, AgentsThatMovedToAnotherProxyNoLongerCountForTheOldOne) {
  auto config = hub_config();
  config.eviction.max_service_share = 0.5;  // only the partition rule holds anything
  config.eviction.max_registry_share = 0.5;
  EvictionFleet fleet(config);
  auto& rig = fleet.rig;
  fleet.providers("a", 8, "proxy-A");
  fleet.providers("b", 8, "proxy-B");
  for (int i = 4; i < 8; ++i) {  // rebalanced: half of proxy-A's agents now beat through proxy-B
    const auto id = "a" + std::to_string(i);
    rig.provider(id, {reg(kService, id, "host-" + id + ":80")}, "proxy-B");
  }
  for (int i = 0; i < 4; ++i)
    rig.silence("a" + std::to_string(i));  // proxy-A, now 4 agents, is cut off
  rig.advance(kLease);
  // Of 4, the first loss looks like a death; from half on, a partition. Had
  // the moved agents still counted for proxy-A (8), 3 would have expired.
  EXPECT_EQ(rig.hub.counters().nodes_expired, 1u);
  EXPECT_EQ(rig.counter("held_for_partition"), 3u);
  EXPECT_EQ(rig.counter("partitioned_sources"), 1u);
}

TEST(EvictionProtectionDisabled, DisabledProtectionExpiresEverySilentAgentAtOnce) {
  auto config = hub_config();
  config.eviction.enabled = false;
  EvictionFleet fleet(config);
  auto& rig = fleet.rig;
  fleet.providers("n", 10);
  EXPECT_FALSE(rig.status().eviction_protection);
  for (const auto& id : {"n0", "n1", "n2"})
    rig.silence(id);
  rig.advance(kLease);
  EXPECT_EQ(rig.hub.counters().nodes_expired, 3u);
  EXPECT_EQ(rig.hub.counters().expiries_held, 0u);
  EXPECT_TRUE(fleet.known({"n0", "n1", "n2"}).empty());
  EXPECT_EQ(rig.status().unconfirmed, 0u);
}

// An isolated agent whose lease runs out while the window is full is held;
// its isolation says more than "unconfirmed" and is kept. When the isolation
// ends the agent has still not beaten: it must be served as unconfirmed, not
// as a confirmed, healthy instance.
TEST_F(EvictionProtection, IsolationEndingWhileHeldLeavesTheInstanceUnconfirmed) {
  rig.silence("n0");
  rig.silence("n1");
  rig.report("x1", kService, "host-n2:80");
  rig.report("x2", kService, "host-n2:80");
  ASSERT_EQ(rig.health(kService, "n2"), Health::kIsolated);
  rig.advance(Duration{2000});
  rig.silence("n2");  // its last beat was just now: its lease runs out 2 s after n0's and n1's
  rig.advance(kLease);
  ASSERT_EQ(rig.hub.counters().nodes_expired, 2u);
  ASSERT_TRUE(rig.hub.knows_node("n2")) << "held: the window's budget is spent";
  EXPECT_EQ(rig.health(kService, "n2"), Health::kIsolated);

  rig.advance(Duration{3100});  // the isolation (10 s ±10%) ends; the hold does not
  ASSERT_EQ(rig.hub.counters().readmissions, 1u);
  ASSERT_TRUE(rig.hub.knows_node("n2"));
  EXPECT_EQ(rig.health(kService, "n2"), Health::kUnconfirmed)
      << "n2 has not beaten since its lease ran out";
  EXPECT_EQ(rig.status().unconfirmed, 1u);
}

// ----------------------------------------------------------- dead or cut off
// While held, an agent's addresses are probed (hub/liveness_probes.hpp); the
// test plays the network, answering each probe the core asks for.

// Answers every probe the hub asks for: refused for the dead, no answer for
// the cut off, accepted for the rest. Returns how many were asked.
std::size_t answer_probes(HubRig& rig, const std::set<std::string>& dead,
                          const std::set<std::string>& cut_off = {}) {
  const auto requests = rig.hub.take_probes();
  for (const auto& request : requests) {
    auto outcome = ProbeOutcome::kAccepted;
    if (dead.contains(request.node_id)) outcome = ProbeOutcome::kRefused;
    if (cut_off.contains(request.node_id)) outcome = ProbeOutcome::kNoAnswer;
    rig.hub.on_probe_result(rig.clock.now(), {request.node_id, request.address, outcome});
  }
  return requests.size();
}

// Ten providers of `orders`; the tests stop some of them.
class EvictionProtectionProbes : public ::testing::Test {
 protected:
  static HubCoreConfig probing() {
    auto config = hub_config();
    config.probes.enabled = true;  // the addresses are made up, but nothing is dialled here
    return config;
  }
  void start(HubCoreConfig config = probing()) {
    fleet = std::make_unique<EvictionFleet>(std::move(config));
    fleet->providers("n", 10);
  }
  // These agents stop beating; one lease later their leases have run out.
  void stop(const std::set<std::string>& nodes) {
    for (const auto& id : nodes)
      rig().silence(id);
    rig().advance(kLease);
  }
  std::vector<std::string> known(const std::set<std::string>& nodes) const {
    return fleet->known({nodes.begin(), nodes.end()});
  }
  HubRig& rig() { return fleet->rig; }

  std::unique_ptr<EvictionFleet> fleet;
  const std::set<std::string> three{"n0", "n1", "n2"};
  const std::set<std::string> five{"n0", "n1", "n2", "n3", "n4"};
};

// Half a service crashes: by counts it looks like a partition and would be
// held for minutes; the refused probes tell the truth within one tick.
TEST_F(EvictionProtectionProbes, CrashedAgentsWhoseAddressesRefuseAreExpiredAtOnceThoughHeld) {
  start();
  stop(five);
  ASSERT_EQ(rig().counter("held_nodes"), 3u) << "20% of 10 expire; the rest is held";

  EXPECT_EQ(answer_probes(rig(), five), 3u) << "one probe per held agent's address";
  EXPECT_EQ(rig().counter("held_nodes"), 0u);
  EXPECT_TRUE(known(five).empty());
  EXPECT_EQ(rig().hub.counters().nodes_confirmed_dead, 3u);
  EXPECT_EQ(rig().status().unconfirmed, 0u);
  EXPECT_EQ(rig().status().instances, 5u) << "exactly the live ones";
}

// A datacenter's rack cut off: probes get no answer, so everything stays
// held, probed again every lease; the partition heals without churn.
TEST_F(EvictionProtectionProbes, AgentsWhoseProbesGetNoAnswerStayHeldAndAreProbedEveryLease) {
  start();
  stop(five);
  EXPECT_EQ(answer_probes(rig(), {}, five), 3u);
  rig().advance(kLease);
  EXPECT_EQ(answer_probes(rig(), {}, five), 3u) << "asked again a lease later";
  EXPECT_EQ(rig().counter("held_nodes"), 3u);
  EXPECT_EQ(rig().hub.counters().nodes_confirmed_dead, 0u);

  for (const auto& id : known(five))
    rig().resume(id);
  EXPECT_EQ(rig().counter("held_nodes"), 0u);
  EXPECT_EQ(rig().status().unconfirmed, 0u);
}

// The agent died but its instance still listens (a sidecar crashed): alive,
// held as before.
TEST_F(EvictionProtectionProbes, AnAcceptedProbeKeepsTheAgentHeld) {
  start();
  stop(three);
  answer_probes(rig(), {});
  EXPECT_EQ(rig().counter("held_nodes"), 1u);
  EXPECT_EQ(rig().counter("probes_accepted"), 1u);
}

// Callers saw "connection refused" at a held agent's address: the same
// evidence as a refused probe.
TEST_F(EvictionProtectionProbes, ACallersConnectionRefusedReportAboutAHeldAgentExpiresIt) {
  start();
  stop(three);
  const auto held = known(three);
  ASSERT_EQ(held.size(), 1u);
  proto::FailureSignal signal;
  signal.service = test_support::key(kService);
  signal.address = "host-" + held[0] + ":80";
  signal.reporter = "caller-1";
  signal.kind = proto::FailureKind::kTimeout;
  rig().hub.handle(rig().clock.now(), proto::FailureReport{0, {signal}, 0});
  EXPECT_TRUE(rig().hub.knows_node(held[0])) << "a timeout is no evidence of death";
  signal.kind = proto::FailureKind::kConnectionRefused;
  rig().hub.handle(rig().clock.now(), proto::FailureReport{0, {signal}, 0});
  EXPECT_FALSE(rig().hub.knows_node(held[0]));
  EXPECT_EQ(rig().hub.counters().nodes_confirmed_dead, 1u);
}

// The report that proves a held agent dead comes right after a consumer was
// served the version of the tick that held it: the removal must come under a
// version of its own, or that consumer, holding the tick's version, would
// never be sent it.
TEST_F(EvictionProtectionProbes, AHeldAgentProvedDeadAfterAConsumerWasServedIsPushedAsGone) {
  start();
  fleet->consumer();
  stop(three);
  const auto held = known(three);
  ASSERT_EQ(held.size(), 1u);
  rig().beat("c1");
  ASSERT_EQ(rig().list("c1", kService).instances.at(held[0]).health, Health::kUnconfirmed);

  proto::FailureSignal signal;
  signal.service = test_support::key(kService);
  signal.address = "host-" + held[0] + ":80";
  signal.reporter = "caller-1";
  signal.kind = proto::FailureKind::kConnectionRefused;
  rig().handle(proto::FailureReport{0, {signal}, 0});
  ASSERT_FALSE(rig().hub.knows_node(held[0]));
  rig().advance(Duration{5}, Duration{1});
  EXPECT_FALSE(rig().list("c1", kService).instances.contains(held[0]))
      << "c1 learns by push that the held agent is gone";
}

TEST_F(EvictionProtectionProbes, ProbingSwitchedOffLeavesTheHoldsAsTheyWere) {
  auto config = probing();
  config.probes.enabled = false;
  start(config);
  stop(three);
  EXPECT_EQ(answer_probes(rig(), three), 0u);
  EXPECT_EQ(rig().counter("held_nodes"), 1u);
}

}  // namespace
}  // namespace cascade::hub
