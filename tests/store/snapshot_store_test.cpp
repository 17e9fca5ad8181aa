// SqliteSnapshotStore against real files in a temporary directory.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "agent/sqlite_snapshot_store.hpp"
#include "tests/store/temp_dir.hpp"

namespace cascade::agent {
namespace {

using proto::InstanceStatus;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

proto::Instance make_instance(std::string id, InstanceStatus status = InstanceStatus::kUp,
                              std::map<std::string, std::string> metadata = {}) {
  return proto::Instance{std::move(id), "10.0.0.1:80", 100, "z1", status, std::move(metadata)};
}

ServiceSnapshot make_service(std::string name, std::uint64_t version,
                             std::vector<proto::Instance> instances) {
  return ServiceSnapshot{
      {std::move(name), "default"}, version, 1'700'000'000'000, std::move(instances)};
}

class SqliteSnapshotStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteSnapshotStore> open() const { return SqliteSnapshotStore::open(dir()); }
  std::filesystem::path dir() const { return tmp_.path() / "agent-data"; }

  store_test::TempDir tmp_;
};

TEST_F(SqliteSnapshotStoreTest, NewStoreLoadsNothingAndLivesInAgentSnapshotDb) {
  auto store = open();
  EXPECT_THAT(store->load_all(), IsEmpty());
  EXPECT_EQ(store->file(), dir() / "agent-snapshot.db");
}

TEST_F(SqliteSnapshotStoreTest, SaveThenLoadReturnsEveryFieldAsWritten) {
  auto everything = make_service("orders", std::numeric_limits<std::uint64_t>::max(), {});
  for (std::uint8_t s = 0; s <= proto::kMaxInstanceStatus; ++s) {
    everything.instances.push_back(make_instance("i" + std::to_string(s),
                                                 static_cast<InstanceStatus>(s),
                                                 {{"k", std::to_string(s)}, {"", ""}}));
  }
  everything.instances[0].weight = std::numeric_limits<std::uint32_t>::max();
  everything.instances[1].zone = "";
  everything.fetched_wall_ms = -1;  // before 1970: odd, but it must not be mangled
  auto canary = make_service("orders", 3, {make_instance("c")});
  canary.service.group = "canary";
  const auto empty = make_service("users", 0, {});

  auto store = open();
  store->save({everything, empty, canary}, {});
  EXPECT_THAT(store->load_all(), ElementsAre(canary, everything, empty));
}

TEST_F(SqliteSnapshotStoreTest, SaveOverwritesAndDeletesInOneCall) {
  auto store = open();
  store->save({make_service("a", 1, {make_instance("a1")}), make_service("b", 1, {}),
               make_service("c", 1, {})},
              {});

  const auto newer = make_service("a", 2, {make_instance("a2", InstanceStatus::kDown)});
  store->save({newer}, {{"b", "default"}, {"never-saved", "default"}});

  EXPECT_THAT(store->load_all(), ElementsAre(newer, make_service("c", 1, {})));
}

TEST_F(SqliteSnapshotStoreTest, KeyBothSavedAndRemovedEndsUpRemoved) {
  auto store = open();
  store->save({make_service("a", 1, {})}, {{"a", "default"}});
  EXPECT_THAT(store->load_all(), IsEmpty());
}

TEST_F(SqliteSnapshotStoreTest, SnapshotSurvivesReopen) {
  const auto saved = make_service("a", 4, {make_instance("a1", InstanceStatus::kStarting)});
  open()->save({saved}, {});
  EXPECT_THAT(open()->load_all(), ElementsAre(saved));
}

TEST_F(SqliteSnapshotStoreTest, UnwritableDataDirThrowsStoreErrorNamingThePath) {
  const auto bad = tmp_.unwritable_dir();
  try {
    SqliteSnapshotStore::open(bad);
    FAIL() << "opened a snapshot under " << bad;
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr(bad.string()));
  }
}

TEST_F(SqliteSnapshotStoreTest, CorruptInstancesBlobIsReportedWithTheService) {
  auto store = open();
  store->save({make_service("a", 1, {make_instance("a1")})}, {});
  {
    sqlite::Db raw(dir() / "agent-snapshot.db", {});
    // A well-formed list whose one instance has status 9.
    raw.exec("UPDATE services SET instances = x'9196a26131a064a00980'");
  }
  try {
    store->load_all();
    FAIL() << "loaded a corrupt instances blob";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a/default"));
  }
}

}  // namespace
}  // namespace cascade::agent
