#include "cascade/hub/id_index.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <set>
#include <string>

namespace cascade::hub {
namespace {

struct Item {
  std::string id;
};
struct IdOf {
  std::string_view operator()(const Item& i) const { return i.id; }
};

TEST(IdIndex, FindsWhatWasInsertedAndNothingElse) {
  std::deque<Item> items;
  IdIndex<Item, IdOf> index;
  for (int i = 0; i < 5000; ++i)
    index.insert(&items.emplace_back(Item{"node-" + std::to_string(i)}));
  for (int i = 0; i < 5000; ++i)
    ASSERT_EQ(index.find("node-" + std::to_string(i)), &items[i]);
  EXPECT_EQ(index.find("node-5000"), nullptr);
  EXPECT_EQ(index.size(), 5000u);
}

// An entry's key may be dear to read (a packed UUID is spelled first): a
// find and the insert that follows it with the same Key read no entry's key
// to hash it, not even across the rehashes the inserts cause (they read every
// entry's key once, to place it again).
struct CountedIdOf {
  static inline int reads = 0;
  std::string_view operator()(const Item& i) const {
    ++reads;
    return i.id;
  }
};

TEST(IdIndex, AFindThenInsertWithOneKeyHashesTheIdOnce) {
  std::deque<Item> items;
  IdIndex<Item, CountedIdOf> index;
  CountedIdOf::reads = 0;
  const IdIndex<Item, CountedIdOf>::Key key{"node-0"};
  ASSERT_EQ(index.find(key), nullptr);
  index.insert(&items.emplace_back(Item{"node-0"}), key);
  EXPECT_EQ(CountedIdOf::reads, 0) << "the key's hash was used, the entry not read";
  EXPECT_EQ(index.find("node-0"), &items[0]);
  for (int i = 1; i < 1000; ++i) {
    const std::string id = "node-" + std::to_string(i);
    const IdIndex<Item, CountedIdOf>::Key k{id};
    ASSERT_EQ(index.find(k), nullptr);
    index.insert(&items.emplace_back(Item{id}), k);
  }
  for (int i = 0; i < 1000; ++i)
    ASSERT_EQ(index.find("node-" + std::to_string(i)), &items[static_cast<std::size_t>(i)]);
}

TEST(IdIndex, ErasedIdsAreGoneOthersStay) {
  std::deque<Item> items;
  IdIndex<Item, IdOf> index;
  for (int i = 0; i < 100; ++i)
    index.insert(&items.emplace_back(Item{std::to_string(i)}));
  for (int i = 0; i < 100; i += 2)
    index.erase(std::to_string(i));
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(index.find(std::to_string(i)) != nullptr, i % 2 == 1) << i;
}

TEST(IdIndex, ChurnDoesNotGrowTheTable) {
  std::deque<Item> items;
  IdIndex<Item, IdOf> index;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 100; ++i)
      index.insert(&items.emplace_back(Item{std::to_string(round) + "/" + std::to_string(i)}));
    for (int i = 0; i < 100; ++i)
      index.erase(std::to_string(round) + "/" + std::to_string(i));
  }
  EXPECT_EQ(index.size(), 0u);
  EXPECT_LE(index.capacity(), 1024u);
}

TEST(IdIndex, EraseHandsBackTheEntryOnce) {
  std::deque<Item> items;
  IdIndex<Item, IdOf> index;
  index.insert(&items.emplace_back(Item{"a"}));
  EXPECT_EQ(index.erase("a"), &items[0]);
  EXPECT_EQ(index.erase("a"), nullptr);
  IdIndex<Item, IdOf> never_allocated;
  EXPECT_EQ(never_allocated.erase("a"), nullptr);
  EXPECT_TRUE(index.empty());
}

TEST(IdIndex, IterationVisitsEveryLiveEntryOnce) {
  std::deque<Item> items;
  IdIndex<Item, IdOf> index;
  for (int i = 0; i < 3000; ++i)
    index.insert(&items.emplace_back(Item{std::to_string(i)}));
  for (int i = 0; i < 3000; i += 3)
    index.erase(std::to_string(i));
  std::multiset<std::string> seen;
  for (const Item& item : index)
    seen.insert(item.id);
  std::multiset<std::string> for_each_seen;
  index.for_each([&](const Item& item) { for_each_seen.insert(item.id); });
  EXPECT_EQ(seen.size(), 2000u);
  EXPECT_EQ(seen, for_each_seen);
  for (int i = 0; i < 3000; ++i)
    EXPECT_EQ(seen.count(std::to_string(i)), i % 3 == 0 ? 0u : 1u) << i;
}

// A million nodes' index is 10–14 bytes each: one word a slot, at most 1.8
// slots an entry (5/9 full after a rehash, 4/5 before the next), whatever
// the count; a power-of-two table was 2^21 words at a million.
TEST(IdIndex, TableIsAWordASlotAndMoreThanHalfFullAtAnyCount) {
  std::deque<Item> items;
  IdIndex<Item, IdOf> index;
  for (int i = 0; i < 100'000; ++i) {
    index.insert(&items.emplace_back(Item{"n" + std::to_string(i)}));
    ASSERT_LE(index.capacity() * 5, std::max<std::size_t>(40, 9 * index.size())) << i;
    ASSERT_LE(index.size() * 5, index.capacity() * 4) << i;
  }
  EXPECT_NE(index.capacity() & (index.capacity() - 1), 0u) << "sized freely, not to a power of two";
  for (int i = 0; i < 100'000; ++i)
    ASSERT_EQ(index.find("n" + std::to_string(i)), &items[static_cast<std::size_t>(i)]) << i;
}

TEST(IdIndex, EmptyIndexAllocatesNothing) {
  IdIndex<Item, IdOf> index;
  EXPECT_EQ(index.capacity(), 0u);
  EXPECT_EQ(index.find("x"), nullptr);
  index.prefetch("x");
  EXPECT_EQ(index.begin(), index.end());
}

}  // namespace
}  // namespace cascade::hub
