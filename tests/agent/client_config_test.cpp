// The config centre as an application meets it through Client: a real hub on
// loopback, groups set there by operator commands (what cascadectl config
// sends), and the client's snapshots, callbacks and levers in call().

#include <gtest/gtest.h>

#include <atomic>
#include <future>

#include "cascade/agent/client.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

using testing::eventually;

class ClientConfigTest : public testing::ClientWithHubTest {
 protected:
  ClientConfigTest() : ClientWithHubTest("config") {}

  ClientOptions with_levers(const std::string& id) {
    auto o = options(id);
    o.config_groups = {"ops.levers"};
    return o;
  }
  // A provider of orders at 10.0.0.1:80 (nothing listens: attempts are answered by `fn`).
  std::unique_ptr<Client> provider() {
    auto p = std::make_unique<Client>(options("provider"));
    p->register_instance(test_support::reg("orders", "o1", "10.0.0.1:80"));
    return p;
  }
};

TEST_F(ClientConfigTest, TheFirstLookupWaitsForTheHubAndGetsEachValueWithItsOrigin) {
  ASSERT_TRUE(
      set_config("orders.limits", {{"timeout_ms", "300"}, {"blob", std::string("\0\xff", 2)}}).ok);
  Client client(options("app"));
  const auto got = client.config("orders.limits");
  ASSERT_TRUE(got) << "no answer within the query timeout";
  EXPECT_FALSE(got->gone);
  EXPECT_EQ(got->value("timeout_ms"), "300");
  EXPECT_EQ(got->value("blob"), std::string("\0\xff", 2));
  EXPECT_EQ(got->values.at("timeout_ms").origin.hub, "config-test-hub");
  EXPECT_EQ(got->values.at("timeout_ms").origin.tier, 1u);
  EXPECT_EQ(client.config_value("orders.limits", "nope"), std::nullopt);
}

TEST_F(ClientConfigTest, AGroupNoTierHasIsGoneNotMissing) {
  Client client(options("app"));
  const auto got = client.config("payments.limits");
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->gone);
  EXPECT_TRUE(got->values.empty());
}

TEST_F(ClientConfigTest, AChangeAtTheHubReachesTheCallbackWithoutWaitingForABeat) {
  ASSERT_TRUE(set_config("orders.limits", {{"timeout_ms", "300"}}).ok);
  Client client(options("app"));
  std::promise<std::string> changed;
  std::atomic<bool> once{false};
  client.on_config_change("orders.limits", [&](const ConfigSnapshot& s) {
    if (s.value("timeout_ms") == "250" && !once.exchange(true)) changed.set_value("250");
  });
  ASSERT_TRUE(
      eventually([&] { return client.config_value("orders.limits", "timeout_ms") == "300"; }));
  ASSERT_TRUE(set_config("orders.limits", {{"timeout_ms", "250"}}).ok);
  auto future = changed.get_future();
  ASSERT_EQ(future.wait_for(std::chrono::seconds(3)), std::future_status::ready);
  EXPECT_EQ(future.get(), "250");
}

TEST_F(ClientConfigTest, ADegradeSwitchMakesCallsFailFastOrRunTheFallbackUntilSwitchedOff) {
  auto p = provider();
  Client client(with_levers("app"));
  std::atomic<int> attempts{0};
  const AttemptFn fn = [&](const proto::Instance&, MonoTime) {
    ++attempts;
    return AttemptOutcome::kOk;
  };
  ASSERT_TRUE(eventually([&] { return client.call(orders, fn).outcome == AttemptOutcome::kOk; }));
  ASSERT_TRUE(set_config("ops.levers", {{"degrade.orders", "on"}}).ok);
  ASSERT_TRUE(
      eventually([&] { return client.call(orders, fn).refused == CallRefusal::kDegraded; }));
  const int before = attempts.load();
  const auto refused = client.call(orders, fn);
  EXPECT_EQ(refused.refused, CallRefusal::kDegraded);
  EXPECT_EQ(refused.outcome, AttemptOutcome::kOtherSystemError);
  EXPECT_EQ(refused.attempts, 0u);
  CallOptions with_fallback;
  with_fallback.fallback = [] { return AttemptOutcome::kOk; };
  const auto fallback = client.call(orders, fn, with_fallback);
  EXPECT_TRUE(fallback.fallback_ran);
  EXPECT_EQ(fallback.outcome, AttemptOutcome::kOk);
  EXPECT_EQ(attempts.load(), before) << "a degraded service is not called";
  EXPECT_GE(client.stats().levers.degraded, 2u);

  ASSERT_TRUE(set_config("ops.levers", {{"degrade.orders", "off"}}).ok);
  EXPECT_TRUE(eventually([&] { return client.call(orders, fn).outcome == AttemptOutcome::kOk; }));
}

