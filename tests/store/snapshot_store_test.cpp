// SqliteSnapshotStore against real files in a temporary directory.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "cascade/agent/sqlite_snapshot_store.hpp"
#include "cascade/common/sqlite_db.hpp"
#include "cascade/tests/store/temp_dir.hpp"

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

ConfigGroupSnapshot make_group(std::string group, std::map<std::string, std::string> values) {
  ConfigGroupSnapshot g{
      std::move(group), (std::uint64_t{3} << 40) | 9, 1'700'000'000'000, false, {}};
  for (auto& [key, value] : values)
    g.entries.emplace(key, proto::ConfigEntry{key, value, {2, "hub-l2", 77}});
  g.gone = g.entries.empty();
  return g;
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

// ---------------------------------------------------------------- routing rules

std::vector<proto::RouteRuleText> two_rules() {
  return {{"=> zone = dc1", 100, true, true},
          {"method = get => zone = dc2", std::numeric_limits<std::int32_t>::min(), false, false}};
}

TEST_F(SqliteSnapshotStoreTest, RoutingRulesRoundTripAsNoneEmptyOrAList) {
  const auto none = make_service("a", 1, {make_instance("a1")});
  auto empty = make_service("b", 2, {make_instance("b1")});
  empty.routes = std::vector<proto::RouteRuleText>{};
  auto two = make_service("c", 3, {make_instance("c1")});
  two.routes = two_rules();

  open()->save({none, empty, two}, {});

  const auto loaded = open()->load_all();
  ASSERT_THAT(loaded, ElementsAre(none, empty, two));
  EXPECT_FALSE(loaded[0].routes.has_value()) << "no hub had said: not the same as no rules";
  ASSERT_TRUE(loaded[1].routes.has_value()) << "the hub said it holds no rules";
  EXPECT_THAT(*loaded[1].routes, IsEmpty());
  EXPECT_EQ(loaded[2].routes, two_rules());
}

TEST_F(SqliteSnapshotStoreTest, SavingAgainReplacesTheRules) {
  auto store = open();
  auto with_rules = make_service("a", 1, {});
  with_rules.routes = two_rules();
  store->save({with_rules}, {});
  const auto without = make_service("a", 2, {});
  store->save({without}, {});
  EXPECT_THAT(store->load_all(), ElementsAre(without));
}

TEST_F(SqliteSnapshotStoreTest, VersionOneFileIsUpgradedInPlaceAndLoadsWithNoRules) {
  std::filesystem::create_directories(dir());
  {
    // The snapshot file as version 1 wrote it: no routes column.
    sqlite::Db raw(dir() / "agent-snapshot.db", {});
    raw.exec(
        "CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;"
        "INSERT INTO meta(key, value) VALUES ('schema_version', 1);"
        "CREATE TABLE services("
        "  name TEXT NOT NULL,"
        "  group_name TEXT NOT NULL,"
        "  version INTEGER NOT NULL,"
        "  fetched_wall_ms INTEGER NOT NULL,"
        "  instances BLOB NOT NULL,"
        "  PRIMARY KEY (name, group_name)"
        ") WITHOUT ROWID;"
        // [["a1", "", 100, "", 0, {}]]
        "INSERT INTO services VALUES ('a', 'default', 7, 1700000000000, x'9196a26131a064a00080');");
  }

  auto store = open();
  const auto loaded = store->load_all();
  ASSERT_EQ(loaded.size(), 1u);
  EXPECT_EQ(loaded[0].service, (proto::ServiceKey{"a", "default"}));
  EXPECT_EQ(loaded[0].version, 7u);
  ASSERT_EQ(loaded[0].instances.size(), 1u);
  EXPECT_EQ(loaded[0].instances[0].id, "a1");
  EXPECT_FALSE(loaded[0].routes.has_value()) << "a version-1 row has no rules";

  // Upgraded: the file says version 3 and takes rules and config groups.
  auto with_rules = loaded[0];
  with_rules.routes = two_rules();
  store->save({with_rules}, {});
  store.reset();
  {
    sqlite::Db raw(dir() / "agent-snapshot.db", {});
    EXPECT_EQ(sqlite::read_meta(raw, "schema_version", 0), 3);
  }
  store = open();
  EXPECT_THAT(store->load_all(), ElementsAre(with_rules));
  EXPECT_THAT(store->load_config_groups(), IsEmpty());
  const auto group = make_group("ops", {{"degrade.orders", "on"}});
  store->save_config_groups({group}, {});
  EXPECT_THAT(store->load_config_groups(), ElementsAre(group));
}

TEST_F(SqliteSnapshotStoreTest, NewerSchemaVersionIsRefusedNamingTheVersionsRead) {
  open().reset();
  {
    sqlite::Db raw(dir() / "agent-snapshot.db", {});
    sqlite::write_meta(raw, "schema_version", 4);
  }
  try {
    open();
    FAIL() << "opened a snapshot of schema version 4";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 4"));
    EXPECT_THAT(e.what(), HasSubstr("versions 1 to 3"));
  }
}

TEST_F(SqliteSnapshotStoreTest, CorruptRoutesBlobIsReportedWithTheService) {
  auto store = open();
  auto with_rules = make_service("a", 1, {make_instance("a1")});
  with_rules.routes = two_rules();
  store->save({with_rules}, {});
  {
    sqlite::Db raw(dir() / "agent-snapshot.db", {});
    // A well-formed list whose one rule has force 5 instead of a bool.
    raw.exec("UPDATE services SET routes = x'9194a1780005c3'");
  }
  try {
    store->load_all();
    FAIL() << "loaded a corrupt routes blob";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("a/default"));
    EXPECT_THAT(e.what(), HasSubstr("routes"));
  }
}

TEST_F(SqliteSnapshotStoreTest, ConfigGroupsRoundTripWithBytesOriginsAndGoneAndSurviveReopen) {
  auto binary = make_group("orders.limits", {{"blob", std::string("\0\xff\x80", 3)}, {"n", "5"}});
  binary.version = std::numeric_limits<std::uint64_t>::max();
  const auto gone = make_group("retired", {});
  {
    auto store = open();
    store->save_config_groups({gone, binary}, {});
  }
  EXPECT_THAT(open()->load_config_groups(), ElementsAre(binary, gone));
}

TEST_F(SqliteSnapshotStoreTest, AConfigGroupSavedAgainIsReplacedAndARemovedOneIsGone) {
  auto store = open();
  store->save_config_groups({make_group("a", {{"k", "1"}}), make_group("b", {{"k", "2"}})}, {});
  const auto changed = make_group("a", {{"other", "3"}});
  store->save_config_groups({changed}, {"b"});
  EXPECT_THAT(store->load_config_groups(), ElementsAre(changed));
  EXPECT_THAT(store->load_all(), IsEmpty()) << "services and groups are apart";
}

TEST_F(SqliteSnapshotStoreTest, CorruptConfigEntriesAreReportedWithTheGroup) {
  auto store = open();
  store->save_config_groups({make_group("ops", {{"k", "v"}})}, {});
  {
    sqlite::Db raw(dir() / "agent-snapshot.db", {});
    raw.exec("UPDATE config_groups SET entries = x'91c3'");  // [true]
  }
  try {
    store->load_config_groups();
    FAIL() << "loaded a corrupt config blob";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("config group ops"));
  }
}

}  // namespace
}  // namespace cascade::agent
