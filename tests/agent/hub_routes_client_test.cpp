// Routing rules an operator sets at a hub (AdminRequest set_routes, what
// cascadectl set-routes sends), reaching a Client through its beats: a real
// hub server over ZeroMQ on loopback, providers and a consumer as Clients.
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <thread>

#include "cascade/agent/client.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

using testing::eventually;

class HubRoutesClientTest : public testing::ClientWithHubTest {
 protected:
  HubRoutesClientTest() : ClientWithHubTest("routes") {}

  static proto::Registration in_zone(const std::string& id, const std::string& address,
                                     const std::string& zone) {
    auto r = test_support::reg("orders", id, address);
    r.instance.zone = zone;
    return r;
  }
  // The provider of o1 (dc1) and o2 (dc2).
  std::unique_ptr<Client> provider() {
    auto p = std::make_unique<Client>(options("provider"));
    p->register_instance(in_zone("o1", "10.0.0.1:80", "dc1"));
    p->register_instance(in_zone("o2", "10.0.0.2:80", "dc2"));
    return p;
  }
  std::set<std::string> addresses_picked(Client& c, int picks = 20) {
    std::set<std::string> seen;
    for (int i = 0; i < picks; ++i)
      if (auto in = c.pick(orders, LbPolicy::kRoundRobin)) seen.insert(in->address);
    return seen;
  }
  // What `cascadectl set-routes orders --rule ...` sends, and the hub's answer.
  proto::AdminReply set_routes(std::vector<proto::RouteRuleText> routes) {
    proto::AdminRequest request;
    request.op = proto::AdminOp::kSetRoutes;
    request.service = orders;
    request.routes = std::move(routes);
    return admin(std::move(request));
  }
};

const std::set<std::string> kBoth{"10.0.0.1:80", "10.0.0.2:80"};
const std::set<std::string> kDc1{"10.0.0.1:80"};
const std::set<std::string> kDc2{"10.0.0.2:80"};

TEST_F(HubRoutesClientTest, RulesSetAtTheHubSteerPicksOnlyToDc1UntilCleared) {
  auto p = provider();
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually([&] { return addresses_picked(consumer) == kBoth; }));

  const auto reply = set_routes({{"=> zone = dc1", 0, false, true}});
  ASSERT_TRUE(reply.ok) << reply.message;

  EXPECT_TRUE(eventually([&] { return addresses_picked(consumer) == kDc1; }))
      << "the hub's rule did not reach the consumer's picks";
  EXPECT_EQ(addresses_picked(consumer, 40), kDc1) << "and it stays";
  const auto resolution = consumer.resolve(orders);
  ASSERT_TRUE(resolution);
  EXPECT_EQ(resolution->routes,
            (std::vector<proto::RouteRuleText>{{"=> zone = dc1", 0, false, true}}));
  EXPECT_EQ(consumer.router().size(), 1u);

  ASSERT_TRUE(set_routes({}).ok);
  EXPECT_TRUE(eventually([&] { return addresses_picked(consumer) == kBoth; }))
      << "cleared rules still applied";
  EXPECT_EQ(consumer.router().size(), 0u);
}

TEST_F(HubRoutesClientTest, AConsumerStartingAfterTheRulesPicksUnderThemFromItsFirstPick) {
  auto p = provider();
  ASSERT_TRUE(set_routes({{"=> zone = dc1", 0, false, true}}).ok);
  Client consumer(options("consumer"));

  ASSERT_TRUE(eventually([&] { return consumer.pick(orders).has_value(); }));

  EXPECT_EQ(addresses_picked(consumer, 40), kDc1);
}

TEST_F(HubRoutesClientTest, LocalRulesKeepWorkingBesideTheHubsAndPrioritiesDecide) {
  auto p = provider();
  auto o = options("consumer");
  // Configured with exactly the scope the hub's rules get: it must survive them.
  o.routes = {RouteRuleSpec{"=> zone = dc2", 100, false, true, "orders@default"}};
  Client consumer(o);
  ASSERT_TRUE(eventually([&] { return addresses_picked(consumer) == kDc2; }));

  ASSERT_TRUE(set_routes({{"=> zone = dc1", 10, false, true}}).ok);
  ASSERT_TRUE(eventually([&] { return consumer.router().size() == 2; }));
  EXPECT_EQ(addresses_picked(consumer, 40), kDc2) << "the local rule's priority is higher";

  ASSERT_TRUE(set_routes({{"=> zone = dc1", 200, false, true}}).ok);
  EXPECT_TRUE(eventually([&] { return addresses_picked(consumer) == kDc1; }))
      << "the hub's rule now has the higher priority";
  EXPECT_EQ(consumer.router().size(), 2u);
}

TEST_F(HubRoutesClientTest, ARestartedConsumerPicksUnderTheHubsRulesFromItsSnapshotWithNoHub) {
  const auto data = testing::fresh_dir("routes-consumer");
  auto p = provider();
  ASSERT_TRUE(set_routes({{"=> zone = dc1", 0, false, true}}).ok);
  auto o = options("consumer");
  o.data_dir = data;
  {
    Client consumer(o);
    ASSERT_TRUE(eventually([&] { return addresses_picked(consumer) == kDc1; }));
  }
  hub.reset();  // no hub from now on

  Client restarted(o);
  const auto resolution = restarted.resolve(orders);
  ASSERT_TRUE(resolution);
  EXPECT_EQ(resolution->source, Source::kSnapshot);
  EXPECT_EQ(resolution->instances.size(), 2u) << "both instances are in the snapshot";
  EXPECT_EQ(resolution->routes,
            (std::vector<proto::RouteRuleText>{{"=> zone = dc1", 0, false, true}}));
  EXPECT_EQ(addresses_picked(restarted, 40), kDc1) << "the restored rule filters the picks";
  std::filesystem::remove_all(data);
}

}  // namespace
}  // namespace cascade::agent
