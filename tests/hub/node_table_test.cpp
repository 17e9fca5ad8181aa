#include "cascade/hub/node_table.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

namespace cascade::hub {
namespace {

struct Member {
  explicit Member(std::string member_id, std::shared_ptr<int> held = nullptr)
      : id(std::move(member_id)), token(std::move(held)) {}
  std::string id;
  std::shared_ptr<int> token;  // counts the members alive
  std::uint32_t table_slot = 0;
};
struct IdOf {
  std::string_view operator()(const Member& m) const { return m.id; }
};

TEST(NodeTable, ANodeStaysWhereItIsWhileOthersComeAndGo) {
  NodeTable<Member, IdOf> table;
  std::vector<Member*> added;
  for (int i = 0; i < 3000; ++i)
    added.push_back(&table.add("n" + std::to_string(i)));
  // Erase every other one, the first and the last among them: across
  // several chunks, none of the others moves.
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

// A node whose construction throws (memory ran out) leaves the table as it
// was: nothing counted, visited or indexed, and the slot taken by the next.
struct Fragile {
  explicit Fragile(std::string fragile_id) : id(std::move(fragile_id)) {
    if (id == "throws") throw std::bad_alloc();
  }
  std::string id;
  std::uint32_t table_slot = 0;
};
struct FragileIdOf {
  std::string_view operator()(const Fragile& f) const { return f.id; }
};

TEST(NodeTable, ANodeThatFailsToConstructLeavesTheTableAsItWas) {
  NodeTable<Fragile, FragileIdOf> table;
  for (int i = 0; i < 7; ++i)
    table.add("n" + std::to_string(i));
  EXPECT_THROW(table.add("throws"), std::bad_alloc);
  EXPECT_EQ(table.size(), 7u);
  EXPECT_EQ(table.find("throws"), nullptr);
  int visited = 0;
  table.for_each([&](Fragile&) { ++visited; });
  EXPECT_EQ(visited, 7);
  EXPECT_EQ(table.add("n7").table_slot, 7u);
  EXPECT_EQ(table.find("n7")->id, "n7");
}

TEST(NodeTable, ForEachVisitsEveryNodeOnceAfterErasures) {
  NodeTable<Member, IdOf> table;
  for (int i = 0; i < 10; ++i)
    table.add("n" + std::to_string(i));
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
  table.erase(table.add("solo"));
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.find("solo"), nullptr);
  EXPECT_EQ(table.add("solo").id, "solo");
  EXPECT_EQ(table.size(), 1u);
}

TEST(NodeTable, AnErasedSlotIsTakenAgainBeforeANewChunk) {
  NodeTable<Member, IdOf> table;
  std::vector<Member*> added;
  for (std::uint32_t i = 0; i < table.kChunkSlots; ++i)
    added.push_back(&table.add("n" + std::to_string(i)));
  EXPECT_EQ(table.chunks_held(), 1u);
  Member* freed = added[100];
  table.erase(*freed);
  Member& again = table.add(std::string("again"));
  EXPECT_EQ(&again, freed);
  EXPECT_EQ(table.chunks_held(), 1u);
  EXPECT_EQ(table.find("again"), &again);
}

TEST(NodeTable, ANewNodeGoesToTheLowestChunkWithRoomSoAShrinkingFleetEmptiesTheTop) {
  NodeTable<Member, IdOf> table;
  const std::uint32_t n = 2 * table.kChunkSlots;
  for (std::uint32_t i = 0; i < n; ++i)
    table.add("n" + std::to_string(i));
  table.erase(*table.find("n" + std::to_string(n - 1)));  // room in the second chunk
  table.erase(*table.find("n3"));                         // and in the first
  EXPECT_LT(table.add(std::string("late")).table_slot, table.kChunkSlots);
}

TEST(NodeTable, AChunkLeftEmptyIsFreedAndTheTableShrinks) {
  NodeTable<Member, IdOf> table;
  const std::uint32_t per = table.kChunkSlots;
  for (std::uint32_t i = 0; i < 3 * per; ++i)
    table.add("n" + std::to_string(i));
  EXPECT_EQ(table.chunks_held(), 3u);
  for (std::uint32_t i = per; i < 2 * per; ++i)  // the middle chunk
    table.erase(*table.find("n" + std::to_string(i)));
  EXPECT_EQ(table.chunks_held(), 2u);
  EXPECT_EQ(table.size(), 2u * per);
  // The freed chunk is the lowest with room: it comes back for the next node.
  EXPECT_EQ(table.add(std::string("back")).table_slot / per, 1u);
  EXPECT_EQ(table.chunks_held(), 3u);
  std::vector<Member*> all;
  table.for_each([&](Member& m) { all.push_back(&m); });
  for (Member* m : all)
    table.erase(*m);
  EXPECT_EQ(table.chunks_held(), 0u);
  EXPECT_EQ(table.size(), 0u);
  EXPECT_EQ(table.add(std::string("fresh")).table_slot, 0u);
}

TEST(NodeTable, ErasingAndDestroyingTheTableDestroyEveryNode) {
  auto token = std::make_shared<int>(0);
  {
    NodeTable<Member, IdOf> table;
    for (int i = 0; i < 300; ++i)
      table.add("n" + std::to_string(i), token);
    EXPECT_EQ(token.use_count(), 301);
    table.erase(*table.find("n7"));
    EXPECT_EQ(token.use_count(), 300);
  }
  EXPECT_EQ(token.use_count(), 1);
}

}  // namespace
}  // namespace cascade::hub
