#include "cascade/hub/sqlite_store.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <utility>

#include "cascade/common/msgpack_blob.hpp"

namespace cascade::hub {
namespace {

using sqlite::from_u64;
using sqlite::to_u64;
// A batch outlives each of its statements' runs: its rows' bytes are bound
// where they are, not copied (the hot path of a registration wave).
constexpr auto kBorrow = sqlite::Statement::Bind::kBorrow;

constexpr std::int64_t kSchemaVersion = 6;
// 1 -> 2 -> 3 only add tables; 3 -> 4 adds columns (upgrade_to_4); 4 -> 5
// only adds tables; 5 -> 6 rebuilds the instances table keyed by row
// (upgrade_to_6).
constexpr std::int64_t kOldestUpgradable = 1;
constexpr const char* kFileName = "hub.db";

// Instances are keyed by the row the hub's registry gave them (schema 6):
// a registration appends at the end of the table's b-tree. Keyed by
// (name, group_name, id), as up to schema 5, each row of a registration
// storm went to a random leaf of a tree ordered by UUIDs, and every commit
// wrote a page per row: 1M rows in batches of 8,192 took 37 s in SQLite 3.40
// on this machine, 1.9 s keyed by row (docs/benchmarks.md). The registry
// keeps (service, id) unique; no index is needed, a restart reads the whole
// table.
std::string instances_table_sql(const std::string& name) {
  return "CREATE TABLE IF NOT EXISTS " + name +
         "("
         "  row INTEGER PRIMARY KEY,"
         "  name TEXT NOT NULL,"
         "  group_name TEXT NOT NULL,"
         "  id TEXT NOT NULL,"
         "  owner TEXT NOT NULL,"
         "  address TEXT NOT NULL,"
         "  weight INTEGER NOT NULL CHECK (weight BETWEEN 0 AND 4294967295),"
         "  zone TEXT NOT NULL,"
         "  status INTEGER NOT NULL CHECK (status BETWEEN 0 AND " +
         std::to_string(proto::kMaxInstanceStatus) +
         "),"
         "  metadata BLOB NOT NULL"
         ");";
}

// WITHOUT ROWID: the other tables are looked up by their text primary key
// only, so the key itself is the b-tree key and no hidden rowid index is kept.
std::string schema_sql() {
  return std::string(
             "CREATE TABLE IF NOT EXISTS nodes("
             "  node_id TEXT PRIMARY KEY NOT NULL,"
             "  epoch INTEGER NOT NULL,"
             "  digest INTEGER NOT NULL,"
             "  owner_key TEXT NOT NULL DEFAULT ''"  // version 4
             ") WITHOUT ROWID;") +
         instances_table_sql("instances") +
         "CREATE TABLE IF NOT EXISTS services("
         "  name TEXT NOT NULL,"
         "  group_name TEXT NOT NULL,"
         "  version INTEGER NOT NULL,"
         "  PRIMARY KEY (name, group_name)"
         ") WITHOUT ROWID;"
         // Version 2.
         "CREATE TABLE IF NOT EXISTS instance_overrides("
         "  name TEXT NOT NULL,"
         "  group_name TEXT NOT NULL,"
         "  id TEXT NOT NULL,"
         "  status INTEGER NOT NULL CHECK (status BETWEEN 0 AND " +
         std::to_string(proto::kMaxInstanceStatus) +
         "),"
         "  PRIMARY KEY (name, group_name, id)"
         ") WITHOUT ROWID;"
         "CREATE TABLE IF NOT EXISTS settings("
         "  key TEXT PRIMARY KEY NOT NULL,"
         "  value INTEGER NOT NULL"
         ") WITHOUT ROWID;"
         // A rowid table: the rowid is the order of the log.
         "CREATE TABLE IF NOT EXISTS admin_audit("
         "  at_ms INTEGER NOT NULL,"
         "  actor TEXT NOT NULL,"
         "  op TEXT NOT NULL,"
         "  name TEXT NOT NULL,"
         "  group_name TEXT NOT NULL,"
         "  instance_id TEXT NOT NULL,"
         "  detail TEXT NOT NULL,"
         "  ok INTEGER NOT NULL CHECK (ok IN (0, 1)),"
         "  key_name TEXT NOT NULL DEFAULT '',"  // version 4
         "  peer TEXT NOT NULL DEFAULT ''"       // version 4
         ");"
         // Version 3.
         "CREATE TABLE IF NOT EXISTS routes("
         "  name TEXT NOT NULL,"
         "  group_name TEXT NOT NULL,"
         "  position INTEGER NOT NULL CHECK (position >= 0),"
         "  text TEXT NOT NULL,"
         "  priority INTEGER NOT NULL CHECK (priority BETWEEN -2147483648 AND 2147483647),"
         "  force INTEGER NOT NULL CHECK (force IN (0, 1)),"
         "  enabled INTEGER NOT NULL CHECK (enabled IN (0, 1)),"
         "  PRIMARY KEY (name, group_name, position)"
         ") WITHOUT ROWID;"
         // Version 5.
         "CREATE TABLE IF NOT EXISTS config_entries("
         "  group_name TEXT NOT NULL,"
         "  key TEXT NOT NULL,"
         "  value BLOB NOT NULL,"
         "  version INTEGER NOT NULL,"
         "  PRIMARY KEY (group_name, key)"
         ") WITHOUT ROWID;"
         // A rowid table: the id is the order of the history.
         "CREATE TABLE IF NOT EXISTS config_history("
         "  id INTEGER PRIMARY KEY,"
         "  group_name TEXT NOT NULL,"
         "  version INTEGER NOT NULL,"
         "  key TEXT NOT NULL,"
         "  old_value BLOB,"
         "  new_value BLOB,"
         "  author TEXT NOT NULL,"
         "  wall_ms INTEGER NOT NULL"
         ");"
         "CREATE INDEX IF NOT EXISTS config_history_by_group ON config_history(group_name, id);";
}

void add_column_if_missing(sqlite::Db& db, const std::string& table, const std::string& column,
                           const std::string& declaration) {
  sqlite::Statement columns(db, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2");
  columns.bind_text(1, table).bind_text(2, column);
  if (!columns.step())
    db.exec("ALTER TABLE " + table + " ADD COLUMN " + column + " " + declaration);
}

// Schema 4: node bindings to keys, and who sent each operator request. An
// older file's tables exist without the columns (a version 1 file gets its
// audit table from this build's schema, so it has them already).
void upgrade_to_4(sqlite::Db& db) {
  add_column_if_missing(db, "nodes", "owner_key", "TEXT NOT NULL DEFAULT ''");
  add_column_if_missing(db, "admin_audit", "key_name", "TEXT NOT NULL DEFAULT ''");
  add_column_if_missing(db, "admin_audit", "peer", "TEXT NOT NULL DEFAULT ''");
}

// Schema 6: instances keyed by row. An older file's table (WITHOUT ROWID,
// keyed by name, group and id) is copied into the new shape, rows numbered
// in key order.
void upgrade_to_6(sqlite::Db& db) {
  sqlite::Statement has_row(db, "SELECT 1 FROM pragma_table_info('instances') WHERE name = 'row'");
  if (has_row.step()) return;
  constexpr const char* kColumns =
      "name, group_name, id, owner, address, weight, zone, status, metadata";
  db.exec(std::string("ALTER TABLE instances RENAME TO instances_before_6;") +
          instances_table_sql("instances") + "INSERT INTO instances(" + kColumns + ") SELECT " +
          kColumns + " FROM instances_before_6 ORDER BY name, group_name, id;" +
          "DROP TABLE instances_before_6;");
}

using Metadata = std::map<std::string, std::string>;

std::string describe_key(const proto::ServiceKey& service, std::string_view id) {
  return service.name + "/" + service.group + "/" + std::string(id);
}

// Columns as selected in read_instances(). Throws StoreError for a row that no
// version of this code could have written.
// One stored instance, checked (its row key in range, its metadata a map of
// strings) and added to `rows` with its metadata as stored.
void add_instance_row(const sqlite::Statement& row, const std::filesystem::path& file,
                      InstanceRows& rows) {
  const auto corrupt = [&](const std::string& why) {
    const proto::ServiceKey service{row.column_text(0), row.column_text(1)};
    return StoreError(file, "corrupt instance " + describe_key(service, row.column_text(2)), why);
  };
  const auto key = row.column_int64(9);
  if (key <= 0 || key > std::numeric_limits<std::uint32_t>::max())
    throw corrupt("row " + std::to_string(key) + " is out of range");
  const auto metadata = row.column_blob_view(8);
  if (!unpack_blob<Metadata>(metadata))
    throw corrupt("metadata is not a MessagePack map of strings");
  // The schema's CHECK constraints keep weight and status in range.
  rows.add({.row = static_cast<std::uint32_t>(key),
            .name = row.column_text_view(0),
            .group = row.column_text_view(1),
            .id = row.column_text_view(2),
            .owner = row.column_text_view(3),
            .address = row.column_text_view(4),
            .zone = row.column_text_view(6),
            .weight = static_cast<std::uint32_t>(row.column_int64(5)),
            .status = static_cast<proto::InstanceStatus>(row.column_int64(7)),
            .metadata_blob = metadata});
}

}  // namespace

struct SqliteHubStore::Statements {
  explicit Statements(sqlite::Db& db)
      : upsert_node(db,
                    "INSERT INTO nodes(node_id, epoch, digest, owner_key) VALUES (?1, ?2, ?3, ?4) "
                    "ON CONFLICT(node_id) DO UPDATE SET epoch = excluded.epoch, "
                    "digest = excluded.digest, owner_key = excluded.owner_key"),
        delete_node(db, "DELETE FROM nodes WHERE node_id = ?1"),
        upsert_instance(db,
                        "INSERT INTO instances(name, group_name, id, owner, address, weight, "
                        "zone, status, metadata, row) "
                        "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10) "
                        "ON CONFLICT(row) DO UPDATE SET name = excluded.name, "
                        "group_name = excluded.group_name, id = excluded.id, "
                        "owner = excluded.owner, address = excluded.address, "
                        "weight = excluded.weight, zone = excluded.zone, "
                        "status = excluded.status, metadata = excluded.metadata"),
        delete_instance(db, "DELETE FROM instances WHERE row = ?1"),
        delete_all_instances(db, "DELETE FROM instances"),
        upsert_service(db,
                       "INSERT INTO services(name, group_name, version) VALUES (?1, ?2, ?3) "
                       "ON CONFLICT(name, group_name) DO UPDATE SET version = excluded.version"),
        delete_service(db, "DELETE FROM services WHERE name = ?1 AND group_name = ?2"),
        upsert_override(db,
                        "INSERT INTO instance_overrides(name, group_name, id, status) "
                        "VALUES (?1, ?2, ?3, ?4) "
                        "ON CONFLICT(name, group_name, id) DO UPDATE SET status = excluded.status"),
        delete_override(
            db, "DELETE FROM instance_overrides WHERE name = ?1 AND group_name = ?2 AND id = ?3"),
        upsert_setting(db,
                       "INSERT INTO settings(key, value) VALUES (?1, ?2) "
                       "ON CONFLICT(key) DO UPDATE SET value = excluded.value"),
        append_audit(
            db,
            "INSERT INTO admin_audit(at_ms, actor, op, name, group_name, instance_id, "
            "detail, ok, key_name, peer) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)"),
        delete_routes(db, "DELETE FROM routes WHERE name = ?1 AND group_name = ?2"),
        insert_route(db,
                     "INSERT INTO routes(name, group_name, position, text, priority, force, "
                     "enabled) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)"),
        upsert_config_entry(db,
                            "INSERT INTO config_entries(group_name, key, value, version) "
                            "VALUES (?1, ?2, ?3, ?4) ON CONFLICT(group_name, key) DO UPDATE SET "
                            "value = excluded.value, version = excluded.version"),
        delete_config_entry(db, "DELETE FROM config_entries WHERE group_name = ?1 AND key = ?2"),
        append_config_history(db,
                              "INSERT INTO config_history(group_name, version, key, old_value, "
                              "new_value, author, wall_ms) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)") {}

