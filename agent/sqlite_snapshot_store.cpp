#include "cascade/agent/sqlite_snapshot_store.hpp"

#include <msgpack.hpp>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "cascade/common/msgpack_blob.hpp"

namespace cascade::agent {
namespace {

constexpr std::int64_t kSchemaVersion = 3;
// 1 -> 2 adds services.routes; 2 -> 3 adds config_groups.
constexpr std::int64_t kOldestUpgradable = 1;
constexpr const char* kFileName = "agent-snapshot.db";

constexpr const char* kSchema =
    "CREATE TABLE IF NOT EXISTS services("
    "  name TEXT NOT NULL,"
    "  group_name TEXT NOT NULL,"
    "  version INTEGER NOT NULL,"
    "  fetched_wall_ms INTEGER NOT NULL,"
    "  instances BLOB NOT NULL,"
    "  routes BLOB,"  // version 2
    "  PRIMARY KEY (name, group_name)"
    ") WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS config_groups("  // version 3
    "  group_name TEXT PRIMARY KEY,"
    "  version INTEGER NOT NULL,"
    "  fetched_wall_ms INTEGER NOT NULL,"
    "  gone INTEGER NOT NULL,"
    "  entries BLOB NOT NULL"
    ") WITHOUT ROWID";

// One instance as stored: the wire order of proto::Instance's fields.
using StoredInstance = std::tuple<std::string, std::string, std::uint32_t, std::string,
                                  std::uint8_t, std::map<std::string, std::string>>;

std::string encode_instances(const std::vector<proto::Instance>& instances) {
  std::vector<StoredInstance> rows;
  rows.reserve(instances.size());
  for (const auto& in : instances) {
    rows.emplace_back(in.id, in.address, in.weight, in.zone, static_cast<std::uint8_t>(in.status),
                      in.metadata);
  }
  return pack_blob(rows);
}

// nullopt when the blob is not a list of well-formed instances.
std::optional<std::vector<proto::Instance>> decode_instances(std::string_view bytes) {
  auto rows = unpack_blob<std::vector<StoredInstance>>(bytes);
  if (!rows) return std::nullopt;
  std::vector<proto::Instance> instances;
  instances.reserve(rows->size());
  for (auto& [id, address, weight, zone, status, metadata] : *rows) {
    if (status > proto::kMaxInstanceStatus) return std::nullopt;
    instances.push_back(proto::Instance{std::move(id), std::move(address), weight, std::move(zone),
                                        static_cast<proto::InstanceStatus>(status),
                                        std::move(metadata)});
  }
  return instances;
}

// One routing rule as stored: the wire order of proto::RouteRuleText's fields.
using StoredRoute = std::tuple<std::string, std::int32_t, bool, bool>;

std::string encode_routes(const std::vector<proto::RouteRuleText>& routes) {
  std::vector<StoredRoute> rows;
  rows.reserve(routes.size());
  for (const auto& rule : routes)
    rows.emplace_back(rule.text, rule.priority, rule.force, rule.enabled);
  return pack_blob(rows);
}

// nullopt when the blob is not a list of well-formed rules.
std::optional<std::vector<proto::RouteRuleText>> decode_routes(std::string_view bytes) {
  auto rows = unpack_blob<std::vector<StoredRoute>>(bytes);
  if (!rows) return std::nullopt;
  std::vector<proto::RouteRuleText> routes;
  routes.reserve(rows->size());
  for (auto& [text, priority, force, enabled] : *rows)
    routes.push_back(proto::RouteRuleText{std::move(text), priority, force, enabled});
  return routes;
}

// One config key as stored: the wire order of proto::ConfigEntry's fields.
using StoredConfigEntry =
    std::tuple<std::string, std::string, std::uint32_t, std::string, std::uint64_t>;

std::string encode_config_entries(const proto::ConfigValues& entries) {
  std::vector<StoredConfigEntry> rows;
  rows.reserve(entries.size());
  for (const auto& [key, e] : entries)
    rows.emplace_back(e.key, e.value, e.origin.tier, e.origin.hub, e.origin.version);
  return pack_blob(rows);
}

// nullopt when the blob is not a list of well-formed keys.
std::optional<proto::ConfigValues> decode_config_entries(std::string_view bytes) {
  auto rows = unpack_blob<std::vector<StoredConfigEntry>>(bytes);
  if (!rows) return std::nullopt;
  proto::ConfigValues entries;
  for (auto& [key, value, tier, hub, version] : *rows) {
    proto::ConfigEntry e{key, std::move(value), {tier, std::move(hub), version}};
    entries.insert_or_assign(std::move(key), std::move(e));
  }
  return entries;
}

// Columns as selected in load_config_groups().
ConfigGroupSnapshot config_group_from_row(const sqlite::Statement& row,
                                          const std::filesystem::path& file) {
  ConfigGroupSnapshot snapshot;
  snapshot.group = row.column_text(0);
  snapshot.version = sqlite::to_u64(row.column_int64(1));
  snapshot.fetched_wall_ms = row.column_int64(2);
  snapshot.gone = row.column_int64(3) != 0;
  auto entries = decode_config_entries(row.column_blob(4));
  if (!entries) {
    throw StoreError(file, "corrupt snapshot of config group " + snapshot.group,
                     "entries are not a MessagePack list of config keys");
  }
  snapshot.entries = std::move(*entries);
  return snapshot;
}

// Columns as selected in load_all().
ServiceSnapshot snapshot_from_row(const sqlite::Statement& row, const std::filesystem::path& file) {
  ServiceSnapshot snapshot;
  snapshot.service = proto::ServiceKey{row.column_text(0), row.column_text(1)};
  snapshot.version = sqlite::to_u64(row.column_int64(2));
  snapshot.fetched_wall_ms = row.column_int64(3);
  auto instances = decode_instances(row.column_blob(4));
  if (!instances) {
    throw StoreError(file,
                     "corrupt snapshot of " + snapshot.service.name + "/" + snapshot.service.group,
                     "instances are not a MessagePack list of instances");
  }
  snapshot.instances = std::move(*instances);
  if (!row.column_is_null(5)) {  // NULL: no hub had said (or a version-1 row)
    auto routes = decode_routes(row.column_blob(5));
    if (!routes) {
      throw StoreError(
          file, "corrupt snapshot of " + snapshot.service.name + "/" + snapshot.service.group,
          "routes are not a MessagePack list of routing rules");
    }
    snapshot.routes = std::move(*routes);
  }
  return snapshot;
}

}  // namespace

struct SqliteSnapshotStore::Statements {
  explicit Statements(sqlite::Db& db)
      : upsert(db,
               "INSERT INTO services(name, group_name, version, fetched_wall_ms, instances, "
               "routes) VALUES (?1, ?2, ?3, ?4, ?5, ?6) "
               "ON CONFLICT(name, group_name) DO UPDATE SET "
               "version = excluded.version, fetched_wall_ms = excluded.fetched_wall_ms, "
               "instances = excluded.instances, routes = excluded.routes"),
        remove(db, "DELETE FROM services WHERE name = ?1 AND group_name = ?2"),
        upsert_config(db,
                      "INSERT INTO config_groups(group_name, version, fetched_wall_ms, gone, "
                      "entries) VALUES (?1, ?2, ?3, ?4, ?5) "
                      "ON CONFLICT(group_name) DO UPDATE SET "
                      "version = excluded.version, fetched_wall_ms = excluded.fetched_wall_ms, "
                      "gone = excluded.gone, entries = excluded.entries"),
        remove_config(db, "DELETE FROM config_groups WHERE group_name = ?1") {}

