#pragma once
// The hub's service table: instances per service, service versions, and the
// recent-change log that turns "I hold version v" into a delta.
//
// Versions. A version is (hub_epoch << 40) | counter. The epoch is stored
// durably before the hub serves anything, so every version issued by this
// incarnation is larger than any version an earlier incarnation issued, even
// one that was never written to disk before a crash. A client's held version
// is trusted for a delta only if this hub actually issued it for this service
// (it is the log floor or appears in the log); anything else gets a full list.
//
// Transactions. All changes made while handling one message share one new
// version per touched service, so a full registration set of N instances
// moves each service by one version, not N.

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/compact_text.hpp"
#include "cascade/hub/instance_entry.hpp"
#include "cascade/hub/instance_map.hpp"

namespace cascade::hub {

// The owner of the instances an operator added with add-static (no agent, no
// lease). Never a node id: node ids are printable (the decoder refuses control
// characters), this one starts with 0x01. Written as is to the store's
// `instances.owner` column.
inline constexpr std::string_view kStaticOwner = "\x01static";

struct ChangeRecord {
  std::uint64_t version;
  // "" (never an instance id): the routing rules changed. 39 characters
  // inside, so a UUID costs no heap block: a service keeps up to a quarter of
  // its list here, ~10 bytes an instance saved at a million.
  BasicCompactText<40> instance_id;
};

struct ServiceEntry {
  explicit ServiceEntry(proto::ServiceKey k) : key(std::move(k)) {}
  const proto::ServiceKey key;
  std::uint64_t version = 0;
  // By id (full lists come out sorted). An instance's slot stays where it is
  // while the instance is registered (nodes hold pointers to it).
  InstanceMap instances;
  std::deque<ChangeRecord> log;   // ascending versions
  std::uint64_t log_floor = 0;    // changes up to and including this version are not in the log
  std::uint64_t txn = 0;          // transaction that last bumped the version
  std::uint32_t up = 0;           // served with status UP, kept by Registry (read on every beat)
  std::uint32_t isolated = 0;     // of all instances, served as isolated (kept by Registry)
  std::uint32_t unconfirmed = 0;  // served as unconfirmed (kept by Registry)
  std::uint32_t out_of_service =
      0;  // carrying an operator's out-of-service mark (kept by Registry)
  // The routing rules an operator set for the service here (cascadectl
  // set-routes), served with it to its consumers; kept while it has no instances.
  std::vector<proto::RouteRuleText> routes{};
  // The version issued when `routes` last changed: a delta from an older
  // version carries them. 0 after a restore: the restored version covers them.
  std::uint64_t routes_version = 0;
  // The version this hub gave its composition of the local list (at version
  // `local`) with an upper tier's (at `upper`): issued by the registry like
  // any version, with the top bit set, so a composed list's versions grow
  // and a consumer can tell a newer list from one a late message brings.
  struct Composition {
    std::uint64_t local = 0;
    std::uint64_t upper = 0;
    std::uint64_t version = 0;
  };
  Composition composed{};
  // Reclaiming (Registry::reclaim): pointers to the entry waiting in the
  // registry's change lists, which keep it from being freed; and whether it
  // is in the reclaim queue. Bookkeeping of the lists, so mutable through
  // the const pointers they hold.
  mutable std::uint32_t waiting = 0;
  bool reclaim_noted = false;
  bool noted_again = false;  // noted while queued: its grace starts again when it falls due
  std::uint32_t up_count() const { return up; }
};

// Instances of all services by what consumers are served, kept beside each
// service's own counts by the same helper (so the two cannot drift apart):
// the hub's status reads them on the serving thread without walking the
// registry.
struct InstanceTotals {
  std::uint64_t up = 0;                // served with status UP
  std::uint64_t isolated = 0;          // served as isolated (by this hub or a lower tier)
  std::uint64_t unconfirmed = 0;       // served as unconfirmed
  std::uint64_t out_of_service = 0;    // present and carrying an operator's out-of-service mark
  std::uint64_t static_instances = 0;  // present and owned by kStaticOwner (add-static)
  bool operator==(const InstanceTotals&) const = default;
};

// An instance whose row must be written to the store. The slot stays valid
// until the registry changes again.
struct DirtySlot {
  const ServiceEntry* service;
  const InstanceSlot* slot;
};

// A (service, instance id) pair whose content changed, for the uplink.
struct DirtyInstance {
  const ServiceEntry* service;
  std::string id;
  auto operator<=>(const DirtyInstance&) const = default;
};

class Registry {
 public:
  Registry(std::uint64_t hub_epoch, std::size_t change_log_capacity);

