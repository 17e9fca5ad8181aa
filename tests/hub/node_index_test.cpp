#include "cascade/hub/node_index.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <string>

namespace cascade::hub {
namespace {

struct Item {
  std::string id;
};
struct IdOf {
  std::string_view operator()(const Item& i) const { return i.id; }
};

TEST(NodeIndex, FindsWhatWasInsertedAndNothingElse) {
  std::deque<Item> items;
  NodeIndex<Item, IdOf> index;
  for (int i = 0; i < 5000; ++i)
    index.insert(&items.emplace_back(Item{"node-" + std::to_string(i)}));
  for (int i = 0; i < 5000; ++i)
    ASSERT_EQ(index.find("node-" + std::to_string(i)), &items[i]);
  EXPECT_EQ(index.find("node-5000"), nullptr);
  EXPECT_EQ(index.size(), 5000u);
}

TEST(NodeIndex, ErasedIdsAreGoneOthersStay) {
  std::deque<Item> items;
  NodeIndex<Item, IdOf> index;
  for (int i = 0; i < 100; ++i)
    index.insert(&items.emplace_back(Item{std::to_string(i)}));
  for (int i = 0; i < 100; i += 2)
    index.erase(std::to_string(i));
  for (int i = 0; i < 100; ++i)
    EXPECT_EQ(index.find(std::to_string(i)) != nullptr, i % 2 == 1) << i;
}

TEST(NodeIndex, ChurnDoesNotGrowTheTable) {
  std::deque<Item> items;
  NodeIndex<Item, IdOf> index;
  for (int round = 0; round < 200; ++round) {
    for (int i = 0; i < 100; ++i)
      index.insert(&items.emplace_back(Item{std::to_string(round) + "/" + std::to_string(i)}));
    for (int i = 0; i < 100; ++i)
      index.erase(std::to_string(round) + "/" + std::to_string(i));
  }
  EXPECT_EQ(index.size(), 0u);
  EXPECT_LE(index.capacity(), 1024u);
}

}  // namespace
}  // namespace cascade::hub
