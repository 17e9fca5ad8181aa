// SqliteHubStore against real files in a temporary directory.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <functional>
#include <limits>
#include <tuple>

#include "cascade/hub/audit_reader.hpp"
#include "cascade/hub/registry.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::hub {
namespace {

using proto::InstanceStatus;
using ::testing::HasSubstr;

constexpr auto kNormal = sqlite::Synchronous::kNormal;
constexpr std::int64_t kCurrentSchema = 6;

InstanceRecord make_instance(std::uint32_t row, std::string service, std::string id,
                             std::string owner, InstanceStatus status = InstanceStatus::kUp,
                             std::map<std::string, std::string> metadata = {}) {
  InstanceRecord r;
  r.row = row;
  r.service = proto::ServiceKey{std::move(service), "default"};
  r.instance.id = std::move(id);
  r.instance.address = "10.0.0.1:" + std::to_string(8000 + r.instance.id.size());
  r.instance.weight = 100;
  r.instance.zone = "z1";
  r.instance.status = status;
  r.instance.metadata = std::move(metadata);
  r.owner = std::move(owner);
  return r;
}

// load() returns instances in row order, the rest in key order; tests build
// their expectations in any order.
std::vector<InstanceRecord> sorted(const InstanceRows& rows) {
  auto records = rows.records();
  std::sort(records.begin(), records.end(), [](const auto& a, const auto& b) {
    return std::tie(a.service, a.instance.id) < std::tie(b.service, b.instance.id);
  });
  return records;
}

HubSnapshot sorted(HubSnapshot s) {
  std::sort(s.nodes.begin(), s.nodes.end(),
            [](const auto& a, const auto& b) { return a.node_id < b.node_id; });
  std::sort(s.services.begin(), s.services.end(),
            [](const auto& a, const auto& b) { return a.service < b.service; });
  std::sort(s.overrides.begin(), s.overrides.end(), [](const auto& a, const auto& b) {
    return std::tie(a.service, a.id) < std::tie(b.service, b.id);
  });
  std::sort(s.settings.begin(), s.settings.end(),
            [](const auto& a, const auto& b) { return a.key < b.key; });
  return s;
}

void expect_snapshot(const HubSnapshot& loaded, const HubSnapshot& expected) {
  const HubSnapshot actual = sorted(loaded);
  const HubSnapshot want = sorted(expected);
  EXPECT_EQ(actual.nodes, want.nodes);
  EXPECT_EQ(sorted(actual.instances), sorted(want.instances));
  EXPECT_EQ(actual.services, want.services);
  EXPECT_EQ(actual.overrides, want.overrides);
  EXPECT_EQ(actual.settings, want.settings);
  EXPECT_EQ(actual.routes, want.routes);
  EXPECT_EQ(actual.config_entries, want.config_entries);
  EXPECT_EQ(actual.config_history, want.config_history);
}

// A state with a bit of everything, reused as "before" in several tests.
PersistBatch base_batch() {
  PersistBatch b;
  b.node_upserts = {{"node-a", 1, 11}, {"node-b", 2, 22}};
  b.instance_upserts = {make_instance(1, "orders", "a1", "node-a"),
                        make_instance(2, "orders", "b1", "node-b", InstanceStatus::kDown),
                        make_instance(3, "users", "a2", "node-a")};
  b.service_versions = {{{"orders", "default"}, 5}, {{"users", "default"}, 1}};
  return b;
}

HubSnapshot as_snapshot(const PersistBatch& b) {
  return HubSnapshot{b.node_upserts,     b.instance_upserts, b.service_versions,
                     b.override_upserts, b.settings,         b.route_sets};
}

// The snapshot's instances edited as records (the rows are packed).
void edit_instances(HubSnapshot& s, const std::function<void(std::vector<InstanceRecord>&)>& edit) {
  auto records = s.instances.records();
  edit(records);
  s.instances = InstanceRows(records);
}

class SqliteHubStoreTest : public ::testing::Test {
 protected:
  std::unique_ptr<SqliteHubStore> open() const { return SqliteHubStore::open(dir(), kNormal); }
  std::filesystem::path dir() const { return tmp_.path() / "hub-data"; }

