#include "cascade/hub/registry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <limits>

#include "cascade/tests/common/builders.hpp"

namespace cascade::hub {
namespace {

using test_support::inst;

class RegistryTest : public ::testing::Test {
 protected:
  Registry reg{/*hub_epoch=*/3, /*change_log_capacity=*/4};
  proto::ServiceKey key{"svc", "default"};
  ServiceEntry& svc = reg.service(key);

  std::uint64_t add(const std::string& id, const std::string& addr) {
    reg.begin_txn();
    reg.upsert(svc, inst(id, addr), "node");
    return svc.version;
  }

  // Whatever a test did, the running counts agree with a recount.
  void TearDown() override {
    if (auto mismatch = reg.recount_mismatch()) ADD_FAILURE() << *mismatch;
  }
};

TEST_F(RegistryTest, VersionsCarryTheHubEpochSoRestartsNeverReuseThem) {
  const auto v = add("a", "h:1");
  EXPECT_EQ(v >> 40, 3u);
}

TEST_F(RegistryTest, UpCountFollowsStatusChangesRemovalsAndRestores) {
  add("a", "h:1");
  add("b", "h:2");
  EXPECT_EQ(svc.up_count(), 2u);
  auto down = inst("a", "h:1");
  down.status = proto::InstanceStatus::kDown;
  reg.upsert(svc, down, "node");
  EXPECT_EQ(svc.up_count(), 1u);
  reg.remove(svc, "b", "node");
  EXPECT_EQ(svc.up_count(), 0u);
  reg.restore_instance(key, inst("a", "h:1"), "node", 7);  // replaces the DOWN one
  EXPECT_EQ(svc.up_count(), 1u);
}

TEST_F(RegistryTest, TotalsAddUpEveryServiceAndFollowARestoreThatReplacesAnInstance) {
  add("a", "h:1");
  ServiceEntry& other = reg.service({"other", "default"});
  reg.upsert(other, inst("x", "h:9"), "node-2");
  reg.set_out_of_service(key, "a", true);
  EXPECT_EQ(reg.totals(), (InstanceTotals{.up = 1, .out_of_service = 1}));
  auto down = inst("x", "h:9");
  down.status = proto::InstanceStatus::kDown;
  reg.restore_instance({"other", "default"}, down, std::string(kStaticOwner), 8);
  EXPECT_EQ(reg.totals(), (InstanceTotals{.out_of_service = 1, .static_instances = 1}));
  EXPECT_EQ(reg.instance_count(), 2u);
}

TEST_F(RegistryTest, OneTransactionIsOneVersion) {
  reg.begin_txn();
  reg.upsert(svc, inst("a", "h:1"), "node");
  const auto v = svc.version;
  reg.upsert(svc, inst("b", "h:2"), "node");
  EXPECT_EQ(svc.version, v);
}

TEST_F(RegistryTest, CurrentVersionGetsNoUpdate) {
  const auto v = add("a", "h:1");
  EXPECT_FALSE(reg.update_for(svc, v).has_value());
}

TEST_F(RegistryTest, DeltaCarriesOnlyWhatChangedSinceTheHeldVersion) {
  add("a", "h:1");
  add("b", "h:2");
  const auto held = add("c", "h:3");
  add("d", "h:4");
  reg.begin_txn();
  reg.remove(svc, "a", "node");
  auto u = reg.update_for(svc, held);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, proto::UpdateKind::kDelta);
  EXPECT_EQ(u->from_version, held);
  EXPECT_EQ(u->version, svc.version);
  ASSERT_EQ(u->upserts.size(), 1u);
  EXPECT_EQ(u->upserts[0].id, "d");
  EXPECT_EQ(u->removed, std::vector<std::string>{"a"});
}

TEST_F(RegistryTest, VersionOlderThanTheLogGetsTheFullList) {
  const auto held = add("a", "h:1");
  for (int i = 0; i < 6; ++i)
    add("x" + std::to_string(i), "h:" + std::to_string(i));
  auto u = reg.update_for(svc, held);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, proto::UpdateKind::kFull);
  EXPECT_EQ(u->upserts.size(), 7u);
}

// The log holds the configured 4 changes or a quarter of the list, whichever
// is more: a tenth of a 100-instance list expiring one by one still goes out
// as a delta to a consumer that held the list before the first.
TEST_F(RegistryTest, ALargeListsLogReachesBackOverAMassChange) {
  reg.begin_txn();
  for (int i = 0; i < 100; ++i)
    reg.upsert(svc, inst("i" + std::to_string(i), "h:" + std::to_string(i)), "node");
  const auto held = svc.version;
  for (int i = 0; i < 10; ++i) {
    reg.begin_txn();
    reg.remove(svc, "i" + std::to_string(i), "node");
  }
  auto u = reg.update_for(svc, held);
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, proto::UpdateKind::kDelta);
  EXPECT_EQ(u->removed.size(), 10u);
  EXPECT_TRUE(u->upserts.empty());
}

