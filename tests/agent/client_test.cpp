// The agent library against a real hub server over ZeroMQ on loopback.
#include "cascade/agent/client.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <thread>

#include "cascade/common/codec.hpp"
#include "cascade/common/digest.hpp"
#include "cascade/hub/hub_server.hpp"
#include "cascade/hub/proxy_server.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

using testing::eventually;
using testing::fresh_dir;
using testing::RunInBackground;

namespace fs = std::filesystem;

// A cascading proxy on its own thread, forwarding to `upstream`.
class RunningProxy {
 public:
  explicit RunningProxy(const std::string& upstream) {
    hub::ProxyServerConfig config;
    config.listen = "tcp://127.0.0.1:*";
    config.upstream = upstream;
    config.core.max_delay = Duration{10};
    proxy_ = std::make_unique<hub::ProxyServer>(config, clock_, context_);
    endpoint_ = proxy_->bind();
    run_ = std::make_unique<RunInBackground<hub::ProxyServer>>(*proxy_);
  }
  const std::string& endpoint() const { return endpoint_; }
  const hub::ProxyCore& core() const { return proxy_->core(); }

 private:
  SystemClock clock_;
  zmq::context_t context_{1};
  std::unique_ptr<hub::ProxyServer> proxy_;
  std::string endpoint_;
  std::unique_ptr<RunInBackground<hub::ProxyServer>> run_;  // declared last: stops first
};

using test_support::reg;

class ClientTest : public testing::ClientWithHubTest {
 protected:
  ClientTest() : ClientWithHubTest("client") {}

  std::size_t count(Client& c, const proto::ServiceKey& key) {
    auto r = c.resolve(key);
    return r ? r->instances.size() : 0;
  }
};

TEST_F(ClientTest, RegisteredInstanceIsResolvableByAnotherClient) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually([&] { return count(consumer, orders) == 1; }));
  auto r = consumer.resolve(orders);
  EXPECT_EQ(r->instances[0].address, "10.0.0.1:80");
  EXPECT_FALSE(r->stale);
  EXPECT_EQ(r->source, Source::kHub);
}

TEST_F(ClientTest, ChangesReachAConsumerThroughBeatsWithoutAnotherQuery) {
  Client p1(options("p1"));
  p1.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually([&] { return count(consumer, orders) == 1; }));
  std::atomic<std::size_t> notified_size{0};
  consumer.on_change([&](const Resolution& r) { notified_size = r.instances.size(); });
  Client p2(options("p2"));
  p2.register_instance(reg("orders", "o2", "10.0.0.2:80"));
  EXPECT_TRUE(eventually([&] { return notified_size.load() == 2; }));
  EXPECT_EQ(consumer.status().cached_services, 1u);
  EXPECT_EQ(count(consumer, orders), 2u);
}