  store_test::TempDir tmp_;
};

TEST_F(SqliteHubStoreTest, FirstEpochIsOneAndEpochsKeepCountingAcrossReopen) {
  {
    auto store = open();
    EXPECT_EQ(store->next_epoch(), 1u);
    EXPECT_EQ(store->next_epoch(), 2u);
  }
  auto reopened = SqliteHubStore::open(dir(), sqlite::Synchronous::kFull);
  EXPECT_EQ(reopened->next_epoch(), 3u);
}

TEST_F(SqliteHubStoreTest, MissingDataDirIsCreatedAndHoldsHubDb) {
  const auto nested = tmp_.path() / "a" / "b";
  auto store = SqliteHubStore::open(nested, kNormal);
  EXPECT_EQ(store->file(), nested / "hub.db");
  EXPECT_TRUE(std::filesystem::exists(nested / "hub.db"));
}

TEST_F(SqliteHubStoreTest, ThePageCacheIsWhatTheHubWasToldNotSQLitesOwnDefault) {
  EXPECT_EQ(open()->cache_kib(), SqliteHubStore::kDefaultCacheMib * 1024);
  EXPECT_EQ(SqliteHubStore::open(dir(), kNormal, 3)->cache_kib(), 3u * 1024);
}

TEST_F(SqliteHubStoreTest, NewStoreLoadsAnEmptySnapshot) {
  const HubSnapshot s = open()->load();
  EXPECT_TRUE(s.nodes.empty());
  EXPECT_TRUE(s.instances.empty());
  EXPECT_TRUE(s.services.empty());
}

TEST_F(SqliteHubStoreTest, ApplyThenLoadReturnsEverythingAsWritten) {
  PersistBatch b;
  constexpr auto kU64Max = std::numeric_limits<std::uint64_t>::max();
  b.node_upserts = {{"node-a", std::uint64_t{1} << 63, kU64Max}, {"node-b", 0, 0}};
  for (std::uint8_t s = 0; s <= proto::kMaxInstanceStatus; ++s) {
    b.instance_upserts.push_back(make_instance(10 + s, "svc", "i" + std::to_string(s), "node-a",
                                               static_cast<InstanceStatus>(s),
                                               {{"k" + std::to_string(s), "v"}}));
  }
  auto rich = make_instance(std::numeric_limits<std::uint32_t>::max(), "svc", "rich", "node-b",
                            InstanceStatus::kStarting,
                            {{"", ""}, {"version", "1.2.3"}, {"bytes", std::string("\0\xff", 2)}});
  rich.service.group = "canary";
  rich.instance.weight = std::numeric_limits<std::uint32_t>::max();
  rich.instance.zone = "";
  b.instance_upserts.push_back(rich);
  auto light = make_instance(1, "svc", "light", "node-b");
  light.instance.weight = 0;
  b.instance_upserts.push_back(light);
  b.service_versions = {{{"svc", "default"}, kU64Max}, {{"svc", "canary"}, 0}};

  auto store = open();
  store->apply(b);
  expect_snapshot(store->load(), as_snapshot(b));
}

TEST_F(SqliteHubStoreTest, DeletesRemoveOnlyTheNamedNodesAndInstances) {
  auto store = open();
  store->apply(base_batch());

  PersistBatch del;
  del.node_deletes = {"node-b", "never-existed"};
  del.instance_deletes = {2, 99};  // b1's row and one that never was
  store->apply(del);

  HubSnapshot expected = as_snapshot(base_batch());
  expected.nodes.erase(expected.nodes.begin() + 1);
  edit_instances(expected, [](auto& in) { in.erase(in.begin() + 1); });
  expect_snapshot(store->load(), expected);
}

TEST_F(SqliteHubStoreTest, UpsertOverwritesEveryFieldOfAnExistingRow) {
  auto store = open();
  store->apply(base_batch());

  PersistBatch change;
  change.node_upserts = {{"node-a", 9, 99}};
  auto moved =
      make_instance(1, "orders", "a1", "node-b", InstanceStatus::kOutOfService, {{"drain", "yes"}});
  moved.instance.address = "10.9.9.9:1";
  moved.instance.weight = 7;
  moved.instance.zone = "z2";
  change.instance_upserts = {moved};
  change.service_versions = {{{"orders", "default"}, 6}};
  store->apply(change);

  HubSnapshot expected = as_snapshot(base_batch());
  expected.nodes[0] = change.node_upserts[0];
  edit_instances(expected, [&](auto& in) { in[0] = moved; });
  expected.services[0].version = 6;
  expect_snapshot(store->load(), expected);
}

TEST_F(SqliteHubStoreTest, AFreedServicesRowIsDeletedAndNotLoadedAgain) {
  auto store = open();
  store->apply(base_batch());
  PersistBatch freed;
  freed.node_deletes = {"node-a"};
  freed.instance_deletes = {3};
  freed.service_deletes = {{"users", "default"}};
  store->apply(freed);

  HubSnapshot expected = as_snapshot(base_batch());
  expected.nodes.erase(expected.nodes.begin());
  edit_instances(expected, [](auto& in) { in.pop_back(); });
  expected.services.pop_back();
  expect_snapshot(store->load(), expected);
}

TEST_F(SqliteHubStoreTest, BatchFailingMidwayLeavesThePreviousStateIntact) {
  auto store = open();
  store->apply(base_batch());

  // Nodes, deletes and a good instance are written before the bad instance
  // trips the schema's status CHECK; none of it may stay.
  PersistBatch doomed;
  doomed.node_upserts = {{"node-c", 3, 33}};
  doomed.node_deletes = {"node-a"};
  doomed.instance_deletes = {3};
  doomed.instance_upserts = {make_instance(4, "orders", "c1", "node-c"),
                             make_instance(5, "orders", "c2", "node-c", InstanceStatus{9})};
  doomed.service_versions = {{{"orders", "default"}, 6}};
  EXPECT_THROW(store->apply(doomed), StoreError);

  expect_snapshot(store->load(), as_snapshot(base_batch()));

  // And the store keeps working after the failure.
  PersistBatch next;
  next.node_upserts = {{"node-c", 3, 33}};
  store->apply(next);
  EXPECT_EQ(store->load().nodes.size(), 3u);
}

TEST_F(SqliteHubStoreTest, EmptyBatchChangesNothing) {
  auto store = open();
  store->apply(base_batch());
  store->apply(PersistBatch{});
  expect_snapshot(store->load(), as_snapshot(base_batch()));
}

TEST_F(SqliteHubStoreTest, CommittedStateSurvivesDestroyingTheStore) {
  open()->apply(base_batch());  // no close call exists: the destructor is all there is
  expect_snapshot(open()->load(), as_snapshot(base_batch()));
}

TEST_F(SqliteHubStoreTest, CommittedStateSurvivesAProcessExitingWithoutCleanup) {
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // _exit skips every destructor: SQLite never closes, the WAL is never
    // checkpointed, as after a crash.
    try {
      auto store = open();
      store->next_epoch();
      store->apply(base_batch());
    } catch (...) {
      _exit(2);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);

  auto store = open();
  expect_snapshot(store->load(), as_snapshot(base_batch()));
  EXPECT_EQ(store->next_epoch(), 2u);
}

TEST_F(SqliteHubStoreTest, UnwritableDataDirThrowsStoreErrorNamingThePath) {
  const auto bad = tmp_.unwritable_dir();
  try {
    SqliteHubStore::open(bad, kNormal);
    FAIL() << "opened a store under " << bad;
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr(bad.string()));
  }
}

