#pragma once
// HubStore kept in SQLite: one file, DATA_DIR/hub.db, written by one thread
// at a time (the hub's StoreWriter once the hub serves).
//
// Schema version 6 (created on first open). A file of versions 1 to 5 is
// upgraded in place: versions 2, 3 and 5 only add tables, created empty on
// open, version 4 adds columns with defaults, version 6 rebuilds the
// instances table keyed by row, and the file is then marked 6,
// so an older build refuses it rather than silently dropping the operator's
// marks, static instances, routing rules, key bindings or config. Any other
// version is refused with StoreError.
//   meta(key TEXT PRIMARY KEY, value INTEGER)    "epoch", "schema_version"
//   nodes(node_id PRIMARY KEY, epoch, digest)
//   instances(name, group_name, id, owner, address, weight, zone, status,
//             metadata BLOB, PRIMARY KEY(name, group_name, id))  up to version 5
//   services(name, group_name, version, PRIMARY KEY(name, group_name))
// Version 2 (operator operations, cascadectl):
//   instance_overrides(name, group_name, id, status, PRIMARY KEY(name, group_name, id))
//             how an instance is served whatever it reports (status 2,
//             OUT_OF_SERVICE, is the only override); kept while the instance
//             is absent
//   settings(key TEXT PRIMARY KEY, value INTEGER)  run-time switches that
//             override the configured defaults: "eviction_protection" (0/1),
//             "notify_switch" (0/1), "notify_share_percent" (1..100)
//   admin_audit(at_ms, actor, op, name, group_name, instance_id, detail, ok)
//             append-only, in rowid order: every operator operation, accepted
//             (ok 1) or refused (ok 0); at_ms is wall-clock ms since the Unix
//             epoch at commit; op is the AdminOp name ("add_static"); detail
//             is what the hub answered. Never pruned (operations are rare).
// Version 3 (routing rules, cascadectl set-routes):
//   routes(name, group_name, position, text, priority, force (0/1),
//          enabled (0/1), PRIMARY KEY(name, group_name, position))
//             a service's rules in the operator's order (position from 0),
//             rewritten whole on every change; a service without rules has
//             no rows
// Version 4 (keys): nodes.owner_key, the key a node is bound to ('' without
//   keys); admin_audit.key_name and admin_audit.peer, who sent the request.
// Version 5 (the config centre, docs/design-config.md):
//   config_entries(group_name, key, value BLOB, version,
//                  PRIMARY KEY(group_name, key))
//             this hub's own keys (not the upper tier's); version is the
//             group's version when the value was set, the entry's origin
//   config_history(id INTEGER PRIMARY KEY, group_name, version, key,
//                  old_value BLOB NULL, new_value BLOB NULL, author, wall_ms)
//             append-only, in id order: every change of this hub's keys
//             (NULL old: the key was not set; NULL new: removed); wall_ms is
//             the commit's wall time. Never pruned; a restart reads the last
//             kConfigHistoryRestored records per group (index by group, id).
//   Values are bytes, stored and read back as BLOBs, exactly.
// Version 6 (registration throughput, docs/benchmarks.md):
//   instances(row INTEGER PRIMARY KEY, name, group_name, id, owner, address,
//             weight, zone, status, metadata BLOB)
//             row: the key the hub's registry gave the instance when it was
//             made (1 .. 2^32 - 1, increasing; renumbered from 1 if the
//             counter runs out), so a registration appends; (name,
//             group_name, id) is unique by the registry's doing, not an
//             index. An older file's rows are numbered in key order.
// A static instance (add-static) is an `instances` row whose owner is
// "\x01static" (kStaticOwner in hub/registry.hpp: never a node id).
// Unsigned 64-bit values (epochs, digests, versions) are stored bit for bit in
// SQLite's signed integers, so values above 2^63 read as negative in a sqlite3
// shell. `status` is the numeric proto::InstanceStatus. `metadata` is a
// MessagePack map of string to string, the same shape as on the wire (see
// schemas/protocol-v1.md), so the file stays compact and needs no second codec
// library; an empty map is the single byte 0x80.

#include <filesystem>
#include <memory>
#include <optional>

#include "cascade/common/sqlite_db.hpp"
#include "cascade/hub/store.hpp"

namespace cascade::hub {

class SqliteHubStore final : public HubStore {
 public:
  // Creates `data_dir` when missing and opens (or creates) DATA_DIR/hub.db.
  // `mode` governs batches (apply); next_epoch() always commits with FULL.
  // Throws StoreError naming the directory or file when either is unusable.
  // `cache_mib`: SQLite's page cache (HubConfig::store_cache_mib).
  static std::unique_ptr<SqliteHubStore> open(const std::filesystem::path& data_dir,
                                              sqlite::Synchronous mode,
                                              std::size_t cache_mib = kDefaultCacheMib);
  static constexpr std::size_t kDefaultCacheMib = 8;
  // The page cache SQLite was given, in KiB (PRAGMA cache_size).
  std::size_t cache_kib();
  ~SqliteHubStore() override;

  std::uint64_t next_epoch() override;
  HubSnapshot load() override;
  void apply(const PersistBatch& batch) override;

  // The last `limit` audit records, oldest first (tools and tests).
  std::vector<AuditRecord> audit_log(std::size_t limit);
  // One page of the audit log, newest first: at most `limit` records older
  // than the one with id `before` (nullopt: from the newest).
  std::vector<AuditEntry> audit_page(std::optional<std::int64_t> before, std::size_t limit);

  const std::filesystem::path& file() const { return db_.path(); }
  // The file open() opens in `data_dir`.
  static std::filesystem::path file_in(const std::filesystem::path& data_dir);

 private:
  struct Statements;  // the prepared writes, defined with the SQL in the .cpp

  SqliteHubStore(const std::filesystem::path& file, sqlite::Synchronous mode,
                 std::size_t cache_mib);
  std::uint64_t increment_epoch();
  void write_nodes(const PersistBatch& batch);
  void write_instances(const PersistBatch& batch);
  void write_services(const PersistBatch& batch);
  void write_admin(const PersistBatch& batch);
  void write_config(const PersistBatch& batch);
  std::vector<NodeRecord> read_nodes();
  InstanceRows read_instances();
  std::vector<ServiceRecord> read_services();
  std::vector<OverrideRecord> read_overrides();
  std::vector<SettingRecord> read_settings();
  std::vector<RouteSetRecord> read_routes();
  std::vector<ConfigEntryRecord> read_config_entries();
  std::vector<ConfigHistoryRecord> read_config_history();

  sqlite::Db db_;  // declared first: statements must be finalized before it closes
  sqlite::Synchronous mode_;
  std::unique_ptr<Statements> sql_;
};

// audit_page() on any connection to a hub's file (the store's, or a reader's
// of its own: hub/audit_reader.hpp).
std::vector<AuditEntry> read_audit_page(sqlite::Db& db, std::optional<std::int64_t> before,
                                        std::size_t limit);

}  // namespace cascade::hub