  // Starts a transaction: the next change to each service issues a new version.
  void begin_txn() { ++txn_; }
  // A version larger than every version issued before (of any service),
  // for a list composed outside the registry (a cross-tier list).
  std::uint64_t issue_version() { return version_base_ | ++version_counter_; }

  // Finds or creates; a created entry is noted for reclaiming (it may stay empty).
  ServiceEntry& service(const proto::ServiceKey& key);
  ServiceEntry* find(const proto::ServiceKey& key);
  const ServiceEntry* find(const proto::ServiceKey& key) const;

  // Adds or replaces an instance in `node`'s name. A node that reports an
  // instance another node owns, with the same content, becomes a claimant
  // (nothing changes for clients); different content takes the instance over
  // and the previous owner becomes a claimant. A static instance (owner
  // kStaticOwner) is never taken over: the operator's definition is served
  // and the reporting node only claims it, taking it when it is removed.
  // Returns the instance's slot (where it stays while registered) and
  // whether anything changed.
  struct Upserted {
    const InstanceSlot* slot;
    bool changed;
  };
  Upserted upsert(ServiceEntry& svc, const proto::Instance& instance, std::string_view node);
  // `node` no longer reports the instance. The owner's drop hands it to a
  // claimant if there is one; otherwise it is removed. True if removed. A
  // claimant whose content may differ lands in `ask_again`: its set must be
  // read again to learn what it reports.
  bool remove(ServiceEntry& svc, std::string_view id, std::string_view node,
              std::string* ask_again = nullptr);
  // Sets this hub's verdict about an instance: a change of what consumers
  // see, so it issues a version and reaches the uplink like any change. It is
  // not persisted (a restarted hub starts without isolations). True if changed.
  bool set_verdict(ServiceEntry& svc, std::string_view id, Verdict verdict);

  // Operator overrides (cascadectl mark-out-of-service), by (service, id):
  // kept whether or not the instance is present, and applied whenever it is
  // (a registration, a return after expiry, a restore). A change of what a
  // present instance is served as issues a version and is pushed like a
  // health change. The caller persists the overrides. True if the override
  // changed.
  bool set_out_of_service(const proto::ServiceKey& key, const std::string& id, bool out_of_service);
  bool is_marked_out_of_service(const proto::ServiceKey& key, const std::string& id) const {
    // Marks are rare: most registries never build the key.
    return !out_of_service_.empty() && out_of_service_.contains(proto::InstanceKey{key, id});
  }
  const std::set<proto::InstanceKey>& out_of_service_marks() const { return out_of_service_; }

  // Replaces the service's routing rules: a change of what consumers are
  // served, so it issues a version (within the current transaction) and
  // consumers get the rules with their next update. Not sent upstream: rules
  // live at the hub a consumer beats to. The caller persists them and pushes.
  // True if the rules changed.
  bool set_routes(ServiceEntry& svc, std::vector<proto::RouteRuleText> routes);

  // The instance of `slot` as `node` last reported it, if it reports it
  // (owner or claimant) and the registry knows what it reported.
  static std::optional<proto::Instance> reported_by(const InstanceSlot& slot,
                                                    std::string_view node);

  // Services whose list as consumers are served it changed since the last
  // call (every change that issues a version: an instance added, changed or
  // removed, its health, an operator's mark, the routing rules): worth a
  // push between beats. Deduplicated.
  std::vector<const ServiceEntry*> take_served_changes();

  // Instances whose content changed (added, changed, removed) since the last
  // call, for the hub's uplink; recorded only after track_changes().
  void track_changes() { track_changes_ = true; }
  std::vector<DirtyInstance> take_changes();