TEST_F(SqliteHubStoreTest, FileOfAnotherSchemaVersionIsRefused) {
  open().reset();
  {
    sqlite::Db raw(dir() / "hub.db", {});
    sqlite::write_meta(raw, "schema_version", 7);  // a newer build's file
  }
  try {
    open();
    FAIL() << "opened a schema version 7 file";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("schema version 7"));
    EXPECT_THAT(e.what(), HasSubstr((dir() / "hub.db").string()));
  }
}

TEST_F(SqliteHubStoreTest, CorruptMetadataIsReportedWithTheInstanceKey) {
  auto store = open();
  store->apply(base_batch());
  {
    sqlite::Db raw(dir() / "hub.db", {});
    raw.exec("UPDATE instances SET metadata = x'c1' WHERE id = 'b1'");  // 0xc1: never used
  }
  try {
    store->load();
    FAIL() << "loaded a corrupt metadata blob";
  } catch (const StoreError& e) {
    EXPECT_THAT(e.what(), HasSubstr("orders/default/b1"));
  }
}

// ------------------------------------------------ operator state (schema 2)

AuditRecord audit(std::string actor, std::string op, std::string instance, bool ok) {
  AuditRecord r;
  r.actor = std::move(actor);
  r.op = std::move(op);
  if (!instance.empty()) r.service = proto::ServiceKey{"orders", "default"};
  r.instance_id = std::move(instance);
  r.detail = ok ? "done" : "refused";
  r.ok = ok;
  return r;
}

