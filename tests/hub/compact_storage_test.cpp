// The registry's compact containers: CompactText (hub/compact_text.hpp),
// SmallList (hub/small_list.hpp) and InstanceMap (hub/instance_map.hpp).

#include <gtest/gtest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cascade/hub/compact_text.hpp"
#include "cascade/hub/instance_map.hpp"
#include "cascade/hub/small_list.hpp"

namespace cascade::hub {
namespace {

TEST(CompactText, ShortAndLongValuesReadBackWhateverTheirLength) {
  for (std::size_t n : {0u, 1u, 8u, 14u, 15u, 16u, 20u, 36u, 300u}) {
    const std::string value(n, 'x');
    CompactText text(value);
    EXPECT_EQ(text.view(), value) << n;
    EXPECT_EQ(text.size(), n);
    EXPECT_EQ(text.empty(), n == 0);
  }
}

TEST(CompactText, CopiesMovesAndAssignmentsOwnTheirOwnCharacters) {
  const std::string long_value = "10.120.201.17:20480-and-some-more";
  CompactText a(long_value);
  CompactText copy = a;
  CompactText moved = std::move(copy);
  EXPECT_EQ(moved, long_value);
  a = "short";
  EXPECT_EQ(a, "short");
  EXPECT_EQ(moved, long_value);  // the copy kept its own block
  moved = a;
  EXPECT_EQ(moved, "short");
  a = std::string(40, 'y');
  EXPECT_EQ(a.str(), std::string(40, 'y'));
  const CompactText& same = a;
  a = same;  // self-assignment keeps the value
  EXPECT_EQ(a.view(), std::string(40, 'y'));
}

// Every IPv4 "ip:port" fits an AddressText; a longer address still reads back.
TEST(CompactText, AnAddressTextKeepsTwentyThreeCharactersInside) {
  for (std::size_t n : {0u, 21u, 22u, 23u, 24u, 45u}) {
    const std::string value(n, '7');
    AddressText text(value);
    EXPECT_EQ(text.view(), value) << n;
    AddressText copy = text;
    text = "1.2.3.4:5";
    EXPECT_EQ(copy.view(), value) << n;
  }
  EXPECT_EQ(sizeof(AddressText), 24u);
}

TEST(CompactText, ComparesWithEveryStringKind) {
  const CompactText text("node-0001");
  EXPECT_TRUE(text == std::string("node-0001"));
  EXPECT_TRUE(text == std::string_view("node-0001"));
  EXPECT_TRUE(text == "node-0001");
  EXPECT_TRUE(text != "node-0002");
  EXPECT_EQ(sizeof(CompactText), 16u);
}

// A change-log record marks the routing rules with an empty view, whose
// data may be null (UndefinedBehaviorSanitizer's memcpy check).
TEST(CompactText, AnEmptyViewWithoutDataMakesAnEmptyText) {
  const BasicCompactText<40> text{std::string_view{}};
  EXPECT_TRUE(text.empty());
  EXPECT_EQ(text, "");
}

// Like OwnedInstance: two words, the first never zero in an item.
struct Pair {
  std::uint64_t a;
  std::uint64_t b;
  bool operator==(const Pair&) const = default;
};

TEST(SmallList, HoldsNoneOneOrManyItems) {
  for (std::size_t n : {0u, 1u, 2u, 7u}) {
    std::vector<Pair> items;
    for (std::size_t i = 0; i < n; ++i)
      items.push_back({i + 1, i * 2});  // the first item's second word is zero
    SmallList<Pair> list;
    list = items;
    EXPECT_EQ(list.size(), n);
    EXPECT_EQ(list.empty(), n == 0);
    EXPECT_EQ(list.to_vector(), items);
    EXPECT_TRUE(std::equal(list.begin(), list.end(), items.begin(), items.end()));
    SmallList<Pair> copy = list;
    SmallList<Pair> moved = std::move(list);
    EXPECT_EQ(copy.to_vector(), items);
    EXPECT_EQ(moved.to_vector(), items);
    moved = std::vector<Pair>{{9, 9}};  // many -> one frees the block
    EXPECT_EQ(moved.to_vector(), (std::vector<Pair>{{9, 9}}));
  }
  EXPECT_EQ(sizeof(SmallList<Pair>), sizeof(Pair)) << "no size field beside the item";
}

TEST(SmallList, EditsAManyItemListInPlaceAndMovesBetweenInlineAndHeap) {
  SmallList<Pair> list;
  list.edit([](std::vector<Pair>& items) { items.push_back({1, 1}); });  // none -> one
  EXPECT_EQ(list.to_vector(), (std::vector<Pair>{{1, 1}}));
  list.edit([](std::vector<Pair>& items) {  // one -> many
    items.push_back({2, 2});
    items.push_back({3, 3});
    items.push_back({4, 4});
  });
  EXPECT_EQ(list.to_vector(), (std::vector<Pair>{{1, 1}, {2, 2}, {3, 3}, {4, 4}}));
  const Pair* heap_items = list.begin();
  list.edit([](std::vector<Pair>& items) { items.erase(items.begin() + 1); });
  // A lower tier's node of 100,000 instances must not be copied per delta.
  EXPECT_EQ(list.begin(), heap_items) << "the list's own vector, not a copy, was edited";
  EXPECT_EQ(list.to_vector(), (std::vector<Pair>{{1, 1}, {3, 3}, {4, 4}}));
  list.edit([](std::vector<Pair>& items) { items.erase(items.begin(), items.begin() + 2); });
  EXPECT_EQ(list.to_vector(), (std::vector<Pair>{{4, 4}}));  // many -> one
  list.edit([](std::vector<Pair>& items) { items.front().a = 3; });
  EXPECT_EQ(list.to_vector(), (std::vector<Pair>{{3, 4}}));
  list.edit([](std::vector<Pair>& items) { items.clear(); });
  EXPECT_TRUE(list.empty());
}

TEST(SmallList, AnEditThatThrowsLeavesTheListAsTheEditLeftIt) {
  SmallList<Pair> list;
  list = std::vector<Pair>{{1, 1}, {2, 2}, {3, 3}};
  EXPECT_THROW(list.edit([](std::vector<Pair>& items) {
    items.pop_back();
    items.pop_back();
    throw std::runtime_error("edit failed half-way");
  }),
               std::runtime_error);
  EXPECT_EQ(list.size(), 1u);
  EXPECT_EQ(list.to_vector(), (std::vector<Pair>{{1, 1}}));
}

TEST(UuidForm, PacksOnlyACanonicalLowercaseUuidAndSpellsItBackExactly) {
  const std::string uuid = "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6d";
  uuid_form::Packed packed{};
  ASSERT_TRUE(uuid_form::pack(uuid, packed));
  EXPECT_EQ(packed[0], 0x6f);
  EXPECT_EQ(packed[15], 0x6d);
  std::string spelled(uuid_form::kTextSize, '?');
  uuid_form::spell(packed.data(), spelled.data());
  EXPECT_EQ(spelled, uuid);
  for (const char* other : {"6F1C0A52-3D4E-4B7A-9C1D-0E2F3A4B5C6D",  // would spell back lowercase
                            "6f1c0a523d4e-4b7a-9c1d-0e2f3a4b5c6d-",  // dashes out of place
                            "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6",   // short
                            "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6dd",
                            "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6g", "node-1", ""})
    EXPECT_FALSE(uuid_form::pack(other, packed)) << other;
}

TEST(InstanceMap, UuidAndTextIdsAreFoundByTheirTextAndSortedAsTheirTexts) {
  InstanceMap map;
  const std::vector<std::string> ids = {"ffffffff-0000-4000-8000-000000000000",
                                        "00000000-0000-4000-8000-00000000000a",
                                        "00000000-0000-4000-8000-000000000009",
                                        "A0000000-0000-4000-8000-000000000000",
                                        "9-not-a-uuid",
                                        "a0000000-0000-4000-8000-000000000000",
                                        "zeta"};
  for (const auto& id : ids)
    ASSERT_TRUE(map.try_emplace(id).made) << id;
  for (const auto& id : ids) {
    const InstanceSlot* slot = map.find(id);
    ASSERT_NE(slot, nullptr) << id;
    EXPECT_EQ(slot->id(), id);
    EXPECT_FALSE(map.try_emplace(id).made) << id;
  }
  EXPECT_EQ(map.find("FFFFFFFF-0000-4000-8000-000000000000"), nullptr) << "ids are case-sensitive";
  std::vector<std::string> sorted;
  for (const InstanceSlot* slot : map.sorted())
    sorted.push_back(slot->id().str());
  std::vector<std::string> expected = ids;
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(sorted, expected);
  map.erase(map.find(ids[0]));
  EXPECT_EQ(map.find(ids[0]), nullptr);
  EXPECT_NE(map.find(ids[1]), nullptr);
}

TEST(InstanceMap, SlotsHoldTheirIdsAndStayPutWhileOthersComeAndGo) {
  InstanceMap map;
  const std::string uuid = "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6d";
  auto [slot, made] = map.try_emplace(uuid);
  ASSERT_TRUE(made);
  slot->entry().owner = "node-1";
  for (int i = 0; i < 5000; ++i)
    map.try_emplace("other-" + std::to_string(i));
  for (int i = 0; i < 5000; i += 2)
    map.erase(map.find("other-" + std::to_string(i)));
  EXPECT_EQ(map.find(uuid), slot) << "rehashes move index slots, never instance slots";
  EXPECT_EQ(slot->id(), uuid);
  EXPECT_EQ(map.at(uuid).owner, "node-1");
  EXPECT_FALSE(map.try_emplace(uuid).made);
  EXPECT_EQ(map.size(), 2501u);
  EXPECT_FALSE(map.contains("other-0"));
  EXPECT_TRUE(map.contains("other-1"));
  EXPECT_THROW(map.at("other-0"), std::out_of_range);
}

TEST(InstanceMap, SortedListsEveryInstanceById) {
  InstanceMap map;
  for (const char* id : {"c", "a", "d", "b", "aa"})
    map.try_emplace(id);
  std::vector<std::string> ids;
  for (const InstanceSlot* slot : map.sorted())
    ids.emplace_back(slot->id());
  EXPECT_EQ(ids, (std::vector<std::string>{"a", "aa", "b", "c", "d"}));
  std::size_t iterated = 0;
  for (const InstanceSlot& slot : map)
    iterated += map.find(slot.id()) == &slot ? 1 : 0;
  EXPECT_EQ(iterated, 5u);
}

TEST(InstanceMap, MovedMapKeepsItsSlotsAndTheSourceIsEmpty) {
  InstanceMap map;
  InstanceSlot* slot = map.try_emplace("x").slot;
  InstanceMap moved = std::move(map);
  EXPECT_EQ(moved.find("x"), slot);
  EXPECT_TRUE(map.empty());  // NOLINT(bugprone-use-after-move): defined empty
  map = std::move(moved);
  EXPECT_EQ(map.find("x"), slot);
}

}  // namespace
}  // namespace cascade::hub