TEST_F(RegistryTest, VersionThisHubNeverIssuedGetsTheFullList) {
  add("a", "h:1");
  auto& other = reg.service({"other", "default"});
  reg.begin_txn();
  reg.upsert(other, inst("x", "h:9"), "node");
  add("b", "h:2");
  auto u = reg.update_for(svc, other.version);  // in range, but never a version of this service
  ASSERT_TRUE(u);
  EXPECT_EQ(u->kind, proto::UpdateKind::kFull);
}

TEST_F(RegistryTest, RemoveByAnotherOwnerIsIgnored) {
  add("a", "h:1");
  reg.begin_txn();
  EXPECT_FALSE(reg.remove(svc, "a", "someone-else"));
  EXPECT_EQ(svc.instances.size(), 1u);
}

TEST_F(RegistryTest, IdenticalUpsertDoesNotMoveTheVersion) {
  const auto v = add("a", "h:1");
  EXPECT_EQ(add("a", "h:1"), v);
}

}  // namespace
}  // namespace cascade::hub

namespace cascade::hub {
namespace {

// Rows (the store's keys, hub/store.hpp): given in order as instances are
// made, kept while they live, handed over for deletion when they go, and
// continued after a restore from the highest one restored.
class RegistryRowsTest : public RegistryTest {
 protected:
  std::uint32_t row_of(std::string_view id) { return svc.instances.find(id)->row(); }
};

TEST_F(RegistryRowsTest, NewInstancesTakeTheNextRowAndKeepItWhenTheyChange) {
  add("a", "h:1");
  add("b", "h:2");
  EXPECT_EQ(row_of("a"), 1u);
  EXPECT_EQ(row_of("b"), 2u);
  add("a", "h:9");  // a changed report: the same row, rewritten
  EXPECT_EQ(row_of("a"), 1u);
  reg.begin_txn();
  reg.remove(svc, "a", "node");
  EXPECT_EQ(reg.take_erased_rows(), (std::vector<std::uint32_t>{1}));
  EXPECT_TRUE(reg.take_erased_rows().empty());
  add("a", "h:1");  // back: a new row, never the deleted one
  EXPECT_EQ(row_of("a"), 3u);
  EXPECT_FALSE(reg.take_renumbered());
}

TEST_F(RegistryRowsTest, ARestoreContinuesAfterTheHighestRowAndGivesRowlessRecordsOne) {
  reg.restore_instance(key, inst("a", "h:1"), "node", 41);
  reg.restore_instance(key, inst("b", "h:2"), "node", 7);
  EXPECT_EQ(row_of("a"), 41u);
  EXPECT_EQ(row_of("b"), 7u);
  reg.restore_instance(key, inst("c", "h:3"), "node", 0);  // written by nothing that numbers
  EXPECT_EQ(row_of("c"), 42u);
  const auto dirty = reg.take_dirty_instances();
  ASSERT_EQ(dirty.size(), 1u) << "c is written again, with its row";
  EXPECT_EQ(dirty[0].slot->id(), "c");
  add("d", "h:4");
  EXPECT_EQ(row_of("d"), 43u);
}

TEST_F(RegistryRowsTest, WhenTheCounterRunsOutEveryInstanceIsNumberedAgainFromOne) {
  constexpr auto kLast = InstanceSlot::kMaxRow;
  reg.restore_instance(key, inst("a", "h:1"), "node", kLast - 1);
  reg.restore_instance(key, inst("b", "h:2"), "node", 5);
  add("c", "h:3");
  EXPECT_EQ(row_of("c"), kLast);
  reg.begin_txn();
  reg.remove(svc, "b", "node");
  reg.take_dirty_instances();
  add("d", "h:4");  // no row left: all are renumbered, d among them
  EXPECT_TRUE(reg.take_renumbered());
  EXPECT_TRUE(reg.take_erased_rows().empty()) << "the renumbering's batch deletes every row";
  std::vector<std::uint32_t> rows{row_of("a"), row_of("c"), row_of("d")};
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<std::uint32_t>{1, 2, 3}));
  EXPECT_EQ(reg.take_dirty_instances().size(), 3u) << "every instance is written again";
  add("e", "h:5");
  EXPECT_EQ(row_of("e"), 4u);
}

// Rows had 32 bits, then 31, before a slot's top bits held its flags: a
// store numbered past the bound gets every row anew once the restore is done.
TEST_F(RegistryRowsTest, AStoreNumberedPastTheSlotsBoundIsRenumberedAfterTheRestore) {
  reg.restore_instance(key, inst("a", "h:1"), "node", InstanceSlot::kMaxRow + 7);
  reg.restore_instance(key, inst("b", "h:2"), "node", 5);
  reg.settle_restored_rows();
  EXPECT_TRUE(reg.take_renumbered());
  std::vector<std::uint32_t> rows{row_of("a"), row_of("b")};
  std::sort(rows.begin(), rows.end());
  EXPECT_EQ(rows, (std::vector<std::uint32_t>{1, 2}));
  EXPECT_EQ(reg.take_dirty_instances().size(), 2u) << "every instance is written again";
}