TEST_F(SqliteHubStoreTest, OverridesAndSettingsRoundTripAndAuditIsStampedWithTheBatchTime) {
  PersistBatch b;
  b.override_upserts = {{{"orders", "default"}, "a1", InstanceStatus::kOutOfService},
                        {{"orders", "blue"}, "not-registered", InstanceStatus::kOutOfService}};
  b.settings = {{std::string(kSettingEvictionProtection), 0},
                {std::string(kSettingNotifySharePercent), 10}};
  b.audit = {audit("alice@ops", "mark_out_of_service", "a1", true),
             audit("bob@ops", "eviction_protection", "", false)};
  b.wall_ms = 1'700'000'123'456;
  ASSERT_FALSE(b.empty());

  auto store = open();
  store->apply(b);
  expect_snapshot(store->load(), as_snapshot(b));
  auto expected_audit = b.audit;
  for (auto& r : expected_audit)
    r.at_ms = b.wall_ms;
  EXPECT_EQ(store->audit_log(10), expected_audit);
}

TEST_F(SqliteHubStoreTest, OverrideDeleteRemovesItAndASettingIsOverwritten) {
  auto store = open();
  PersistBatch first;
  first.override_upserts = {{{"orders", "default"}, "a1", InstanceStatus::kOutOfService}};
  first.settings = {{std::string(kSettingNotifySwitch), 1}};
  store->apply(first);

  PersistBatch second;
  second.override_deletes = {{{"orders", "default"}, "a1"}};
  second.settings = {{std::string(kSettingNotifySwitch), 0}};
  store->apply(second);

  const HubSnapshot s = store->load();
  EXPECT_TRUE(s.overrides.empty());
  EXPECT_EQ(s.settings, (std::vector<SettingRecord>{{std::string(kSettingNotifySwitch), 0}}));
}

TEST_F(SqliteHubStoreTest, AuditLogKeepsEveryBatchInOrderAndReturnsTheLastOnes) {
  auto store = open();
  for (int i = 0; i < 4; ++i) {
    PersistBatch b;
    b.audit = {audit("op" + std::to_string(i), "readmit", "a" + std::to_string(i), i % 2 == 0)};
    b.wall_ms = 1000 + i;
    store->apply(b);
  }
  const auto last = store->audit_log(2);
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last[0].actor, "op2");
  EXPECT_EQ(last[0].at_ms, 1002);
  EXPECT_TRUE(last[0].ok);
  EXPECT_EQ(last[1].actor, "op3");
  EXPECT_FALSE(last[1].ok);
  EXPECT_EQ(store->audit_log(100).size(), 4u);
}

// The HTTP admin API pages through the log newest first, by row id, on a
// read-only connection of its own while the store keeps writing.
TEST_F(SqliteHubStoreTest, AuditPagesGoNewestFirstByIdAndAReaderSeesEachCommit) {
  auto store = open();
  for (int i = 0; i < 5; ++i) {
    PersistBatch b;
    b.audit = {audit("op" + std::to_string(i), "readmit", "a" + std::to_string(i), true)};
    b.wall_ms = 1000 + i;
    store->apply(b);
  }
  AuditReader reader(SqliteHubStore::file_in(dir()));
  const auto first = reader.page(std::nullopt, 2);
  ASSERT_EQ(first.size(), 2u);
  EXPECT_EQ(first[0].record.actor, "op4");
  EXPECT_EQ(first[1].record.actor, "op3");
  EXPECT_GT(first[0].id, first[1].id);
  EXPECT_EQ(first[0].record.at_ms, 1004);
  const auto second = reader.page(first.back().id, 10);
  ASSERT_EQ(second.size(), 3u);
  EXPECT_EQ(second.front().record.actor, "op2");
  EXPECT_EQ(second.back().record.actor, "op0");
  EXPECT_TRUE(reader.page(second.back().id, 10).empty());
  EXPECT_EQ(store->audit_page(std::nullopt, 5), reader.page(std::nullopt, 5));

  PersistBatch later;
  later.audit = {audit("op5", "readmit", "a5", false)};
  store->apply(later);
  EXPECT_EQ(reader.page(std::nullopt, 1).at(0).record.actor, "op5");
}