  // What a client holding `held_version` needs; nullopt when it is current.
  std::optional<proto::ServiceUpdate> update_for(const ServiceEntry& svc,
                                                 std::uint64_t held_version) const;
  proto::ServiceUpdate full_update(const ServiceEntry& svc, std::uint64_t from_version) const;

  // Restores persisted state without issuing versions or logging changes.
  // Operator marks set before apply to the restored instances.
  // `row`: the instance's row in the store; 0 (a store that does not number
  // rows: the SQLite store always does) gives it a new one, written at the
  // next batch.
  void restore_instance(const proto::ServiceKey& key, const proto::Instance& instance,
                        std::string_view owner, std::uint32_t row);
  // After the restore: rows past InstanceSlot::kMaxRow (a store written when
  // rows had more bits) give every instance a new row.
  void settle_restored_rows();
  // A stored row nothing restores (an orphan): deleted at the next batch,
  // and never given to another instance.
  void forget_row(std::uint32_t row);
  void restore_version(const proto::ServiceKey& key, std::uint64_t version);
  void restore_routes(const proto::ServiceKey& key, std::vector<proto::RouteRuleText> routes);
  // Gives a fresh version to restored services that have instances (or
  // rules) but no persisted version (a crash between the two writes), so
  // clients see them.
  void stamp_unversioned();

  std::size_t service_count() const { return services_.size(); }
  // Entries nothing was ever registered in (no version yet): consumers'
  // waits for a service, cross-tier lists, lookups. O(1).
  std::size_t unregistered_count() const { return unregistered_; }
  std::size_t instance_count() const { return instance_count_; }
  // O(1): kept by every change (upsert, remove, verdicts, marks, restores).
  const InstanceTotals& totals() const { return totals_; }
  // For tests and diagnostics only, O(instances): recounts every service's
  // counts, the totals and the instance count from the entries, and names
  // the first that differs from the running value; nullopt when all agree.
  std::optional<std::string> recount_mismatch() const;
  template <typename Fn>
  void for_each_service(Fn&& fn) const {
    for (const auto& [key, svc] : services_)
      fn(*svc);
  }

  // Reclaiming. An entry without instances or routing rules that nobody
  // follows is freed, so a registry that sees many distinct names over its
  // life (deploys, tests, cross-tier lookups of services that came and went)
  // holds only the live ones. An entry is noted when it may have become
  // unused (created, its last instance or rule gone, or, through
  // note_maybe_unused, its last consumer gone), stamped with a grace by
  // stamp_noted() at the end of the event that noted it, and freed by
  // reclaim() once the grace ran out, if it is still unused: a consumer's
  // first query and first beat, or an agent's restart, find the entry and
  // its version.
  void note_maybe_unused(const proto::ServiceKey& key);
  // Entries noted since the last call, if still without instances and
  // rules, are due for reclaim() at now + ttl (one that changes or is noted
  // again meanwhile gets a new grace when it falls due: freed at least one
  // grace and at most two after it was last used).
  void stamp_noted(MonoTime now, Duration ttl);
  // Frees at most `limit` entries whose grace ran out by `now` that are
  // still without instances and rules and wait in no change list.
  // `let_go(svc)` asks the holder of the other pointers to the entry (the
  // hub's consumers and push gate): false keeps it (followed: noted again
  // when its last consumer leaves), true means those pointers are dropped.
  // Returns how many were freed; their keys come out of take_reclaimed().
  template <typename LetGo>
  std::size_t reclaim(MonoTime now, std::size_t limit, LetGo&& let_go);
  // When reclaim() next has an entry due (nullopt: none stamped).
  std::optional<MonoTime> next_reclaim() const;
  // Persistence: services freed since the last call whose rows must go, or
  // whose delete failed to commit (requeued through mark_dirty).
  std::vector<proto::ServiceKey> take_reclaimed();