TEST_F(RegistryRowsTest, AStoreWithinTheBoundKeepsItsRows) {
  reg.restore_instance(key, inst("a", "h:1"), "node", InstanceSlot::kMaxRow);
  reg.settle_restored_rows();
  EXPECT_FALSE(reg.take_renumbered());
  EXPECT_EQ(row_of("a"), InstanceSlot::kMaxRow);
}

TEST_F(RegistryRowsTest, RowsOfAFailedBatchAreHandedOverAgain) {
  add("a", "h:1");
  reg.begin_txn();
  reg.remove(svc, "a", "node");
  const auto erased = reg.take_erased_rows();
  reg.requeue_rows(erased, false);
  EXPECT_EQ(reg.take_erased_rows(), erased);
  reg.requeue_rows(erased, true);
  EXPECT_TRUE(reg.take_renumbered());
  EXPECT_TRUE(reg.take_erased_rows().empty()) << "covered by the renumbering's delete of all";
}

// The rows to write (take_dirty_instances): each changed instance once, by
// its slot, however often it changed since the last batch; a removed one
// is not written (its row's delete is), even when it changed first.
class RegistryDirtyTest : public RegistryRowsTest {
 protected:
  std::vector<std::string> dirty_ids() {
    std::vector<std::string> ids;
    for (const auto& [service, slot] : reg.take_dirty_instances()) {
      EXPECT_EQ(service, &svc);
      ids.push_back(slot->id().str());
    }
    std::sort(ids.begin(), ids.end());
    return ids;
  }
};

TEST_F(RegistryDirtyTest, AnInstanceChangedThreeTimesBeforeTheBatchIsWrittenOnce) {
  add("a", "h:1");
  add("a", "h:2");
  add("b", "h:1");
  add("a", "h:3");
  EXPECT_EQ(dirty_ids(), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(dirty_ids().empty()) << "taken: nothing left to write";
  add("a", "h:4");
  EXPECT_EQ(dirty_ids(), std::vector<std::string>{"a"}) << "listed again after the batch";
}

TEST_F(RegistryDirtyTest, AnInstanceRemovedAfterAChangeIsNotWrittenButItsRowIsDeleted) {
  add("a", "h:1");
  add("b", "h:1");
  reg.begin_txn();
  reg.remove(svc, "a", "node");
  EXPECT_EQ(dirty_ids(), std::vector<std::string>{"b"});
  EXPECT_EQ(reg.take_erased_rows(), std::vector<std::uint32_t>{1});
}

TEST_F(RegistryDirtyTest, AnInstanceRemovedAndRegisteredAgainWritesItsNewRow) {
  add("a", "h:1");
  reg.begin_txn();
  reg.remove(svc, "a", "node");
  add("a", "h:2");
  const auto dirty = reg.take_dirty_instances();
  ASSERT_EQ(dirty.size(), 1u);
  EXPECT_EQ(dirty[0].slot, svc.instances.find("a"));
  EXPECT_EQ(dirty[0].slot->row(), 2u);
  EXPECT_EQ(reg.take_erased_rows(), std::vector<std::uint32_t>{1});
}

// The service of a listed instance is not freed before the batch: the list
// points to it.
TEST_F(RegistryDirtyTest, AListedInstanceKeepsItsServiceUntilTheBatchIsTaken) {
  add("a", "h:1");
  reg.take_dirty_services();
  reg.take_served_changes();
  EXPECT_EQ(svc.waiting, 1u) << "the instance's row to write";
  reg.begin_txn();
  reg.remove(svc, "a", "node");
  reg.take_dirty_services();
  reg.take_served_changes();
  EXPECT_EQ(svc.waiting, 1u) << "removed while listed: the list still points to it";
  EXPECT_TRUE(reg.take_dirty_instances().empty());
  EXPECT_EQ(svc.waiting, 0u);
}

TEST_F(RegistryDirtyTest, AFailedBatchListsItsInstancesAgainUnlessRemovedSince) {
  add("a", "h:1");
  add("b", "h:1");
  reg.take_dirty_instances();
  reg.begin_txn();
  reg.remove(svc, "b", "node");
  reg.mark_dirty(key, "a");
  reg.mark_dirty(key, "b");
  reg.mark_dirty(key, "a");
  EXPECT_EQ(dirty_ids(), std::vector<std::string>{"a"});
}

}  // namespace
}  // namespace cascade::hub