TEST_F(SqliteHubStoreTest, AReaderNeverCreatesTheFileItReads) {
  EXPECT_THROW(AuditReader reader(SqliteHubStore::file_in(dir())), StoreError);
  EXPECT_FALSE(std::filesystem::exists(SqliteHubStore::file_in(dir())));
}

TEST_F(SqliteHubStoreTest, StaticInstanceKeepsItsReservedOwnerAcrossReopen) {
  PersistBatch b;
  b.instance_upserts = {make_instance(1, "orders", "db-1", std::string(kStaticOwner))};
  open()->apply(b);
  const HubSnapshot s = open()->load();
  ASSERT_EQ(s.instances.size(), 1u);
  EXPECT_EQ(s.instances[0].owner, kStaticOwner);
}

TEST_F(SqliteHubStoreTest, ARenumberingBatchReplacesEveryInstanceRow) {
  auto store = open();
  store->apply(base_batch());
  PersistBatch renumbered;
  renumbered.instances_renumbered = true;
  renumbered.instance_upserts = {make_instance(1, "users", "a2", "node-a"),
                                 make_instance(2, "orders", "a1", "node-a")};
  store->apply(renumbered);
  PersistBatch expected = base_batch();
  expected.instance_upserts = renumbered.instance_upserts;  // b1 went meanwhile
  expect_snapshot(store->load(), as_snapshot(expected));
}

// A file of the build before rows: its instances table keyed by (name,
// group_name, id), without a row column. Its rows are numbered in key order
// and written by row from then on.
TEST_F(SqliteHubStoreTest, VersionFiveFileGetsItsInstancesNumberedInKeyOrder) {
  open().reset();
  {
    sqlite::Db raw(dir() / "hub.db", {});
    raw.exec(
        "DROP TABLE instances;"
        "CREATE TABLE instances(name TEXT NOT NULL, group_name TEXT NOT NULL, id TEXT NOT NULL,"
        "  owner TEXT NOT NULL, address TEXT NOT NULL,"
        "  weight INTEGER NOT NULL CHECK (weight BETWEEN 0 AND 4294967295),"
        "  zone TEXT NOT NULL, status INTEGER NOT NULL CHECK (status BETWEEN 0 AND 3),"
        "  metadata BLOB NOT NULL, PRIMARY KEY (name, group_name, id)) WITHOUT ROWID;"
        "INSERT INTO instances VALUES ('users', 'default', 'a2', 'node-a', '10.0.0.1:8002',"
        "  100, 'z1', 0, x'80');"
        "INSERT INTO instances VALUES ('orders', 'default', 'b1', 'node-b', '10.0.0.1:8002',"
        "  100, 'z1', 1, x'80');"
        "INSERT INTO instances VALUES ('orders', 'default', 'a1', 'node-a', '10.0.0.1:8002',"
        "  100, 'z1', 0, x'80');");
    sqlite::write_meta(raw, "schema_version", 5);
  }
  auto store = open();
  PersistBatch expected;
  expected.instance_upserts = {make_instance(1, "orders", "a1", "node-a"),
                               make_instance(2, "orders", "b1", "node-b", InstanceStatus::kDown),
                               make_instance(3, "users", "a2", "node-a")};
  expect_snapshot(store->load(), as_snapshot(expected));

  PersistBatch next;
  next.instance_deletes = {2};
  next.instance_upserts = {make_instance(4, "orders", "c1", "node-c")};
  store->apply(next);
  HubSnapshot after = as_snapshot(expected);
  edit_instances(after, [&](auto& in) { in[1] = next.instance_upserts[0].record(); });
  expect_snapshot(store->load(), after);
  store.reset();
  sqlite::Db raw(dir() / "hub.db", {});
  EXPECT_EQ(sqlite::read_meta(raw, "schema_version", 0), kCurrentSchema);
}

