#include "hub/cross_tier_cache.hpp"

#include <gtest/gtest.h>

#include "tests/common/builders.hpp"

namespace cascade::hub {
namespace {

using test_support::inst;
using test_support::key;

UpstreamAnswer found(const std::string& service, std::uint64_t version) {
  return UpstreamAnswer{key(service), true, version, {inst("i1", "10.1.0.1:80")}, "l2-a", 2};
}

UpstreamAnswer not_found(const std::string& service) {
  return UpstreamAnswer{key(service), false, 0, {}, "l2-a", 2};
}

class CrossTierCacheTest : public ::testing::Test {
 protected:
  CrossTierCacheConfig config() {
    CrossTierCacheConfig c;
    c.ttl = Duration{3000};
    c.negative_ttl = Duration{1000};
    c.max_stale = Duration{60'000};
    c.idle_ttl = Duration{10'000};
    c.max_entries = 3;
    return c;
  }
  FakeClock clock;
  CrossTierCache cache{config()};
  CacheLookup look(const std::string& service, bool upstream_up = true, std::uint64_t waiter = 0) {
    return cache.lookup(key(service), clock.now(), upstream_up, waiter);
  }
};

TEST_F(CrossTierCacheTest, FirstLookupAsksUpstreamThenTheCacheAnswersWithinTheTtl) {
  auto first = look("svc");
  EXPECT_EQ(first.state, CacheState::kMiss);
  EXPECT_TRUE(first.ask_upstream);
  cache.store(found("svc", 7), clock.now());
  clock.advance(Duration{2999});
  auto warm = look("svc");
  ASSERT_EQ(warm.state, CacheState::kFresh);
  EXPECT_EQ(warm.answer->version, 7u);
  EXPECT_EQ(warm.age, Duration{2999});
}

TEST_F(CrossTierCacheTest, EntryExpiresAtItsTtlAndIsAskedForAgain) {
  look("svc");
  cache.store(found("svc", 7), clock.now());
  clock.advance(Duration{3000});
  auto expired = look("svc");
  EXPECT_EQ(expired.state, CacheState::kMiss);
  EXPECT_TRUE(expired.ask_upstream);
}

TEST_F(CrossTierCacheTest, NotFoundIsCachedForTheShorterNegativeTtl) {
  look("ghost");
  cache.store(not_found("ghost"), clock.now());
  clock.advance(Duration{999});
  auto cached = look("ghost");
  ASSERT_EQ(cached.state, CacheState::kFresh);
  EXPECT_FALSE(cached.answer->found);
  clock.advance(Duration{1});
  EXPECT_EQ(look("ghost").state, CacheState::kMiss);
}

TEST_F(CrossTierCacheTest, StormOfMissesSendsOneQuestionAndEveryWaiterGetsTheAnswer) {
  int questions = 0;
  for (std::uint64_t waiter = 1; waiter <= 100; ++waiter)
    if (look("svc", true, waiter).ask_upstream) ++questions;
  EXPECT_EQ(questions, 1);
  auto waiters = cache.store(found("svc", 1), clock.now());
  EXPECT_EQ(waiters.size(), 100u);
  EXPECT_EQ(waiters.front(), 1u);
}

TEST_F(CrossTierCacheTest, ExpiredEntryIsServedStaleWithItsAgeWhileUpstreamIsDown) {
  look("svc");
  cache.store(found("svc", 7), clock.now());
  clock.advance(Duration{20'000});
  auto stale = look("svc", /*upstream_up=*/false);
  ASSERT_EQ(stale.state, CacheState::kStale);
  EXPECT_EQ(stale.age, Duration{20'000});
  EXPECT_EQ(look("svc", /*upstream_up=*/true).state, CacheState::kMiss) << "stale only while down";
}

TEST_F(CrossTierCacheTest, StaleServingEndsAfterMaxStale) {
  look("svc");
  cache.store(found("svc", 7), clock.now());
  clock.advance(Duration{60'000});
  EXPECT_EQ(look("svc", false).state, CacheState::kMiss);
}

TEST_F(CrossTierCacheTest, AbandonedQuestionReturnsItsWaitersAndTheNextLookupAsksAgain) {
  look("svc", true, 5);
  EXPECT_EQ(cache.abandon(key("svc")), std::vector<std::uint64_t>{5});
  EXPECT_TRUE(look("svc").ask_upstream);
}

TEST_F(CrossTierCacheTest, OnlyRecentlyUsedServicesAreKeptFreshUpstream) {
  look("a");
  cache.store(found("a", 1), clock.now());
  clock.advance(Duration{6000});
  look("b");
  cache.store(found("b", 1), clock.now());
  clock.advance(Duration{5000});  // a idle 11 s, b idle 5 s
  EXPECT_EQ(cache.in_use(clock.now()), std::vector<proto::ServiceKey>{key("b")});
  cache.expire(clock.now());
  EXPECT_EQ(cache.size(), 1u);
}

TEST_F(CrossTierCacheTest, RefreshFromUpstreamDoesNotCountAsAUse) {
  look("a");
  cache.store(found("a", 1), clock.now());
  clock.advance(Duration{9000});
  cache.store(found("a", 2), clock.now());  // the uplink's beat refreshed it
  clock.advance(Duration{1000});
  EXPECT_TRUE(cache.in_use(clock.now()).empty());
}

TEST_F(CrossTierCacheTest, LookupsOfManyNamesNeverHoldMoreThanMaxEntries) {
  for (int i = 0; i < 10; ++i) {
    look("s" + std::to_string(i));
    cache.store(not_found("s" + std::to_string(i)), clock.now());
  }
  EXPECT_EQ(cache.size(), 3u);
  EXPECT_EQ(look("s9").state, CacheState::kFresh) << "the most recent stay";
}

}  // namespace
}  // namespace cascade::hub
