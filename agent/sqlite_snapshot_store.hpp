#pragma once
// SnapshotStore kept in SQLite: DATA_DIR/agent-snapshot.db.
//
// Schema version 3 (a version-1 or -2 file is upgraded in place; a file of any
// other version is refused with StoreError):
//   meta(key TEXT PRIMARY KEY, value INTEGER)    "schema_version"
//   services(name, group_name, version, fetched_wall_ms, instances BLOB,
//            routes BLOB NULL, PRIMARY KEY(name, group_name))
// `version` is the unsigned 64-bit service version stored bit for bit in a
// signed integer. `instances` is a MessagePack array of instances, each the
// array [id, address, weight, zone, status, {metadata}] exactly as an Instance
// is encoded on the wire (schemas/protocol-v1.md): a service's list is always
// read and written whole, so one blob per service is the natural unit.
// `routes` (version 2) is the hub's routing rules for the service, a
// MessagePack array of [text, priority, force, enabled] as a RouteRuleText is
// encoded on the wire; NULL when no hub had said (ServiceSnapshot::routes
// nullopt), an empty array when the hub holds none. Version 1 had no `routes`:
// the upgrade adds the column (ALTER TABLE) and its rows load with no rules.
//   config_groups(group_name TEXT PRIMARY KEY, version, fetched_wall_ms,
//                 gone INTEGER, entries BLOB)                    (version 3)
// `entries` is a MessagePack array of [key, value, origin tier, origin hub,
// origin version], one per key, the group read and written whole as a
// service's list is. Versions 1 and 2 had no config: the upgrade creates the
// table.
//
// Synchronous is NORMAL: a power cut may lose the latest save, which only
// makes the fallback list older, never wrong.

#include <filesystem>
#include <memory>

#include "cascade/agent/snapshot_store.hpp"
#include "cascade/common/sqlite_db.hpp"

namespace cascade::agent {

class SqliteSnapshotStore final : public SnapshotStore {
 public:
  // Creates `data_dir` when missing and opens (or creates) the snapshot file.
  // Throws StoreError naming the directory or file when either is unusable.
  static std::unique_ptr<SqliteSnapshotStore> open(const std::filesystem::path& data_dir);
  ~SqliteSnapshotStore() override;

  // Ordered by service name, then group. Throws StoreError on a corrupt row.
  std::vector<ServiceSnapshot> load_all() override;
  // Upserts first, then deletes: a key in both lists ends up deleted.
  void save(const std::vector<ServiceSnapshot>& services,
            const std::vector<proto::ServiceKey>& removed) override;

  // Ordered by group. Throws StoreError on a corrupt row.
  std::vector<ConfigGroupSnapshot> load_config_groups() override;
  // Upserts first, then deletes: a group in both lists ends up deleted.
  void save_config_groups(const std::vector<ConfigGroupSnapshot>& groups,
                          const std::vector<std::string>& removed) override;

  const std::filesystem::path& file() const { return db_.path(); }

 private:
  struct Statements;  // the prepared writes, defined with the SQL in the .cpp

  explicit SqliteSnapshotStore(const std::filesystem::path& file);

  sqlite::Db db_;  // declared first: statements must be finalized before it closes
  std::unique_ptr<Statements> sql_;
};

}  // namespace cascade::agent