// A file written by the previous build: schema version 1, made here with that
// build's SQL, holding one agent and its instance.
TEST_F(SqliteHubStoreTest, VersionOneFileOpensWithItsRowsAndIsUpgraded) {
  std::filesystem::create_directories(dir());
  {
    sqlite::Db raw(dir() / "hub.db", {});
    raw.exec(
        "CREATE TABLE meta(key TEXT PRIMARY KEY NOT NULL, value INTEGER NOT NULL) WITHOUT ROWID;"
        "INSERT INTO meta VALUES ('schema_version', 1), ('epoch', 4);"
        "CREATE TABLE nodes(node_id TEXT PRIMARY KEY NOT NULL, epoch INTEGER NOT NULL,"
        "  digest INTEGER NOT NULL) WITHOUT ROWID;"
        "CREATE TABLE instances(name TEXT NOT NULL, group_name TEXT NOT NULL, id TEXT NOT NULL,"
        "  owner TEXT NOT NULL, address TEXT NOT NULL,"
        "  weight INTEGER NOT NULL CHECK (weight BETWEEN 0 AND 4294967295),"
        "  zone TEXT NOT NULL, status INTEGER NOT NULL CHECK (status BETWEEN 0 AND 3),"
        "  metadata BLOB NOT NULL, PRIMARY KEY (name, group_name, id)) WITHOUT ROWID;"
        "CREATE TABLE services(name TEXT NOT NULL, group_name TEXT NOT NULL,"
        "  version INTEGER NOT NULL, PRIMARY KEY (name, group_name)) WITHOUT ROWID;"
        "INSERT INTO nodes VALUES ('node-a', 1, 11);"
        "INSERT INTO instances VALUES ('orders', 'default', 'a1', 'node-a', '10.0.0.1:8002',"
        "  100, 'z1', 0, x'80');"
        "INSERT INTO services VALUES ('orders', 'default', 5);");
  }
  auto store = open();
  HubSnapshot expected;
  expected.nodes = {{"node-a", 1, 11}};
  expected.instances = {make_instance(1, "orders", "a1", "node-a")};
  expected.services = {{{"orders", "default"}, 5}};
  expect_snapshot(store->load(), expected);
  EXPECT_EQ(store->next_epoch(), 5u);

  // The new tables are there and usable.
  PersistBatch b;
  b.override_upserts = {{{"orders", "default"}, "a1", InstanceStatus::kOutOfService}};
  b.audit = {audit("alice@ops", "mark_out_of_service", "a1", true)};
  store->apply(b);
  EXPECT_EQ(store->load().overrides, b.override_upserts);
  EXPECT_EQ(store->audit_log(1).size(), 1u);
  store.reset();
  sqlite::Db raw(dir() / "hub.db", {});
  EXPECT_EQ(sqlite::read_meta(raw, "schema_version", 0), kCurrentSchema);
}

// ------------------------------------------------ routing rules (schema 3)

std::vector<proto::RouteRuleText> some_rules() {
  return {{"=> zone = dc1", 10, false, true},
          {"zone = dc3 =>", std::numeric_limits<std::int32_t>::min(), true, false},
          {"host = 10.* => tier = 0", std::numeric_limits<std::int32_t>::max(), false, true}};
}

TEST_F(SqliteHubStoreTest, RouteSetsRoundTripInTheirOrderPerService) {
  PersistBatch b;
  b.route_sets = {{{"orders", "blue"}, some_rules()},
                  {{"users", "default"}, {{"=> zone = dc2", 0, false, true}}}};
  auto store = open();
  store->apply(b);
  expect_snapshot(store->load(), as_snapshot(b));
  store.reset();
  EXPECT_EQ(open()->load().routes, b.route_sets) << "across a reopen";
}

TEST_F(SqliteHubStoreTest, ARouteSetReplacesTheServicesRulesAndAnEmptyOneRemovesThem) {
  auto store = open();
  PersistBatch first;
  first.route_sets = {{{"orders", "default"}, some_rules()},
                      {{"users", "default"}, {{"=> zone = dc2", 0, false, true}}}};
  store->apply(first);

  PersistBatch second;
  second.route_sets = {{{"orders", "default"}, {{"=> zone = dc9", 1, false, true}}},
                       {{"users", "default"}, {}}};
  store->apply(second);

  EXPECT_EQ(
      store->load().routes,
      (std::vector<RouteSetRecord>{{{"orders", "default"}, {{"=> zone = dc9", 1, false, true}}}}));
}

