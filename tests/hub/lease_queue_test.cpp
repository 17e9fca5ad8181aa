#include "cascade/hub/lease_queue.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <vector>

namespace cascade::hub {
namespace {

MonoTime at(int ms) {
  return mono_from_ms(ms);
}

struct Holder : LeaseHook {
  explicit Holder(int k) : key(k) {}
  int key;
};

// Holders that stay where they are while queued, as the queue requires.
class Holders {
 public:
  Holder& operator[](int key) {
    while (static_cast<int>(holders_.size()) <= key)
      holders_.emplace_back(static_cast<int>(holders_.size()));
    return holders_[static_cast<std::size_t>(key)];
  }

 private:
  std::deque<Holder> holders_;
};

std::vector<int> expire_all(LeaseQueue<Holder>& q, int now_ms) {
  std::vector<int> out;
  q.expire(at(now_ms), 1000, [&](Holder& h) { out.push_back(h.key); });
  return out;
}

TEST(LeaseQueue, ExpiresExactlyAtTheDeadlineNotBefore) {
  Holders h;
  LeaseQueue<Holder> q;
  q.add(h[1], at(100));
  EXPECT_TRUE(expire_all(q, 99).empty());
  EXPECT_EQ(expire_all(q, 100), std::vector<int>{1});
  EXPECT_FALSE(h[1].queued());
  EXPECT_EQ(q.size(), 0u);
}

TEST(LeaseQueue, RenewalMovesLeaseBehindOthers) {
  Holders h;
  LeaseQueue<Holder> q;
  q.add(h[1], at(100));
  q.add(h[2], at(110));
  q.renew(h[1], at(120));
  EXPECT_EQ(q.next_deadline(), at(110));
  EXPECT_EQ(expire_all(q, 115), std::vector<int>{2});
  EXPECT_EQ(expire_all(q, 120), std::vector<int>{1});
}

TEST(LeaseQueue, EarlierDeadlineInsertedInOrder) {
  Holders h;
  LeaseQueue<Holder> q;
  q.add(h[1], at(100));
  q.add(h[2], at(50));
  q.add(h[3], at(200));
  q.renew(h[3], at(75));
  EXPECT_EQ(expire_all(q, 1000), (std::vector<int>{2, 3, 1}));
}

TEST(LeaseQueue, ExpiryStopsAtTheCap) {
  Holders h;
  LeaseQueue<Holder> q;
  for (int i = 0; i < 10; ++i)
    q.add(h[i], at(100));
  std::vector<int> out;
  EXPECT_EQ(q.expire(at(100), 3, [&](Holder& e) { out.push_back(e.key); }), 3u);
  EXPECT_EQ(out, (std::vector<int>{0, 1, 2}));  // in the order they were queued
  EXPECT_EQ(q.size(), 7u);
}

TEST(LeaseQueue, RemovingFromTheFrontMiddleAndBackKeepsTheRestInOrder) {
  Holders h;
  LeaseQueue<Holder> q;
  for (int i = 0; i < 5; ++i)
    q.add(h[i], at(100 + i));
  q.remove(h[0]);
  q.remove(h[2]);
  q.remove(h[4]);
  q.remove(h[4]);  // not queued any more: nothing happens
  EXPECT_EQ(q.size(), 2u);
  EXPECT_EQ(q.next_deadline(), at(101));
  EXPECT_EQ(expire_all(q, 1000), (std::vector<int>{1, 3}));
  EXPECT_FALSE(q.next_deadline());
}

TEST(LeaseQueue, AnExpiredHolderCanBeQueuedAgainFromItsCallback) {
  Holders h;
  LeaseQueue<Holder> q;
  q.add(h[1], at(100));
  q.add(h[2], at(150));
  q.expire(at(100), 10, [&](Holder& e) { q.add(e, at(200)); });  // held: asked again later
  EXPECT_EQ(expire_all(q, 1000), (std::vector<int>{2, 1}));
}

TEST(LeaseQueue, AMovedQueueKeepsItsLeases) {
  Holders h;
  LeaseQueue<Holder> q;
  q.add(h[1], at(100));
  q.add(h[2], at(90));
  LeaseQueue<Holder> moved(std::move(q));
  EXPECT_EQ(moved.size(), 2u);
  EXPECT_EQ(expire_all(moved, 1000), (std::vector<int>{2, 1}));
}

}  // namespace
}  // namespace cascade::hub
