// Two datacenters under one L2, with the real binaries on loopback: a dc1
// consumer finds a dc2 provider through L2, the dc1 hub's cache answers the
// next lookups, a killed dc2 provider disappears from dc1, and dc1 keeps
// working (cross-tier answers served stale) while L2 is down.

#include <gtest/gtest.h>
#include <signal.h>

#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"

namespace cascade::integration {
namespace {

// L2 holds an L1 for three of its beats (the L1 uplink beats every kBeat);
// L1 caches L2's answers for half of that.
constexpr Millis kL2Lease{1200};
constexpr Millis kSchedulingMargin{300};

class IntegrationTiers : public ClusterTest {
 protected:
  void start_network() {
    l2_ = start_hub({.id = "l2", .beat = kBeat, .lease = kL2Lease, .extra = {"--tier", "2"}});
    dc1_ = start_hub({.id = "dc1", .extra = {"--zone", "dc1", "--upstream", l2_.endpoint}});
    dc2_ = start_hub({.id = "dc2", .extra = {"--zone", "dc2", "--upstream", l2_.endpoint}});
  }
  void restart_l2() {
    l2_ = start_hub({.id = "l2",
                     .listen = l2_.endpoint,
                     .data = l2_.data,
                     .beat = kBeat,
                     .lease = kL2Lease,
                     .extra = {"--tier", "2"}});
  }

  RunningHub l2_;
  RunningHub dc1_;
  RunningHub dc2_;
};

TEST_F(IntegrationTiers, Dc1FindsADc2ProviderThroughL2AndThenFromItsCache) {
  start_network();
  start_provider(dc2_.endpoint, "pay-dc2", "pay=10.2.0.1:80");
  HubProbe dc1(dc1_.endpoint);
  ASSERT_TRUE(wait_until_listed(dc1, "pay", "10.2.0.1:80"));

  const auto warm = dc1.query("pay", 1s);
  ASSERT_TRUE(warm);
  EXPECT_EQ(warm->tier, 2u) << "the list lives in L2's registry";
  EXPECT_EQ(warm->source, proto::AnswerSource::kCache) << "the next lookups stay in dc1";
  ASSERT_EQ(warm->instances.size(), 1u);
  EXPECT_EQ(warm->instances[0].tier, 2u);

  const auto topology = ctl({"--hub", dc1_.endpoint, "topology"});
  EXPECT_EQ(topology.status.code, 0) << topology.err;
  EXPECT_NE(topology.out.find(l2_.endpoint), std::string::npos) << topology.out;
  EXPECT_NE(topology.out.find("  up "), std::string::npos) << topology.out;
  const auto l2_status = HubProbe(l2_.endpoint).status(kPatience);
  ASSERT_TRUE(l2_status);
  EXPECT_EQ(l2_status->child_hubs, 2u);
}

TEST_F(IntegrationTiers, KilledDc2ProviderLeavesDc1WithinItsLeaseAndTwoBeats) {
  start_network();
  auto& provider = start_provider(dc2_.endpoint, "pay-dc2", "pay=10.2.0.1:80");
  HubProbe dc1(dc1_.endpoint);
  ASSERT_TRUE(wait_until_listed(dc1, "pay", "10.2.0.1:80"));

  const auto killed_at = SteadyClock::now();
  provider.signal(SIGKILL);
  ASSERT_TRUE(provider.wait_for(kPatience));
  const bool gone =
      poll_until([&] { return !is_listed(dc1, "pay", "10.2.0.1:80"); }, kPatience, Millis{5});
  const auto took = elapsed_since(killed_at);
  ASSERT_TRUE(gone) << "still listed in dc1 " << took.count() << " ms after kill -9 in dc2";
  EXPECT_LE(took, kLease + 2 * kBeat + kSchedulingMargin)
      << "a removal must reach the other datacenter within the lease and two beats";
}

TEST_F(IntegrationTiers, Dc1KeepsWorkingWhileL2IsDownAndConvergesWhenItReturns) {
  start_network();
  start_provider(dc1_.endpoint, "web-dc1", "web=10.1.0.1:80");
  start_provider(dc2_.endpoint, "pay-dc2", "pay=10.2.0.1:80");
  HubProbe dc1(dc1_.endpoint);
  ASSERT_TRUE(wait_until_listed(dc1, "pay", "10.2.0.1:80"));

  l2_.process->signal(SIGTERM);
  ASSERT_TRUE(l2_.process->wait_for(kPatience));
  const bool stale = poll_until(
      [&] {
        const auto r = dc1.query("pay", 1s);
        return r && r->stale && has_address(*r, "10.2.0.1:80");
      },
      kPatience);
  ASSERT_TRUE(stale) << "the cross-tier list must be served, marked stale";
  const auto web = dc1.query("web", 1s);
  ASSERT_TRUE(web);
  EXPECT_TRUE(has_address(*web, "10.1.0.1:80")) << "same-tier service unaffected";
  EXPECT_EQ(web->source, proto::AnswerSource::kLocal);
  EXPECT_FALSE(web->stale);

  start_provider(dc2_.endpoint, "pay-dc2-b", "pay=10.2.0.2:80");  // a change while L2 is down
  restart_l2();
  const bool converged = poll_until(
      [&] {
        const auto r = dc1.query("pay", 1s);
        return r && !r->stale && has_address(*r, "10.2.0.1:80") && has_address(*r, "10.2.0.2:80");
      },
      kPatience);
  EXPECT_TRUE(converged) << "dc1 catches up once L2 is back";
}

class IntegrationMultiHoming : public ClusterTest {};

TEST_F(IntegrationMultiHoming, AgentRegisteredWithEveryHubOfItsDatacenterSurvivesLosingOne) {
  const auto hub_a = start_hub({.id = "dc1-a"});
  const auto hub_b = start_hub({.id = "dc1-b"});
  auto& agent =
      start_agent("web-1", {"--hub", hub_a.endpoint, "--hub", hub_b.endpoint, "--hub-mode", "all",
                            "--id", "web-1", "--register", "web=10.1.0.1:80"});
  ASSERT_TRUE(wait_until_listed(hub_a.endpoint, "web", "10.1.0.1:80"));
  ASSERT_TRUE(wait_until_listed(hub_b.endpoint, "web", "10.1.0.1:80"))
      << "each hub holds the agent's instances independently";

  hub_a.process->signal(SIGKILL);
  ASSERT_TRUE(hub_a.process->wait_for(kPatience));
  HubProbe b(hub_b.endpoint);
  EXPECT_TRUE(holds_for([&] { return is_listed(b, "web", "10.1.0.1:80"); }, 3 * kLease))
      << "losing one hub loses nothing at the other";

  agent.signal(SIGTERM);
  ASSERT_TRUE(agent.wait_for(kPatience));
  EXPECT_TRUE(poll_until([&] { return !is_listed(b, "web", "10.1.0.1:80"); }, kPatience));
}

}  // namespace
}  // namespace cascade::integration