TEST_F(ClientConfigTest, AnInFlightLimitRefusesTheCallOverItAtOnce) {
  auto p = provider();
  ASSERT_TRUE(set_config("ops.levers", {{"limit.orders.max_in_flight", "1"}}).ok);
  Client client(with_levers("app"));
  ASSERT_TRUE(eventually(
      [&] { return client.config_value("ops.levers", "limit.orders.max_in_flight") == "1"; }));
  std::promise<void> inside;
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<bool> signalled{false};
  const AttemptFn slow = [&](const proto::Instance&, MonoTime) {
    if (!signalled.exchange(true)) inside.set_value();
    released.wait();
    return AttemptOutcome::kOk;
  };
  CallOptions long_call;
  long_call.timeout = Duration{5000};
  auto first = std::async(std::launch::async, [&] { return client.call(orders, slow, long_call); });
  ASSERT_EQ(inside.get_future().wait_for(std::chrono::seconds(3)), std::future_status::ready);
  const auto second = client.call(orders, slow, long_call);
  EXPECT_EQ(second.refused, CallRefusal::kOverLimit);
  EXPECT_EQ(second.attempts, 0u);
  release.set_value();
  EXPECT_EQ(first.get().outcome, AttemptOutcome::kOk);
  EXPECT_EQ(client.stats().levers.over_limit, 1u);
  EXPECT_EQ(client.call(orders, slow, long_call).refused, CallRefusal::kNone);
}

TEST_F(ClientConfigTest, AGroupStillUnansweredAfterItsFirstQueryTimeoutAnswersAtOnce) {
  // A hub that takes the beats and never answers: no failover within the test
  // (beats every 10 s), so the hubs are not known to be down.
  zmq::context_t context(1);
  zmq::socket_t silent(context, zmq::socket_type::router);
  silent.set(zmq::sockopt::linger, 0);
  silent.bind("tcp://127.0.0.1:*");
  auto o = options("app");
  o.hubs = {silent.get(zmq::sockopt::last_endpoint)};
  o.beat_interval = Duration{10'000};
  o.query_timeout = Duration{1'000};
  Client client(o);
  const auto timed = [&] {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_FALSE(client.config("orders.limits").has_value());
    return std::chrono::steady_clock::now() - start;
  };
  EXPECT_GE(timed(), std::chrono::milliseconds(900)) << "the first call waits for an answer";
  EXPECT_LT(timed(), std::chrono::milliseconds(500)) << "not every call after it";
  EXPECT_EQ(client.config_value("orders.limits", "timeout_ms"), std::nullopt);
}

TEST_F(ClientConfigTest,
       ARestartedClientServesItsGroupsFromDiskStaleWithTheirAgeWhileNoHubAnswers) {
  const auto data = testing::fresh_dir("config-client");
  ASSERT_TRUE(set_config("orders.limits", {{"timeout_ms", "300"}}).ok);
  {
    auto o = options("app");
    o.data_dir = data;
    Client client(o);
    ASSERT_EQ(client.config_value("orders.limits", "timeout_ms"), "300");
  }
  auto o = options("app");
  o.data_dir = data;
  hub.reset();  // no hub from now on
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  Client restarted(o);
  const auto got = restarted.config("orders.limits");
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->stale);
  EXPECT_GE(got->age, Duration{20}) << "as old as the last confirmation before the restart";
  EXPECT_EQ(got->value("timeout_ms"), "300");
  EXPECT_EQ(got->values.at("timeout_ms").origin.hub, "config-test-hub");
  std::filesystem::remove_all(data);
}

TEST_F(ClientConfigTest, ABadGroupNameIsRefusedAtOnce) {
  Client client(options("app"));
  EXPECT_THROW(client.config(""), std::invalid_argument);
  auto o = options("app2");
  o.config_groups = {""};
  EXPECT_THROW(Client bad(o), std::invalid_argument);
}

}  // namespace
}  // namespace cascade::agent
