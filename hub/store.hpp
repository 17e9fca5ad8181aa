#pragma once
// What the hub persists, and the interface of the store that persists it.
//
// The core never touches the store: it marks what changed, and the server
// takes a PersistBatch (current values of everything dirty, coalesced) every
// flush interval and hands it to the store in one transaction. Lease renewals
// are not writes. Replies that acknowledge a state change are sent only after
// the batch holding that change has committed (see hub/hub_server.cpp).

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/instance_rows.hpp"

namespace cascade::hub {

struct NodeRecord {
  std::string node_id;
  std::uint64_t epoch = 0;
  std::uint64_t digest = 0;
  // The name of the key the node is bound to (docs/security.md): only that
  // key beats, changes or deregisters it while it lives. "" without keys.
  std::string owner_key{};
  bool operator==(const NodeRecord&) const = default;
};

struct InstanceRecord {
  proto::ServiceKey service;
  proto::Instance instance;
  std::string owner;  // node id of the agent that registered it; kStaticOwner: add-static
  // The row's key, given by the hub's registry when the instance was made
  // (InstanceSlot::row) and kept while it lives: the store writes and
  // deletes by it, so a registration appends a row at the end of the table
  // rather than into the middle of an index ordered by random ids.
  std::uint32_t row = 0;
  bool operator==(const InstanceRecord&) const = default;
};

struct InstanceKeyRecord {
  proto::ServiceKey service;
  std::string id;
  bool operator==(const InstanceKeyRecord&) const = default;
};

struct ServiceRecord {
  proto::ServiceKey service;
  std::uint64_t version = 0;
  bool operator==(const ServiceRecord&) const = default;
};

// An operator's override of how an instance is served, by (service, id),
// whether or not the instance is registered (cascadectl mark-out-of-service).
struct OverrideRecord {
  proto::ServiceKey service;
  std::string id;
  // The status served instead of the reported one; OUT_OF_SERVICE is the only
  // override today.
  proto::InstanceStatus status = proto::InstanceStatus::kOutOfService;
  bool operator==(const OverrideRecord&) const = default;
};

// A hub setting an operator changed at run time; it overrides the configured
// default from then on, across restarts.
struct SettingRecord {
  std::string key;  // one of the kSetting* names below
  std::int64_t value = 0;
  bool operator==(const SettingRecord&) const = default;
};
inline constexpr std::string_view kSettingEvictionProtection = "eviction_protection";   // 0 or 1
inline constexpr std::string_view kSettingNotifySwitch = "notify_switch";               // 0 or 1
inline constexpr std::string_view kSettingNotifySharePercent = "notify_share_percent";  // 1..100
// Not an operator's: the longest interval stretch a node may hold (1, 2, 4,
// ...; hub/granted_stretch.hpp), so that a restart's grace covers it.
inline constexpr std::string_view kSettingGrantedStretch = "granted_stretch";

// A service's whole set of routing rules (cascadectl set-routes), in the
// order the operator gave them; empty: the service has none (its rows go).
struct RouteSetRecord {
  proto::ServiceKey service;
  std::vector<proto::RouteRuleText> routes{};
  bool operator==(const RouteSetRecord&) const = default;
};

// One operator operation, accepted or refused (append-only audit log).
struct AuditRecord {
  WallMs at_ms = 0;  // when it committed; stamped by the store from PersistBatch::wall_ms
  std::string actor;
  std::string op;                     // proto::to_string(AdminOp): "mark_out_of_service", ...
  proto::ServiceKey service{"", ""};  // empty for the switch operations
  std::string instance_id;
  std::string detail;  // what was done, or why it was refused (the reply's message)
  bool ok = false;
  // Schema 4: the key that sent the request (authoritative; `actor` is what
  // the tool declared, e.g. user@host), "" on a hub without keys; and the
  // peer's network address.
  std::string key{};
  std::string peer{};
  bool operator==(const AuditRecord&) const = default;
};

// An audit record as the log holds it: with its place in the log (its row
// id: increasing, never reused), by which a reader pages through it.
struct AuditEntry {
  std::int64_t id = 0;
  AuditRecord record;
  bool operator==(const AuditEntry&) const = default;
};

// One change of one of this hub's config keys (docs/design-config.md), as
// the history shows it and the store keeps it (append-only, schema 5).
struct ConfigHistoryRecord {
  std::string group;
  std::uint64_t version = 0;  // the group's served version the change made
  std::string key;
  std::optional<std::string> old_value;  // nullopt: the key was not set here
  std::optional<std::string> new_value;  // nullopt: removed
  std::string author;
  // When it committed: 0 until the batch that carries it is taken with the
  // commit's wall time (HubCore::take_persist_batch).
  WallMs wall_ms = 0;
  bool operator==(const ConfigHistoryRecord&) const = default;
};

// One of this hub's own config keys as the store keeps it (schema 5). Its
// origin is this hub, at `version`.
struct ConfigEntryRecord {
  std::string group;
  std::string key;
  std::string value;          // bytes
  std::uint64_t version = 0;  // the group's version when it was set (the origin version)
  bool operator==(const ConfigEntryRecord&) const = default;
};

// History records per group a snapshot holds, newest kept: what a hub keeps
// in memory by default (ConfigLimits::history_per_group), how far a rollback
// after a restart reaches. The store keeps them all.
inline constexpr std::size_t kConfigHistoryRestored = 256;

// Everything that changed since the previous batch. Upserts carry current
// values; deletes carry keys. A key appears in at most one list per batch.
struct PersistBatch {
  std::vector<NodeRecord> node_upserts;
  std::vector<std::string> node_deletes;
  InstanceRows instance_upserts;                // packed: see instance_rows.hpp
  std::vector<std::uint32_t> instance_deletes;  // rows
  // The registry gave its instances new rows (its row counter ran out):
  // every instance row goes before the upserts, which hold them all.
  bool instances_renumbered = false;
  std::vector<ServiceRecord> service_versions;
  // Services the hub freed (no instance, rule or consumer left): their
  // version rows go, so a restart does not bring them back.
  std::vector<proto::ServiceKey> service_deletes{};
  std::vector<OverrideRecord> override_upserts;
  std::vector<InstanceKeyRecord> override_deletes;
  std::vector<SettingRecord> settings;       // current values of the changed settings
  std::vector<RouteSetRecord> route_sets{};  // current rule sets of the changed services
  std::vector<AuditRecord> audit;            // appended in order
  // This hub's config changes, in the order they were made (a key may change
  // more than once): each sets or removes its key's entry row and appends a
  // history row, in that order.
  std::vector<ConfigHistoryRecord> config_changes{};
  // Wall-clock time of the commit, read by the server just before apply()
  // (the core reads no clock): the time of every audit record and config
  // change in the batch, as the store writes them.
  WallMs wall_ms = 0;
  // Rows the batch writes (upserts and deletes), its size in metrics.
  std::size_t rows() const {
    return node_upserts.size() + node_deletes.size() + instance_upserts.size() +
           instance_deletes.size() + service_versions.size() + service_deletes.size() +
           override_upserts.size() + override_deletes.size() + settings.size() + route_sets.size() +
           audit.size() + config_changes.size();
  }
  bool empty() const {
    return !instances_renumbered && node_upserts.empty() && node_deletes.empty() &&
           instance_upserts.empty() && instance_deletes.empty() && service_versions.empty() &&
           service_deletes.empty() && override_upserts.empty() && override_deletes.empty() &&
           settings.empty() && route_sets.empty() && audit.empty() && config_changes.empty();
  }
};

// The state a restarted hub starts from.
struct HubSnapshot {
  std::vector<NodeRecord> nodes;
  InstanceRows instances;  // packed: a million rows are one buffer, not ten million blocks
  std::vector<ServiceRecord> services;
  std::vector<OverrideRecord> overrides;
  std::vector<SettingRecord> settings;
  std::vector<RouteSetRecord> routes{};  // services with at least one rule
  // This hub's own config keys, by group and key, each with its origin version.
  std::vector<ConfigEntryRecord> config_entries{};
  // Per group (by name), its last kConfigHistoryRestored changes, oldest first.
  std::vector<ConfigHistoryRecord> config_history{};
  // The audit log is not part of the snapshot: nothing is restored from it.
};

// Durable storage of one hub's registry. Used from the hub's owning thread only.
class HubStore {
 public:
  virtual ~HubStore() = default;
  // Increments and durably stores the hub epoch; returns the new value (1 on
  // first start). Called once at start, before the hub serves anything.
  virtual std::uint64_t next_epoch() = 0;
  virtual HubSnapshot load() = 0;
  // Applies one batch atomically. Throws StoreError on failure.
  virtual void apply(const PersistBatch& batch) = 0;
};

}  // namespace cascade::hub