  // Persistence: marks an instance (or, without an id, the service version)
  // for rewriting; the service version of a freed service is its delete.
  void mark_dirty(const proto::ServiceKey& key, const std::optional<std::string>& id);
  // Persistence: the instances added or changed since the last call, once
  // each (a removed one's row delete comes from take_erased_rows()).
  std::vector<DirtySlot> take_dirty_instances();
  std::vector<const ServiceEntry*> take_dirty_services();
  // Persistence: the rows of the instances removed since the last call, and
  // whether every row was renumbered meanwhile (then all instances are dirty
  // and the old rows all go). Requeued when their batch failed to commit.
  std::vector<std::uint32_t> take_erased_rows();
  bool take_renumbered() { return std::exchange(renumbered_, false); }
  void requeue_rows(std::span<const std::uint32_t> erased, bool renumbered);

 private:
  void record_change(ServiceEntry& svc, std::string_view id);
  // Lists the slot's row for the next batch, unless it waits there already.
  void list_dirty(ServiceEntry& svc, InstanceSlot& slot);
  // Takes the slot out of its service; a listed one lives until the list
  // is taken.
  void erase_slot(ServiceEntry& svc, InstanceSlot* slot);
  // Issues the transaction's version of `svc` (once per transaction) and logs
  // `id` under it; bounded by the log capacity.
  void log_change(ServiceEntry& svc, std::string_view id);
  bool can_delta_from(const ServiceEntry& svc, std::uint64_t held) const;
  void note(ServiceEntry& svc);
  // Gives a new instance its row: the next of the counter, which ends at
  // 2^32 - 1 (4 billion instances made since the store was created); then
  // every live instance is numbered again from 1.
  void assign_row(InstanceSlot& slot);
  void renumber_rows();
  // Pops the next due entry of the reclaim queue, nullptr when none is due.
  ServiceEntry* next_due(MonoTime now);
  bool reclaimable(const ServiceEntry& svc) const {
    return svc.instances.empty() && svc.routes.empty() && svc.waiting == 0;
  }

  std::uint64_t version_base_;
  std::uint64_t version_counter_ = 0;
  std::size_t log_capacity_;
  std::uint64_t txn_ = 1;
  std::size_t instance_count_ = 0;
  InstanceTotals totals_;
  InstanceInterner interner_;
  std::unordered_map<proto::ServiceKey, std::unique_ptr<ServiceEntry>> services_;
  struct Listed {
    const ServiceEntry* service;
    InstanceSlot* slot;
  };
  std::vector<Listed> dirty_instances_;
  std::vector<InstanceMap::Detached> detached_;  // removed while listed
  std::vector<const ServiceEntry*> dirty_services_;
  std::uint32_t last_row_ = 0;  // the highest row given
  std::vector<std::uint32_t> erased_rows_;
  bool renumbered_ = false;
  bool track_changes_ = false;
  std::vector<const ServiceEntry*> served_changes_;
  std::vector<DirtyInstance> changes_;
  std::set<proto::InstanceKey> out_of_service_;
  // Entries noted since the last stamp_noted(), then the queue they wait in
  // for their grace (stamped in order, so due times ascend), with the
  // version each had when stamped: an entry changed since gets a new grace.
  std::vector<proto::ServiceKey> noted_;
  struct Noted {
    MonoTime due;
    proto::ServiceKey key;
    std::uint64_t version;
  };
  std::deque<Noted> reclaim_queue_;
  std::vector<proto::ServiceKey> reclaimed_;
  std::size_t unregistered_ = 0;
};

template <typename LetGo>
std::size_t Registry::reclaim(MonoTime now, std::size_t limit, LetGo&& let_go) {
  std::size_t freed = 0;
  while (freed < limit) {
    ServiceEntry* svc = next_due(now);
    if (svc == nullptr) break;
    if (!reclaimable(*svc)) {
      // Still in a change list: tried again after another grace. Else in
      // use again (an instance, rules): noted when that ends.
      if (svc->waiting > 0 && svc->instances.empty() && svc->routes.empty()) note(*svc);
      continue;
    }
    if (!let_go(std::as_const(*svc))) continue;
    if (svc->version == 0) --unregistered_;
    reclaimed_.push_back(svc->key);
    services_.erase(reclaimed_.back());  // `svc` is gone after this line
    ++freed;
  }
  return freed;
}

}  // namespace cascade::hub