  sqlite::Statement upsert;
  sqlite::Statement remove;
  sqlite::Statement upsert_config;
  sqlite::Statement remove_config;
};

std::unique_ptr<SqliteSnapshotStore> SqliteSnapshotStore::open(
    const std::filesystem::path& data_dir) {
  ensure_data_dir(data_dir);
  return std::unique_ptr<SqliteSnapshotStore>(new SqliteSnapshotStore(data_dir / kFileName));
}

SqliteSnapshotStore::SqliteSnapshotStore(const std::filesystem::path& file)
    : db_(file, sqlite::DbOptions{.synchronous = sqlite::Synchronous::kNormal}) {
  sqlite::Transaction txn(db_);
  const std::int64_t found = sqlite::check_schema_version(db_, kSchemaVersion, kOldestUpgradable);
  db_.exec(kSchema);  // a new file gets every column; an older one keeps its tables
  // Version 1 -> 2: its rows load with no rules (NULL) until saved again.
  if (found == 1) db_.exec("ALTER TABLE services ADD COLUMN routes BLOB");
  txn.commit();
  // Prepared only now: SQLite refuses to prepare statements on missing tables.
  sql_ = std::make_unique<Statements>(db_);
}

SqliteSnapshotStore::~SqliteSnapshotStore() = default;

std::vector<ServiceSnapshot> SqliteSnapshotStore::load_all() {
  sqlite::Statement select(db_,
                           "SELECT name, group_name, version, fetched_wall_ms, instances, routes "
                           "FROM services ORDER BY name, group_name");
  std::vector<ServiceSnapshot> services;
  while (select.step())
    services.push_back(snapshot_from_row(select, db_.path()));
  return services;
}

void SqliteSnapshotStore::save(const std::vector<ServiceSnapshot>& services,
                               const std::vector<proto::ServiceKey>& removed) {
  if (services.empty() && removed.empty()) return;
  sqlite::Transaction txn(db_);
  for (const auto& s : services) {
    sql_->upsert.bind_text(1, s.service.name)
        .bind_text(2, s.service.group)
        .bind_int64(3, sqlite::from_u64(s.version))
        .bind_int64(4, s.fetched_wall_ms)
        .bind_blob(5, encode_instances(s.instances));
    if (s.routes)
      sql_->upsert.bind_blob(6, encode_routes(*s.routes));
    else
      sql_->upsert.bind_null(6);  // no hub has said
    sql_->upsert.run();
  }
  for (const auto& key : removed)
    sql_->remove.bind_text(1, key.name).bind_text(2, key.group).run();
  txn.commit();
}

std::vector<ConfigGroupSnapshot> SqliteSnapshotStore::load_config_groups() {
  sqlite::Statement select(db_,
                           "SELECT group_name, version, fetched_wall_ms, gone, entries "
                           "FROM config_groups ORDER BY group_name");
  std::vector<ConfigGroupSnapshot> groups;
  while (select.step())
    groups.push_back(config_group_from_row(select, db_.path()));
  return groups;
}

void SqliteSnapshotStore::save_config_groups(const std::vector<ConfigGroupSnapshot>& groups,
                                             const std::vector<std::string>& removed) {
  if (groups.empty() && removed.empty()) return;
  sqlite::Transaction txn(db_);
  for (const auto& g : groups) {
    sql_->upsert_config.bind_text(1, g.group)
        .bind_int64(2, sqlite::from_u64(g.version))
        .bind_int64(3, g.fetched_wall_ms)
        .bind_int64(4, g.gone ? 1 : 0)
        .bind_blob(5, encode_config_entries(g.entries))
        .run();
  }
  for (const auto& group : removed)
    sql_->remove_config.bind_text(1, group).run();
  txn.commit();
}

}  // namespace cascade::agent