  sqlite::Statement upsert_node;
  sqlite::Statement delete_node;
  sqlite::Statement upsert_instance;
  sqlite::Statement delete_instance;
  sqlite::Statement delete_all_instances;
  sqlite::Statement upsert_service;
  sqlite::Statement delete_service;
  sqlite::Statement upsert_override;
  sqlite::Statement delete_override;
  sqlite::Statement upsert_setting;
  sqlite::Statement append_audit;
  sqlite::Statement delete_routes;
  sqlite::Statement insert_route;
  sqlite::Statement upsert_config_entry;
  sqlite::Statement delete_config_entry;
  sqlite::Statement append_config_history;
};

std::unique_ptr<SqliteHubStore> SqliteHubStore::open(const std::filesystem::path& data_dir,
                                                     sqlite::Synchronous mode,
                                                     std::size_t cache_mib) {
  ensure_data_dir(data_dir);
  return std::unique_ptr<SqliteHubStore>(new SqliteHubStore(file_in(data_dir), mode, cache_mib));
}

std::filesystem::path SqliteHubStore::file_in(const std::filesystem::path& data_dir) {
  return data_dir / kFileName;
}

SqliteHubStore::SqliteHubStore(const std::filesystem::path& file, sqlite::Synchronous mode,
                               std::size_t cache_mib)
    : db_(file, sqlite::DbOptions{.synchronous = mode}), mode_(mode) {
  // A registration storm (a million instances after a restart) writes in
  // large batches: rarer checkpoints took sustained registration from ~25k to
  // ~37k instances/s in bench/hub_bench.cpp. The page cache is counted in the
  // hub's RSS and buys little beyond a few MiB (the kernel caches the file):
  // at 1M realistic instances, 4 MiB registered at 38.4k/s, 64 MiB at 37.6k/s
  // (docs/benchmarks.md).
  db_.exec("PRAGMA cache_size=-" + std::to_string(cache_mib * 1024) +
           "; PRAGMA wal_autocheckpoint=16384");
  sqlite::Transaction txn(db_);
  const auto found = sqlite::check_schema_version(db_, kSchemaVersion, kOldestUpgradable);
  db_.exec(schema_sql());
  if (found > 0 && found < 4) upgrade_to_4(db_);
  if (found > 0 && found < 6) upgrade_to_6(db_);
  txn.commit();
  // Prepared only now: SQLite refuses to prepare statements on missing tables.
  sql_ = std::make_unique<Statements>(db_);
}

SqliteHubStore::~SqliteHubStore() = default;

std::size_t SqliteHubStore::cache_kib() {
  const auto read = [&](const char* sql) {
    sqlite::Statement pragma(db_, sql);
    pragma.step();
    const auto value = pragma.column_int64(0);
    pragma.reset();
    return value;
  };
  const auto size = read("PRAGMA cache_size");  // negative: KiB; else pages
  if (size < 0) return static_cast<std::size_t>(-size);
  return static_cast<std::size_t>(size * read("PRAGMA page_size") / 1024);
}

// ---------------------------------------------------------------- epoch

std::uint64_t SqliteHubStore::next_epoch() {
  // Agents read a changed hub epoch as "the hub restarted". An epoch handed
  // out and then lost to a power cut would be handed out again after a state
  // that differs, so this one commit waits for the disk whatever `mode_` says.
  // If it throws, FULL stays on: slower, never less safe.
  db_.set_synchronous(sqlite::Synchronous::kFull);
  const std::uint64_t epoch = increment_epoch();
  db_.set_synchronous(mode_);
  return epoch;
}

std::uint64_t SqliteHubStore::increment_epoch() {
  sqlite::Transaction txn(db_);
  const std::uint64_t epoch = to_u64(sqlite::read_meta(db_, "epoch", 0)) + 1;
  sqlite::write_meta(db_, "epoch", from_u64(epoch));
  txn.commit();
  return epoch;
}

// ---------------------------------------------------------------- apply

void SqliteHubStore::apply(const PersistBatch& batch) {
  if (batch.empty()) return;
  sqlite::Transaction txn(db_);
  write_nodes(batch);
  write_instances(batch);
  write_services(batch);
  write_admin(batch);
  write_config(batch);
  txn.commit();
}

// A key appears in at most one list of a batch, so the order of deletes and
// upserts does not matter.
void SqliteHubStore::write_nodes(const PersistBatch& batch) {
  for (const auto& node_id : batch.node_deletes)
    sql_->delete_node.bind_text(1, node_id, kBorrow).run();
  for (const auto& node : batch.node_upserts) {
    sql_->upsert_node.bind_text(1, node.node_id, kBorrow)
        .bind_int64(2, from_u64(node.epoch))
        .bind_int64(3, from_u64(node.digest))
        .bind_text(4, node.owner_key, kBorrow)
        .run();
  }
}

// Deletes first: after a renumbering the old rows all go, and the upserts
// hold every instance under its new row. Upserts in row order: a
// registration's rows are appended, page after page.
void SqliteHubStore::write_instances(const PersistBatch& batch) {
  if (batch.instances_renumbered) sql_->delete_all_instances.run();
  for (const auto row : batch.instance_deletes)
    sql_->delete_instance.bind_int64(1, row).run();
  const InstanceRows& rows = batch.instance_upserts;
  for (const auto at : rows.order_by_row()) {
    const InstanceRow in = rows[at];
    sql_->upsert_instance.bind_text(1, in.name, kBorrow)
        .bind_text(2, in.group, kBorrow)
        .bind_text(3, in.id, kBorrow)
        .bind_text(4, in.owner, kBorrow)
        .bind_text(5, in.address, kBorrow)
        .bind_int64(6, in.weight)
        .bind_text(7, in.zone, kBorrow)
        .bind_int64(8, static_cast<std::int64_t>(in.status))
        .bind_blob(9, in.metadata_blob, kBorrow)
        .bind_int64(10, in.row)
        .run();
  }
}

void SqliteHubStore::write_services(const PersistBatch& batch) {
  for (const auto& service : batch.service_versions) {
    sql_->upsert_service.bind_text(1, service.service.name, kBorrow)
        .bind_text(2, service.service.group, kBorrow)
        .bind_int64(3, from_u64(service.version))
        .run();
  }
  for (const auto& service : batch.service_deletes)
    sql_->delete_service.bind_text(1, service.name, kBorrow)
        .bind_text(2, service.group, kBorrow)
        .run();
}

void SqliteHubStore::write_admin(const PersistBatch& batch) {
  for (const auto& key : batch.override_deletes) {
    sql_->delete_override.bind_text(1, key.service.name)
        .bind_text(2, key.service.group)
        .bind_text(3, key.id)
        .run();
  }
  for (const auto& record : batch.override_upserts) {
    sql_->upsert_override.bind_text(1, record.service.name)
        .bind_text(2, record.service.group)
        .bind_text(3, record.id)
        .bind_int64(4, static_cast<std::int64_t>(record.status))
        .run();
  }
  for (const auto& setting : batch.settings)
    sql_->upsert_setting.bind_text(1, setting.key).bind_int64(2, setting.value).run();
  // A service's rules are written whole: its rows go, the current set comes in.
  for (const auto& set : batch.route_sets) {
    sql_->delete_routes.bind_text(1, set.service.name).bind_text(2, set.service.group).run();
    for (std::size_t i = 0; i < set.routes.size(); ++i) {
      const auto& rule = set.routes[i];
      sql_->insert_route.bind_text(1, set.service.name)
          .bind_text(2, set.service.group)
          .bind_int64(3, static_cast<std::int64_t>(i))
          .bind_text(4, rule.text)
          .bind_int64(5, rule.priority)
          .bind_int64(6, rule.force ? 1 : 0)
          .bind_int64(7, rule.enabled ? 1 : 0)
          .run();
    }
  }
  for (const auto& record : batch.audit) {
    sql_->append_audit.bind_int64(1, batch.wall_ms)
        .bind_text(2, record.actor)
        .bind_text(3, record.op)
        .bind_text(4, record.service.name)
        .bind_text(5, record.service.group)
        .bind_text(6, record.instance_id)
        .bind_text(7, record.detail)
        .bind_int64(8, record.ok ? 1 : 0)
        .bind_text(9, record.key)
        .bind_text(10, record.peer)
        .run();
  }
}

namespace {

// A value, or NULL for nullopt (a key not set before, or removed). Values are
// bytes: a BLOB, never TEXT, so they come back exactly.
void bind_value(sqlite::Statement& statement, int index, const std::optional<std::string>& value) {
  if (value)
    statement.bind_blob(index, *value);
  else
    statement.bind_null(index);
}

std::optional<std::string> value_column(const sqlite::Statement& row, int index) {
  if (row.column_is_null(index)) return std::nullopt;
  return row.column_blob(index);
}

}  // namespace

// Changes in the order they were made: a key changed twice in one batch ends
// as the second change left it.
void SqliteHubStore::write_config(const PersistBatch& batch) {
  for (const auto& change : batch.config_changes) {
    if (change.new_value) {
      sql_->upsert_config_entry.bind_text(1, change.group)
          .bind_text(2, change.key)
          .bind_blob(3, *change.new_value)
          .bind_int64(4, from_u64(change.version))
          .run();
    } else {
      sql_->delete_config_entry.bind_text(1, change.group).bind_text(2, change.key).run();
    }
    auto& append = sql_->append_config_history;
    append.bind_text(1, change.group)
        .bind_int64(2, from_u64(change.version))
        .bind_text(3, change.key);
    bind_value(append, 4, change.old_value);
    bind_value(append, 5, change.new_value);
    append.bind_text(6, change.author).bind_int64(7, batch.wall_ms).run();
  }
}

// ----------------------------------------------------------------- load

HubSnapshot SqliteHubStore::load() {
  // One transaction, so the tables are read as of the same commit.
  sqlite::Transaction txn(db_);
  HubSnapshot snapshot{read_nodes(),          read_instances(),     read_services(),
                       read_overrides(),      read_settings(),      read_routes(),
                       read_config_entries(), read_config_history()};
  txn.commit();
  return snapshot;
}

std::vector<NodeRecord> SqliteHubStore::read_nodes() {
  sqlite::Statement select(db_,
                           "SELECT node_id, epoch, digest, owner_key FROM nodes ORDER BY node_id");
  std::vector<NodeRecord> nodes;
  while (select.step()) {
    nodes.push_back(NodeRecord{select.column_text(0), to_u64(select.column_int64(1)),
                               to_u64(select.column_int64(2)), select.column_text(3)});
  }
  return nodes;
}

InstanceRows SqliteHubStore::read_instances() {
  sqlite::Statement select(db_,
                           "SELECT name, group_name, id, owner, address, weight, zone, status, "
                           "metadata, row FROM instances ORDER BY row");
  InstanceRows rows;
  while (select.step())
    add_instance_row(select, db_.path(), rows);
  return rows;
}

std::vector<ServiceRecord> SqliteHubStore::read_services() {
  sqlite::Statement select(
      db_, "SELECT name, group_name, version FROM services ORDER BY name, group_name");
  std::vector<ServiceRecord> services;
  while (select.step()) {
    services.push_back(
        ServiceRecord{proto::ServiceKey{select.column_text(0), select.column_text(1)},
                      to_u64(select.column_int64(2))});
  }
  return services;
}

std::vector<OverrideRecord> SqliteHubStore::read_overrides() {
  sqlite::Statement select(db_,
                           "SELECT name, group_name, id, status FROM instance_overrides "
                           "ORDER BY name, group_name, id");
  std::vector<OverrideRecord> overrides;
  while (select.step()) {
    // The CHECK constraint keeps status in range.
    overrides.push_back(OverrideRecord{
        proto::ServiceKey{select.column_text(0), select.column_text(1)}, select.column_text(2),
        static_cast<proto::InstanceStatus>(select.column_int64(3))});
  }
  return overrides;
}

std::vector<SettingRecord> SqliteHubStore::read_settings() {
  sqlite::Statement select(db_, "SELECT key, value FROM settings ORDER BY key");
  std::vector<SettingRecord> settings;
  while (select.step())
    settings.push_back(SettingRecord{select.column_text(0), select.column_int64(1)});
  return settings;
}

std::vector<RouteSetRecord> SqliteHubStore::read_routes() {
  sqlite::Statement select(db_,
                           "SELECT name, group_name, text, priority, force, enabled FROM routes "
                           "ORDER BY name, group_name, position");
  std::vector<RouteSetRecord> sets;
  while (select.step()) {
    proto::ServiceKey service{select.column_text(0), select.column_text(1)};
    if (sets.empty() || sets.back().service != service) sets.push_back({std::move(service), {}});
    // The CHECK constraints keep priority, force and enabled in range.
    sets.back().routes.push_back(proto::RouteRuleText{
        select.column_text(2), static_cast<std::int32_t>(select.column_int64(3)),
        select.column_int64(4) != 0, select.column_int64(5) != 0});
  }
  return sets;
}

std::vector<ConfigEntryRecord> SqliteHubStore::read_config_entries() {
  sqlite::Statement select(
      db_, "SELECT group_name, key, value, version FROM config_entries ORDER BY group_name, key");
  std::vector<ConfigEntryRecord> entries;
  while (select.step()) {
    entries.push_back(ConfigEntryRecord{select.column_text(0), select.column_text(1),
                                        select.column_blob(2), to_u64(select.column_int64(3))});
  }
  return entries;
}

// The history grows for ever; a restart reads the last kConfigHistoryRestored
// records of each group through the index: the groups one by one (each found
// by one seek past the previous), then each group's newest records.
std::vector<ConfigHistoryRecord> SqliteHubStore::read_config_history() {
  sqlite::Statement next_group(db_,
                               "SELECT group_name FROM config_history WHERE group_name > ?1 "
                               "ORDER BY group_name LIMIT 1");
  sqlite::Statement newest(db_,
                           "SELECT version, key, old_value, new_value, author, wall_ms "
                           "FROM config_history WHERE group_name = ?1 ORDER BY id DESC LIMIT ?2");
  std::vector<ConfigHistoryRecord> history;
  std::string group;  // group names are never empty (proto::check_name)
  while (true) {
    next_group.bind_text(1, group);
    if (!next_group.step()) break;
    group = next_group.column_text(0);
    next_group.reset();
    const auto first = history.size();
    newest.bind_text(1, group).bind_int64(2, static_cast<std::int64_t>(kConfigHistoryRestored));
    while (newest.step()) {
      history.push_back(ConfigHistoryRecord{
          group, to_u64(newest.column_int64(0)), newest.column_text(1), value_column(newest, 2),
          value_column(newest, 3), newest.column_text(4), newest.column_int64(5)});
    }
    std::reverse(history.begin() + static_cast<std::ptrdiff_t>(first), history.end());
  }
  return history;
}

std::vector<AuditRecord> SqliteHubStore::audit_log(std::size_t limit) {
  sqlite::Statement select(db_,
                           "SELECT at_ms, actor, op, name, group_name, instance_id, detail, ok, "
                           "key_name, peer "
                           "FROM (SELECT rowid AS seq, * FROM admin_audit ORDER BY rowid DESC "
                           "LIMIT ?1) ORDER BY seq");
  select.bind_int64(1, static_cast<std::int64_t>(
                           std::min<std::size_t>(limit, std::numeric_limits<std::int64_t>::max())));
  std::vector<AuditRecord> records;
  while (select.step()) {
    records.push_back(
        AuditRecord{select.column_int64(0), select.column_text(1), select.column_text(2),
                    proto::ServiceKey{select.column_text(3), select.column_text(4)},
                    select.column_text(5), select.column_text(6), select.column_int64(7) != 0,
                    select.column_text(8), select.column_text(9)});
  }
  return records;
}

std::vector<AuditEntry> SqliteHubStore::audit_page(std::optional<std::int64_t> before,
                                                   std::size_t limit) {
  return read_audit_page(db_, before, limit);
}

std::vector<AuditEntry> read_audit_page(sqlite::Db& db, std::optional<std::int64_t> before,
                                        std::size_t limit) {
  // By rowid, the table's own key: a page costs its rows, however long the log.
  sqlite::Statement select(db,
                           "SELECT rowid, at_ms, actor, op, name, group_name, instance_id, detail, "
                           "ok, key_name, peer FROM admin_audit WHERE rowid < ?1 "
                           "ORDER BY rowid DESC LIMIT ?2");
  select.bind_int64(1, before.value_or(std::numeric_limits<std::int64_t>::max()))
      .bind_int64(2, static_cast<std::int64_t>(
                         std::min<std::size_t>(limit, std::numeric_limits<std::int64_t>::max())));
  std::vector<AuditEntry> page;
  while (select.step()) {
    page.push_back(
        {select.column_int64(0),
         AuditRecord{select.column_int64(1), select.column_text(2), select.column_text(3),
                     proto::ServiceKey{select.column_text(4), select.column_text(5)},
                     select.column_text(6), select.column_text(7), select.column_int64(8) != 0,
                     select.column_text(9), select.column_text(10)}});
  }
  return page;
}

}  // namespace cascade::hub
