// What a Client counts and times for metrics (Client::stats(), ClientObserver),
// against a real hub server over ZeroMQ on loopback.
#include <gtest/gtest.h>

#include <atomic>

#include "cascade/agent/client.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

using test_support::reg;
using testing::eventually;

// Counts what it is told, and the longest time.
class CountingObserver final : public ClientObserver {
 public:
  void beat_round_trip(std::chrono::nanoseconds rtt) override { note(round_trips, rtt); }
  void first_lookup(std::chrono::nanoseconds latency) override { note(lookups, latency); }

  std::atomic<int> round_trips{0};
  std::atomic<int> lookups{0};
  std::atomic<bool> any_not_positive{false};

 private:
  void note(std::atomic<int>& count, std::chrono::nanoseconds d) {
    ++count;
    if (d.count() <= 0) any_not_positive = true;
  }
};

class ClientStatsTest : public testing::ClientWithHubTest {
 protected:
  ClientStatsTest() : ClientWithHubTest("client-stats") {}

  std::uint64_t picks(const Client& c, PickResult result) {
    return c.stats().picks[static_cast<std::size_t>(result)];
  }
};

TEST_F(ClientStatsTest, ObserverGetsEveryBeatsRoundTripAndTheFirstLookupsLatency) {
  CountingObserver observer;
  auto o = options("consumer");
  o.observer = &observer;
  Client consumer(o);
  ASSERT_TRUE(eventually([&] { return observer.round_trips >= 3; }));
  EXPECT_EQ(observer.lookups, 0);
  consumer.resolve(orders);
  EXPECT_EQ(observer.lookups, 1) << "timed when the query ended, before resolve() returned";
  consumer.resolve(orders);
  EXPECT_EQ(observer.lookups, 1) << "answered from the cache: no lookup";
  EXPECT_FALSE(observer.any_not_positive);

  const auto stats = consumer.stats();
  EXPECT_GE(stats.hub.beats_sent, 3u);
  EXPECT_GE(stats.hub.beat_replies, 3u);
  EXPECT_EQ(stats.hub.lookups_sent, 1u);
  EXPECT_EQ(stats.hub.lookups_not_found, 1u) << "nothing registers orders";
  EXPECT_EQ(stats.status.cached_services, 1u);
  ASSERT_TRUE(stats.cache.oldest);
  EXPECT_LE(*stats.cache.oldest, kBeat * 10);
}

TEST_F(ClientStatsTest, PicksAreCountedByResult) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  Client consumer(options("consumer"));
  ASSERT_TRUE(eventually([&] { return consumer.pick(orders).has_value(); }));
  const auto picked = picks(consumer, PickResult::kPicked);
  EXPECT_GE(picked, 1u);
  // Picks made before the provider's registration reached the hub found none.
  const auto none_before = picks(consumer, PickResult::kNoInstance);

  const std::vector<std::string> everyone{"10.0.0.1:80"};
  PickContext exclude_all;
  exclude_all.exclude = &everyone;
  EXPECT_FALSE(consumer.pick(orders, exclude_all));
  EXPECT_EQ(picks(consumer, PickResult::kNoInstance), none_before + 1);
  EXPECT_FALSE(consumer.pick_cached({"never-resolved", "default"}, LbPolicy::kRandom));
  EXPECT_EQ(picks(consumer, PickResult::kUnresolved), 1u);
  EXPECT_EQ(picks(consumer, PickResult::kPicked), picked) << "counted once each";
}

TEST_F(ClientStatsTest, CallsAndBreakersAppearOnceCallStartedTheCaller) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  Client consumer(options("consumer"));
  EXPECT_EQ(consumer.stats().breakers.closed, 0u) << "no call yet";
  ASSERT_TRUE(eventually([&] { return consumer.pick(orders).has_value(); }));
  const auto result =
      consumer.call(orders, [](const proto::Instance&, MonoTime) { return AttemptOutcome::kOk; });
  ASSERT_EQ(result.outcome, AttemptOutcome::kOk);
  const auto stats = consumer.stats();
  EXPECT_EQ(stats.calls.calls_ended(CallEnd::kOk), 1u);
  EXPECT_EQ(stats.calls.attempts, 1u);
  EXPECT_EQ(stats.breakers.closed, 1u);
}

}  // namespace
}  // namespace cascade::agent
