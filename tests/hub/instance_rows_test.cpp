// InstanceRows (hub/instance_rows.hpp): a batch's instances packed into one
// buffer, read back exactly as they were added.

#include "cascade/hub/instance_rows.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cascade/common/msgpack_blob.hpp"
#include "cascade/hub/store.hpp"
#include "cascade/tests/common/allocation_counter.hpp"

namespace cascade::hub {
namespace {

InstanceRecord record(std::uint32_t row, std::string id, std::map<std::string, std::string> meta) {
  proto::Instance in{id,
                     "10.1.2.3:" + std::to_string(row),
                     row * 3,
                     "zone-" + std::to_string(row),
                     proto::InstanceStatus::kStarting,
                     std::move(meta)};
  return {{"orders-service-with-a-long-name", "canary"}, std::move(in), "node-" + id, row};
}

TEST(InstanceRows, GiveBackEveryRecordAsAddedWithItsMetadataPackedAsTheStoreWritesIt) {
  const std::vector<InstanceRecord> records = {
      record(7, "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6d", {{"version", "1.2.3"}, {"env", "prod"}}),
      record(3, "", {}),
      record(4'294'967'295u, "b", {{"", ""}, {"bytes", std::string("\0\xff", 2)}})};
  InstanceRows rows;
  for (const auto& r : records)
    rows.push_back(r);

  ASSERT_EQ(rows.size(), records.size());
  EXPECT_EQ(rows.records(), records);
  for (std::size_t i = 0; i < records.size(); ++i) {
    EXPECT_EQ(rows[i].metadata_blob, pack_blob(records[i].instance.metadata));
    EXPECT_EQ(rows[i].row, records[i].row);
    EXPECT_EQ(rows[i].id, records[i].instance.id);
    EXPECT_EQ(rows[i].service(), records[i].service);
  }
  const InstanceRows copy = rows;
  EXPECT_EQ(copy.records(), records);
}

TEST(InstanceRows, AreOrderedByRowNumberForTheStoreWithoutMovingThem) {
  InstanceRows rows;
  for (const std::uint32_t row : {9u, 2u, 7u, 0u})
    rows.push_back(record(row, "i" + std::to_string(row), {}));
  EXPECT_EQ(rows.order_by_row(), (std::vector<std::uint32_t>{3, 1, 2, 0}));
  EXPECT_EQ(rows[0].row, 9u) << "the rows stay where they were added";
  EXPECT_TRUE(InstanceRows{}.order_by_row().empty());
}

TEST(InstanceRows, AnInstanceWithoutMetadataIsWrittenWithAnEmptyMap) {
  InstanceRows rows;
  rows.add({.row = 1, .name = "svc", .group = "default", .id = "i", .owner = "n"});
  EXPECT_EQ(rows[0].metadata_blob, pack_blob(std::map<std::string, std::string>{}));
  EXPECT_TRUE(rows[0].record().instance.metadata.empty());
}

// The point of the packing: a registration storm's batch is built on the
// serving thread, and a heap block per text of every instance was a fifth of
// its time. Adding allocates only when the buffer or the row list grows.
TEST(InstanceRows, AddingAThousandInstancesAllocatesAFewBuffersNotABlockPerText) {
  const std::map<std::string, std::string> meta = {{"version", "1.2.3-with-a-long-tag"},
                                                   {"owner-team", "payments-and-billing"}};
  const std::string id = "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6d";
  InstanceRows rows;
  const auto allocations = test_support::allocations_during([&] {
    for (std::uint32_t row = 1; row <= 1000; ++row)
      rows.add({row, "orders-service-with-a-long-name", "default", id, "node-0001", "10.1.2.3:8080",
                "zone-a", &meta, 100, proto::InstanceStatus::kUp});
  });
  EXPECT_LT(allocations, 64u) << "as InstanceRecords: ~10 blocks an instance, 10,000 here";
  EXPECT_EQ(rows.size(), 1000u);
  EXPECT_EQ(rows[999].record().instance.metadata, meta);
}

// Reserved for the batch it will be, the buffer is filled without growing.
TEST(InstanceRows, ReservedForTheirSizeAllocateNothingWhileAdded) {
  const std::string id = "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6d";
  InstanceRows rows;
  rows.reserve(1000, 1000 * 200);
  const auto allocations = test_support::allocations_during([&] {
    for (std::uint32_t row = 1; row <= 1000; ++row)
      rows.add({.row = row, .name = "orders", .group = "default", .id = id, .owner = "node-0001"});
  });
  EXPECT_EQ(allocations, 0u);
  EXPECT_LE(rows.text_bytes(), 1000u * 200);
}

}  // namespace
}  // namespace cascade::hub
