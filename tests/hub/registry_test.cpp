#include "cascade/hub/registry.hpp"

#include <gtest/gtest.h>

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
  reg.restore_instance(key, inst("a", "h:1"), "node");  // replaces the DOWN one
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
  reg.restore_instance({"other", "default"}, down, std::string(kStaticOwner));
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
