// Client::pick and the call feedback against a real hub server over ZeroMQ
// on loopback: balancers follow list versions, learn from reported calls,
// honour exclusions, and go when their service leaves the cache.
#include <gtest/gtest.h>

#include <set>
#include <thread>

#include "cascade/agent/client.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

using std::chrono::microseconds;
using testing::eventually;

class ClientPickTest : public testing::ClientWithHubTest {
 protected:
  ClientPickTest() : ClientWithHubTest("lb") {}

  std::set<std::string> addresses_picked(Client& c, LbPolicy policy, int picks,
                                         const PickContext& ctx = {}) {
    std::set<std::string> seen;
    for (int i = 0; i < picks; ++i)
      if (auto in = c.pick(orders, policy, ctx)) seen.insert(in->address);
    return seen;
  }
};

using test_support::reg;

TEST_F(ClientPickTest, PickFollowsANewListVersion) {
  Client p1(options("p1"));
  p1.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually([&] { return consumer.pick(orders).has_value(); }));
  EXPECT_EQ(addresses_picked(consumer, LbPolicy::kRoundRobin, 4),
            (std::set<std::string>{"10.0.0.1:80"}));
  Client p2(options("p2"));
  p2.register_instance(reg("orders", "o2", "10.0.0.2:80"));
  EXPECT_TRUE(eventually([&] {
    return addresses_picked(consumer, LbPolicy::kRoundRobin, 4).size() == 2;
  })) << "the balancer's candidates were not rebuilt for the new version";
  p2.deregister_instance(orders, "o2");
  EXPECT_TRUE(eventually([&] {
    return addresses_picked(consumer, LbPolicy::kRoundRobin, 4) ==
           std::set<std::string>{"10.0.0.1:80"};
  }));
}

TEST_F(ClientPickTest, ReportedCallsSteerLeastActiveAwayFromTheBusyAddress) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  provider.register_instance(reg("orders", "o2", "10.0.0.2:80"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually(
      [&] { return addresses_picked(consumer, LbPolicy::kLeastActive, 20).size() == 2; }));
  consumer.on_call_started(orders, "10.0.0.1:80");
  EXPECT_EQ(addresses_picked(consumer, LbPolicy::kLeastActive, 20),
            (std::set<std::string>{"10.0.0.2:80"}));
  consumer.on_call_finished(orders, "10.0.0.1:80", microseconds{800}, true);
  EXPECT_EQ(addresses_picked(consumer, LbPolicy::kLeastActive, 40).size(), 2u);
  // Unknown services and addresses are ignored.
  consumer.on_call_started({"unknown", "default"}, "10.0.0.1:80");
  consumer.on_call_finished(orders, "10.9.9.9:1", microseconds{1}, false);
}

TEST_F(ClientPickTest, ExcludedAddressesAreSkippedAndExcludingAllPicksNothing) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  provider.register_instance(reg("orders", "o2", "10.0.0.2:80"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(
      eventually([&] { return addresses_picked(consumer, LbPolicy::kRandom, 20).size() == 2; }));
  const std::vector<std::string> tried{"10.0.0.1:80"};
  PickContext retry;
  retry.exclude = &tried;
  EXPECT_EQ(addresses_picked(consumer, LbPolicy::kP2c, 20, retry),
            (std::set<std::string>{"10.0.0.2:80"}));
  const std::vector<std::string> both{"10.0.0.1:80", "10.0.0.2:80"};
  PickContext none;
  none.exclude = &both;
  EXPECT_FALSE(consumer.pick(orders, LbPolicy::kConsistentHash, none));
}

TEST_F(ClientPickTest, BalancersGoWithTheirServiceAndLearnedLoadWithThem) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  provider.register_instance(reg("orders", "o2", "10.0.0.2:80"));
  auto o = options("consumer");
  o.subscription_ttl = Duration{300};
  Client consumer(o);
  ASSERT_TRUE(eventually(
      [&] { return addresses_picked(consumer, LbPolicy::kLeastActive, 20).size() == 2; }));
  for (int i = 0; i < 3; ++i)
    consumer.on_call_started(orders, "10.0.0.1:80");  // never finished
  ASSERT_EQ(addresses_picked(consumer, LbPolicy::kLeastActive, 20),
            (std::set<std::string>{"10.0.0.2:80"}));
  // Unused for the TTL: the service leaves the cache and its balancers go too.
  ASSERT_TRUE(eventually([&] { return consumer.status().cached_services == 0; }));
  EXPECT_EQ(addresses_picked(consumer, LbPolicy::kLeastActive, 40).size(), 2u)
      << "a balancer outlived its service: the three calls in flight are still counted";
}

TEST_F(ClientPickTest, BadLoadBalancingConfigIsRefusedWithItsName) {
  auto o = options("consumer");
  o.lb.latency_decay = 1.5;
  try {
    Client c(o);
    FAIL() << "accepted latency_decay 1.5";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("latency_decay"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace cascade::agent