// Registers `providers` x `each` instances of "orders" at `endpoint` the way
// that many agents' first beats would, and waits for each acknowledgement.
void register_many(const std::string& endpoint, int providers, int each) {
  zmq::context_t context(1);
  zmq::socket_t dealer(context, zmq::socket_type::dealer);
  dealer.set(zmq::sockopt::linger, 0);
  dealer.connect(endpoint);
  for (int p = 0; p < providers; ++p) {
    proto::UpBeat beat;
    beat.node_id = "provider-" + std::to_string(p);
    beat.epoch = 1;
    beat.seq = 1;
    beat.registrations.emplace();
    for (int i = 0; i < each; ++i) {
      const auto n = p * each + i;
      beat.registrations->push_back(reg("orders", "orders-" + std::to_string(n),
                                        "10.2." + std::to_string(n / 250 % 250) + "." +
                                            std::to_string(n % 250) + ":" +
                                            std::to_string(8000 + n / 62'500)));
    }
    beat.digest = proto::digest_of(*beat.registrations);
    const auto bytes = proto::encode(beat);
    dealer.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::message_t reply;
    ASSERT_TRUE(dealer.recv(reply));
  }
}

// A list larger than a frame comes in parts (protocol section 5.13); the
// consumer sees the whole list, never a part of it.
TEST_F(ClientTest, AServiceLargerThanAFrameResolvesWhole) {
  // A hub of its own with long leases: the providers beat only once.
  const auto dir = fresh_dir("large-service-hub");
  testing::RunningHub big(dir, "large-service-hub", Duration{20'000});
  register_many(big.endpoint(), 30, 5'000);
  auto o = options("consumer");
  o.hubs = {big.endpoint()};
  o.query_timeout = Duration{5000};  // a 6 MB answer on a loaded machine
  Client consumer(o);
  auto r = consumer.resolve(orders);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->instances.size(), 150'000u);
  EXPECT_FALSE(r->stale);
  fs::remove_all(dir);
}

TEST_F(ClientTest, ShutdownDeregistersEverythingAtOnce) {
  auto provider = std::make_unique<Client>(options("provider"));
  provider->register_instance(reg("orders", "o1", "10.0.0.1:80"));
  provider->register_instance(reg("payments", "p1", "10.0.0.1:81"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually([&] { return count(consumer, orders) == 1; }));
  EXPECT_TRUE(provider->shutdown());
  // Gone from the hub at once: a fresh lookup (a new client) sees nothing.
  Client fresh(options("fresh"));
  EXPECT_EQ(count(fresh, orders), 0u);
  EXPECT_EQ(count(fresh, {"payments", "default"}), 0u);
}

TEST_F(ClientTest, PickRoundRobinAlternates) {
  Client p1(options("p1"));
  p1.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  p1.register_instance(reg("orders", "o2", "10.0.0.2:80"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually([&] { return count(consumer, orders) == 2; }));
  auto a = consumer.pick(orders);
  auto b = consumer.pick(orders);
  ASSERT_TRUE(a && b);
  EXPECT_NE(a->id, b->id);
}

TEST_F(ClientTest, RestartedConsumerResolvesFromItsSnapshotWhileNoHubAnswers) {
  const auto data = fresh_dir("client-consumer");
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  {
    auto o = options("consumer");
    o.data_dir = data;
    Client consumer(o);
    ASSERT_TRUE(eventually([&] { return count(consumer, orders) == 1; }));
  }
  auto o = options("consumer");
  o.data_dir = data;
  hub.reset();  // no hub from now on
  Client restarted(o);
  auto r = restarted.resolve(orders);
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->stale);
  EXPECT_EQ(r->source, Source::kSnapshot);
  ASSERT_EQ(r->instances.size(), 1u);
  EXPECT_EQ(r->instances[0].address, "10.0.0.1:80");
  fs::remove_all(data);
}

TEST_F(ClientTest, AgentsBehindAProxyRegisterResolveAndDeregisterThroughIt) {
  RunningProxy proxy(hub->endpoint());
  auto via_proxy = [&](const std::string& id) {
    auto o = options(id);
    o.hubs = {proxy.endpoint()};
    return o;
  };
  auto p1 = std::make_unique<Client>(via_proxy("p1"));
  Client p2(via_proxy("p2"));
  p1->register_instance(reg("orders", "o1", "10.0.0.1:80"));
  p2.register_instance(reg("orders", "o2", "10.0.0.2:80"));
  Client direct(options("direct"));
  EXPECT_TRUE(eventually([&] { return count(direct, orders) == 2; }));
  Client consumer(via_proxy("consumer"));
  EXPECT_TRUE(eventually([&] { return count(consumer, orders) == 2; }));
  EXPECT_TRUE(p1->shutdown()) << "the Deregister's ack came back through the proxy";
  Client fresh(options("fresh"));
  EXPECT_EQ(count(fresh, orders), 1u);
  EXPECT_GT(proxy.core().counters().batches, 0u);
  EXPECT_EQ(proxy.core().counters().unmatched_replies, 0u);
}

TEST_F(ClientTest, FailsOverToTheNextHubWhenTheFirstIsDead) {
  auto o = options("provider");
  o.hubs = {"tcp://127.0.0.1:1", hub->endpoint()};  // nothing listens on port 1
  o.misses_before_failover = 2;
  o.failover_backoff_base = Duration{50};
  Client provider(o);
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  Client consumer(options("consumer"));
  EXPECT_TRUE(eventually([&] { return count(consumer, orders) == 1; }, Duration{5000}));
  EXPECT_EQ(provider.status().current_hub, 1u);
}

}  // namespace
}  // namespace cascade::agent