// ------------------------------------------------ keys (schema 4)

// Makes a file of this build look like version 4: no config tables.
void drop_version_5_tables(sqlite::Db& raw) {
  raw.exec(
      "DROP INDEX config_history_by_group;"
      "DROP TABLE config_history;"
      "DROP TABLE config_entries;");
}

// Makes a file of this build look like version 3: no node bindings, no key
// or peer in the audit log.
void drop_version_4_columns(sqlite::Db& raw) {
  drop_version_5_tables(raw);
  raw.exec(
      "ALTER TABLE nodes DROP COLUMN owner_key;"
      "ALTER TABLE admin_audit DROP COLUMN key_name;"
      "ALTER TABLE admin_audit DROP COLUMN peer;");
}

TEST_F(SqliteHubStoreTest, NodeBindingsAndAuditKeysAndPeersRoundTrip) {
  PersistBatch b;
  b.node_upserts = {{"n1", 3, 33, "alice"}, {"n2", 1, 11, ""}};
  auto record = audit("alice@ops", "readmit", "a1", true);
  record.key = "ops-key";
  record.peer = "192.0.2.7";
  b.audit = {record};
  b.wall_ms = 1'234;
  auto store = open();
  store->apply(b);
  store.reset();
  store = open();
  EXPECT_EQ(store->load().nodes, b.node_upserts);
  record.at_ms = b.wall_ms;
  EXPECT_EQ(store->audit_log(1), std::vector<AuditRecord>{record});
}

TEST_F(SqliteHubStoreTest, VersionThreeFileKeepsItsRowsAndGainsBindingsAndAuditPeers) {
  auto store = open();
  PersistBatch before;
  before.node_upserts = {{"n1", 3, 33, ""}};
  before.audit = {audit("alice@ops", "readmit", "a1", true)};
  store->apply(before);
  store.reset();
  {
    sqlite::Db raw(dir() / "hub.db", {});
    drop_version_4_columns(raw);
    sqlite::write_meta(raw, "schema_version", 3);
  }
  store = open();
  EXPECT_EQ(store->load().nodes, before.node_upserts);
  PersistBatch after;
  after.node_upserts = {{"n1", 4, 44, "alice"}};
  store->apply(after);
  EXPECT_EQ(store->load().nodes, after.node_upserts);
  EXPECT_EQ(store->audit_log(5).size(), 1u);
}

// A file written before routing rules: schema version 2 (version 1's tables
// plus the operator's), made here with that build's SQL.
TEST_F(SqliteHubStoreTest, VersionTwoFileOpensAndIsUpgradedToTheCurrentVersion) {
  open().reset();  // this build's tables, then made to look like version 2
  {
    sqlite::Db raw(dir() / "hub.db", {});
    raw.exec("DROP TABLE routes;");
    drop_version_4_columns(raw);
    sqlite::write_meta(raw, "schema_version", 2);
  }
  PersistBatch b;
  b.route_sets = {{{"orders", "default"}, some_rules()}};
  auto store = open();
  EXPECT_TRUE(store->load().routes.empty());
  store->apply(b);
  EXPECT_EQ(store->load().routes, b.route_sets);
  store.reset();
  sqlite::Db raw(dir() / "hub.db", {});
  EXPECT_EQ(sqlite::read_meta(raw, "schema_version", 0), kCurrentSchema);
}

// ------------------------------------------------ the config centre (schema 5)

const std::string kBinary("\0\xff\x80 \x01", 5);

ConfigHistoryRecord change(std::string group, std::uint64_t version, std::string key,
                           std::optional<std::string> old_value,
                           std::optional<std::string> new_value, std::string author = "alice") {
  return {std::move(group),  version, std::move(key), std::move(old_value), std::move(new_value),
          std::move(author), 0};
}

// The records as a load returns them: with the batch's wall time.
std::vector<ConfigHistoryRecord> committed_at(std::vector<ConfigHistoryRecord> records,
                                              WallMs wall_ms) {
  for (auto& r : records)
    r.wall_ms = wall_ms;
  return records;
}

