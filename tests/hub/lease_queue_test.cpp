#include "cascade/hub/lease_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

namespace cascade::hub {
namespace {

MonoTime at(int ms) {
  return mono_from_ms(ms);
}

std::vector<int> expire_all(LeaseQueue<int>& q, int now_ms) {
  std::vector<int> out;
  q.expire(at(now_ms), 1000, [&](int k) { out.push_back(k); });
  return out;
}

TEST(LeaseQueue, ExpiresExactlyAtTheDeadlineNotBefore) {
  LeaseQueue<int> q;
  q.add(1, at(100));
  EXPECT_TRUE(expire_all(q, 99).empty());
  EXPECT_EQ(expire_all(q, 100), std::vector<int>{1});
}

TEST(LeaseQueue, RenewalMovesLeaseBehindOthers) {
  LeaseQueue<int> q;
  auto a = q.add(1, at(100));
  q.add(2, at(110));
  q.renew(a, at(120));
  EXPECT_EQ(q.next_deadline(), at(110));
  EXPECT_EQ(expire_all(q, 115), std::vector<int>{2});
  EXPECT_EQ(expire_all(q, 120), std::vector<int>{1});
}

TEST(LeaseQueue, EarlierDeadlineInsertedInOrder) {
  LeaseQueue<int> q;
  q.add(1, at(100));
  q.add(2, at(50));
  auto c = q.add(3, at(200));
  q.renew(c, at(75));
  EXPECT_EQ(expire_all(q, 1000), (std::vector<int>{2, 3, 1}));
}

TEST(LeaseQueue, ExpiryStopsAtTheCap) {
  LeaseQueue<int> q;
  for (int i = 0; i < 10; ++i)
    q.add(i, at(100));
  std::vector<int> out;
  EXPECT_EQ(q.expire(at(100), 3, [&](int k) { out.push_back(k); }), 3u);
  EXPECT_EQ(q.size(), 7u);
}

}  // namespace
}  // namespace cascade::hub
