#include "cascade/hub/node_table.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace cascade::hub {
namespace {

struct Member {
  std::string id;
  std::size_t table_slot = 0;
};
struct IdOf {
  std::string_view operator()(const Member& m) const { return m.id; }
};

std::unique_ptr<Member> member(const std::string& id) {
  return std::make_unique<Member>(Member{id});
}

TEST(NodeTable, ANodeStaysWhereItIsWhileOthersComeAndGo) {
  NodeTable<Member, IdOf> table;
  std::vector<Member*> added;
  for (int i = 0; i < 3000; ++i)
    added.push_back(&table.add(member("n" + std::to_string(i))));
  // Erase every other one, the first and the last among them: each erase
  // moves the last pointer into the freed place.
  for (int i = 0; i < 3000; i += 2)
    table.erase(*added[i]);
  EXPECT_EQ(table.size(), 1500u);
  for (int i = 0; i < 3000; ++i) {
    const auto* found = table.find("n" + std::to_string(i));
    if (i % 2 == 0)
      EXPECT_EQ(found, nullptr) << i;
    else
      EXPECT_EQ(found, added[i]) << i;
  }
}

TEST(NodeTable, ForEachVisitsEveryNodeOnceAfterErasures) {
  NodeTable<Member, IdOf> table;
  for (int i = 0; i < 10; ++i)
    table.add(member("n" + std::to_string(i)));
  table.erase(*table.find("n0"));
  table.erase(*table.find("n9"));
  table.erase(*table.find("n4"));
  std::multiset<std::string> seen;
  table.for_each([&](const Member& m) { seen.insert(m.id); });
  EXPECT_EQ(seen, (std::multiset<std::string>{"n1", "n2", "n3", "n5", "n6", "n7", "n8"}));
  EXPECT_TRUE(table.contains("n8"));
  EXPECT_FALSE(table.contains("n9"));
}

TEST(NodeTable, TheOnlyNodeCanBeErasedAndTheTableReused) {
  NodeTable<Member, IdOf> table;
  table.erase(table.add(member("solo")));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find("solo"), nullptr);
  EXPECT_EQ(table.add(member("solo")).id, "solo");
  EXPECT_EQ(table.size(), 1u);
}

}  // namespace
}  // namespace cascade::hub