TEST_F(SqliteHubStoreTest, ConfigEntriesAndHistoryRoundTripWithBinaryValuesExact) {
  PersistBatch b;
  b.config_changes = {change("orders", 7, "blob", std::nullopt, kBinary),
                      change("orders", 7, "empty", std::nullopt, ""),
                      change("orders", 9, "blob", kBinary, std::string("\xff\0", 2), "bob"),
                      change("pay", 8, "k", std::nullopt, "v")};
  b.wall_ms = 1'700'000'000'123;
  auto store = open();
  store->apply(b);
  store.reset();

  HubSnapshot expected;
  expected.config_entries = {{"orders", "blob", std::string("\xff\0", 2), 9},
                             {"orders", "empty", "", 7},
                             {"pay", "k", "v", 8}};
  expected.config_history = committed_at(b.config_changes, b.wall_ms);
  const auto loaded = open()->load();
  expect_snapshot(loaded, expected);
  ASSERT_EQ(loaded.config_history.size(), 4u);
  EXPECT_EQ(loaded.config_history[1].new_value, "") << "an empty value is not a removal";
  EXPECT_EQ(loaded.config_history[0].old_value, std::nullopt);
}

TEST_F(SqliteHubStoreTest,
       AConfigKeyChangedTwiceInABatchEndsAsTheLastChangeLeftItAndARemovalDeletesIt) {
  auto store = open();
  PersistBatch first;
  first.config_changes = {change("orders", 1, "a", std::nullopt, "1"),
                          change("orders", 1, "b", std::nullopt, "1")};
  first.wall_ms = 10;
  store->apply(first);

  PersistBatch second;
  second.config_changes = {change("orders", 2, "a", "1", "2"), change("orders", 3, "a", "2", "3"),
                           change("orders", 3, "b", "1", std::nullopt)};
  second.wall_ms = 20;
  store->apply(second);

  const auto loaded = store->load();
  EXPECT_EQ(loaded.config_entries, (std::vector<ConfigEntryRecord>{{"orders", "a", "3", 3}}));
  auto history = committed_at(first.config_changes, 10);
  for (const auto& r : committed_at(second.config_changes, 20))
    history.push_back(r);
  EXPECT_EQ(loaded.config_history, history) << "append-only, in order";
}

TEST_F(SqliteHubStoreTest, ALoadHoldsTheLastConfigHistoryRecordsOfEachGroupOldestFirst) {
  PersistBatch b;
  const std::size_t many = kConfigHistoryRestored + 44;
  for (std::size_t i = 0; i < many; ++i) {
    b.config_changes.push_back(change("busy", i + 1, "k", std::nullopt, std::to_string(i)));
    if (i % 100 == 0) b.config_changes.push_back(change("quiet", i + 1, "k", std::nullopt, "x"));
  }
  auto store = open();
  store->apply(b);

  const auto history = store->load().config_history;
  ASSERT_EQ(history.size(), kConfigHistoryRestored + 3);
  EXPECT_EQ(history.front().group, "busy");
  EXPECT_EQ(history.front().version, 45u) << "the oldest of the last 256";
  EXPECT_EQ(history[kConfigHistoryRestored - 1].version, many);
  EXPECT_EQ(history[kConfigHistoryRestored].group, "quiet");
  EXPECT_EQ(history.back().version, 201u);
}

TEST_F(SqliteHubStoreTest, VersionFourFileKeepsItsRowsAndGainsTheConfigTables) {
  auto store = open();
  PersistBatch before = base_batch();
  before.audit = {audit("alice@ops", "readmit", "a1", true)};
  store->apply(before);
  store.reset();
  {
    sqlite::Db raw(dir() / "hub.db", {});
    drop_version_5_tables(raw);
    sqlite::write_meta(raw, "schema_version", 4);
  }
  store = open();
  const auto loaded = store->load();
  expect_snapshot(loaded, as_snapshot(before));
  EXPECT_TRUE(loaded.config_entries.empty());

  PersistBatch config;
  config.config_changes = {change("orders", 1, "k", std::nullopt, kBinary)};
  store->apply(config);
  EXPECT_EQ(store->load().config_entries,
            (std::vector<ConfigEntryRecord>{{"orders", "k", kBinary, 1}}));
  store.reset();
  sqlite::Db raw(dir() / "hub.db", {});
  EXPECT_EQ(sqlite::read_meta(raw, "schema_version", 0), kCurrentSchema);
}

}  // namespace
}  // namespace cascade::hub
