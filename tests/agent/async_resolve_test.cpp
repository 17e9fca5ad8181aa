// Client::resolve_async(): answered without blocking, one hub query for many
// callers, and every caller answered even when the Client stops first.
#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <vector>

#include "cascade/agent/async_resolves.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

using test_support::reg;
using testing::eventually;

TEST(AsyncResolvesTest, CallersOfOneServiceShareTheFirstQuery) {
  AsyncResolves pending;
  const proto::ServiceKey orders{"orders", "default"};
  EXPECT_FALSE(pending.pending_query(orders));
  int answered = 0;
  pending.wait(orders, 7, [&](auto) { ++answered; });
  ASSERT_EQ(pending.pending_query(orders), 7u);
  pending.wait(orders, *pending.pending_query(orders), [&](auto) { ++answered; });
  auto [service, callers] = pending.finish(7);
  EXPECT_EQ(service, orders);
  EXPECT_EQ(callers.size(), 2u);
  EXPECT_FALSE(pending.pending_query(orders));
  EXPECT_TRUE(pending.empty());
  EXPECT_TRUE(pending.finish(7).second.empty());  // finished once only
}

class AsyncResolveTest : public testing::ClientWithHubTest {
 protected:
  AsyncResolveTest() : ClientWithHubTest("async-resolve") {}
};

// Collects the answers of many resolve_async() callers.
struct Answers {
  std::mutex mu;
  std::vector<std::optional<Resolution>> got;
  ResolveCallback collect() {
    return [this](std::optional<Resolution> r) {
      std::lock_guard lock(mu);
      got.push_back(std::move(r));
    };
  }
  std::size_t size() {
    std::lock_guard lock(mu);
    return got.size();
  }
};

TEST_F(AsyncResolveTest, ManyCallersOfAnUnknownServiceAreAllAnsweredByTheHub) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  ASSERT_TRUE(eventually([&] {
    auto r = provider.resolve(orders);
    return r && r->instances.size() == 1;
  }));
  Client consumer(options("consumer"));
  Answers answers;
  for (int i = 0; i < 50; ++i)
    consumer.resolve_async(orders, answers.collect());
  ASSERT_TRUE(eventually([&] { return answers.size() == 50; }));
  for (const auto& r : answers.got) {
    ASSERT_TRUE(r);
    ASSERT_EQ(r->instances.size(), 1u);
    EXPECT_EQ(r->instances[0].address, "10.0.0.1:80");
  }
  // Now fresh in the cache: the next caller is answered on its own thread.
  bool inline_answer = false;
  consumer.resolve_async(orders,
                         [&](std::optional<Resolution> r) { inline_answer = r.has_value(); });
  EXPECT_TRUE(inline_answer);
  EXPECT_TRUE(consumer.cached(orders));
}

TEST_F(AsyncResolveTest, CallersWaitingWhenTheClientStopsAreAnsweredFromTheCache) {
  auto opts = options("consumer");
  opts.hubs = {"tcp://127.0.0.1:1"};  // nothing listens: the query cannot be answered
  opts.query_timeout = Duration{60'000};
  Client consumer(opts);
  Answers answers;
  consumer.resolve_async(orders, answers.collect());
  EXPECT_EQ(answers.size(), 0u);
  consumer.shutdown();
  ASSERT_EQ(answers.size(), 1u);
  EXPECT_FALSE(answers.got[0]);
  // After the stop, answered at once from the (empty) cache.
  consumer.resolve_async(orders, answers.collect());
  EXPECT_EQ(answers.size(), 2u);
}

}  // namespace
}  // namespace cascade::agent
