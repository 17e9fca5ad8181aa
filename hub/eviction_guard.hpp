#pragma once
// Protection against mass eviction: for each node whose lease ran out, decides
// whether the hub drops it now or holds it a while (the core keeps it listed,
// marked unconfirmed).
//
// Why: a network hiccup (a switch, a proxy, a subnet, a lower-tier hub cut
// off) makes many leases run out at once, and dropping them all empties the
// registry for every consumer. Eureka's self-preservation freezes ALL expiry
// when renewals fall below a threshold derived from an assumed 30 s interval,
// and can stay on for ever (Eureka #1247, #1073). This guard instead caps what
// one window may expire, per service and registry-wide, recognises a
// partitioned source, and is never stuck: every hold ends.
//
// Rules, checked in this order when a lease runs out:
// 1. Disabled, or a node without instances: expire (nothing to protect).
// 2. Partition: the node's source (what its nodes fail together through: a
//    proxy, a /24 subnet, or the node itself when it is a lower-tier hub) has
//    at least `min_source_nodes` nodes and lost at least
//    `source_partition_share` of them (held now, or expired within the
//    window, this one included): the source is treated as cut off, not dead,
//    and its expirations are held (kHoldPartition) while any of its nodes is
//    held for that reason. The first losses of a source expire: until the
//    share is reached they cannot be told from single deaths.
// 3. Budget: expiring the node would take one of its services, or the
//    registry, over its share of instances expired within the sliding window
//    (kHoldBudget). The share is of the size before the window's expirations
//    (instances now + instances expired within the window), not of the current
//    size: the current size shrinks by exactly what each expiry adds to the
//    window, so a cap on it would ratchet down during the very event it is
//    meant to pace (20% of 10 would let 1 go, not 2); and a sliding window has
//    no start to snapshot. Registrations during the window raise the base, as
//    they should. Sizes come from the requests (the registry's truth when
//    asked), minus what the guard expired since.
//    Tiny services (fewer than `min_service_instances_for_cap` instances
//    before the window) are not capped per service: a 20% share of them is
//    less than one instance, so a cap would hold every real death until
//    max_hold and serve dead instances for minutes, while a tiny service
//    cannot empty the registry; the registry cap and the partition rule still
//    cover them. The same goes for a registry below
//    `min_registry_instances_for_cap`.
//    A lower-tier hub whose lease runs out is one node with many instances:
//    the per-service cap holds it. A node bigger than its share of a service
//    never fits; only its return or max_hold ends its hold, so a dead
//    lower-tier hub stays listed at most max_hold.
// 4. Otherwise expire. An expiry (here or from due()) counts the node's
//    instances against each of its services and the registry for `window`.
//
// Never stuck: due() releases a budget-held node as soon as the window has
// room again (a real mass death drains at most a share per window), any held
// node after `max_hold`, and everything once disabled. A held node that beats
// again is un-held and never expired. Graceful removal is never held and
// consumes no budget.
//
// Memory: nothing per node unless it is held. The core keeps each node's
// source and passes it in; the guard counts the members of each shared
// source (a node that is its own source, "", needs no entry: one node is
// never judged partitioned). Sources without nodes and services without held
// nodes or expirations in the window are forgotten; expiry records live one
// window.
//
// Sans-IO: time comes in as `now`, which never moves backwards. Thread-safety:
// none; the hub core's owning thread drives it.

#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <variant>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/common/string_map.hpp"

namespace cascade::hub {

struct EvictionGuardConfig {
  bool enabled = true;
  Duration window{60'000};          // ms; an expiry counts against the budgets this long, > 0
  double max_service_share = 0.2;   // of a service's instances expired per window, (0, 1]
  double max_registry_share = 0.2;  // of the registry's instances expired per window, (0, 1]
  std::size_t min_service_instances_for_cap = 5;   // smaller services: no per-service cap
  std::size_t min_registry_instances_for_cap = 5;  // smaller registries: no registry cap
  std::size_t min_source_nodes = 4;     // smaller sources are never judged partitioned, >= 2
  double source_partition_share = 0.5;  // of a source's nodes lost: partitioned, (0, 1]
  Duration max_hold{600'000};           // ms a node is held at most, > 0
};

// "" when the configuration is acceptable, else what is wrong with it.
std::string check_eviction_guard_config(const EvictionGuardConfig& config);

// One service a node provides, with sizes as the registry holds them now.
struct ServiceShare {
  proto::ServiceKey service{};
  std::uint32_t node_instances = 0;     // this node's instances of the service
  std::uint32_t service_instances = 0;  // all of the service's, this node's and held ones included
};

struct ExpiryRequest {
  std::string node_id{};
  std::string_view source{};  // where the core last counted the node (on_node_seen's `to`)
  std::vector<ServiceShare> services{};
  std::size_t registry_instances = 0;  // all instances in the registry, this node's included
};

enum class ExpiryVerdict : std::uint8_t {
  kExpire,         // drop the node now
  kHoldBudget,     // expiring it would exceed a service's or the registry's share
  kHoldPartition,  // its source looks cut off, not dead
};
std::string_view verdict_name(ExpiryVerdict verdict);

struct GuardCounters {
  std::uint64_t service_cap_holds = 0;   // expiries a per-service cap held back
  std::uint64_t registry_cap_holds = 0;  // expiries the registry cap held back
  std::uint64_t partition_holds = 0;     // expiries held because the source is partitioned
  std::uint64_t returned = 0;            // held nodes that beat again (never expired)
  std::uint64_t released_budget = 0;     // held nodes due() expired once the window had room
  std::uint64_t released_max_hold = 0;   // ... after max_hold
  std::uint64_t released_disabled = 0;   // ... because the guard was disabled
};

struct PartitionedSource {
  std::string source{};
  std::size_t nodes = 0;  // nodes of the source still known, held ones included
  std::size_t held = 0;   // of which held for the partition
};

struct GuardStats {
  std::size_t held_nodes = 0;
  std::size_t held_instances = 0;
  std::size_t held_for_budget = 0;
  std::size_t held_for_partition = 0;
  std::vector<PartitionedSource> partitioned_sources{};  // by source name
  std::size_t window_expired_nodes = 0;                  // expired within the current window
  std::size_t window_expired_instances = 0;
  GuardCounters counters{};
};

// What the guard can tell in O(1), from counts it keeps as holds begin and
// end: what the hub's status reads on the serving thread.
struct GuardGauges {
  std::size_t held_nodes = 0;
  std::size_t held_instances = 0;
  std::size_t held_for_budget = 0;
  std::size_t held_for_partition = 0;
  std::size_t partitioned_sources = 0;  // sources with a node held for a partition
  GuardCounters counters{};
};

class EvictionGuard {
 public:
  // `config` must pass check_eviction_guard_config (asserted); use create()
  // for configuration that comes from a user.
  explicit EvictionGuard(EvictionGuardConfig config);
  static std::variant<EvictionGuard, std::string> create(EvictionGuardConfig config);

  // A node beat through `to`, having been counted in `from` until now ("" =
  // the node is its own source; a new node comes from ""). The core keeps
  // each node's source and must pass back what it last passed as `to`.
  // Returns true when the node was held: it is un-held and the core clears
  // its unconfirmed marks. Only a change of source and a beat of a held node
  // change anything, so the core may skip the call otherwise.
  bool on_node_seen(std::string_view node_id, std::string_view from, std::string_view to);
  // Graceful deregistration or admin removal of a node counted in `source`:
  // forgotten, never held, and no budget consumed (a held node is dropped
  // from the hold too).
  void on_node_removed(std::string_view node_id, std::string_view source);
  // The node's lease ran out. On kExpire the core drops it now (the guard has
  // forgotten it: no on_node_removed follows); on a hold it keeps it until
  // due() (likewise forgotten) or a beat. Asking again
  // about a held node returns its hold without change.
  ExpiryVerdict on_lease_expired(MonoTime now, const ExpiryRequest& request);

  // Held nodes that must be expired now, at most `max`, oldest hold first.
  // They are forgotten here and count against the budgets; the core drops them.
  std::vector<std::string> due(MonoTime now, std::size_t max);
  // When due() may next return something; nullopt when nothing is held.
  // A time in the past means "call due() now".
  std::optional<MonoTime> next_deadline() const;

  // Disabling makes every later expiry kExpire and due() release all holds.
  void set_enabled(bool enabled);
  bool enabled() const { return config_.enabled; }
  bool is_held(std::string_view node_id) const;
  // The held nodes, oldest hold first: fn(node_id, held_since, reason) until
  // it returns false. Costs what it lists (the hub's admin API).
  template <typename Fn>
  void for_each_held(Fn&& fn) const {
    auto budget = held_budget_.begin();
    auto partition = held_partition_.begin();
    while (budget != held_budget_.end() || partition != held_partition_.end()) {
      const bool take_budget = partition == held_partition_.end() ||
                               (budget != held_budget_.end() && budget->since <= partition->since);
      const Held& held = take_budget ? *budget++ : *partition++;
      if (!fn(std::string_view(held.node_id), held.since, held.reason)) return;
    }
  }
  // O(1): safe to read on a serving thread however much the guard holds.
  GuardGauges gauges() const;
  // The full picture, O(sources + expiries in the window): lists the
  // partitioned sources and counts the window's expiries. Not for a serving
  // thread's hot path.
  GuardStats stats(MonoTime now) const;
  // For tests and diagnostics only, O(sources + held nodes): recounts the
  // partitioned sources and the held instances, and names the first running
  // count that differs; nullopt when both agree.
  std::optional<std::string> recount_mismatch() const;
  const EvictionGuardConfig& config() const { return config_; }

  // Nodes counted in `source` (held ones included); 0 for "".
  std::size_t members(std::string_view source) const;
  // Nodes counted in any shared source, O(sources): for recounts.
  std::size_t total_members() const;
  // Sizes of the bookkeeping, to check that it stays bounded.
  std::size_t tracked_holds() const { return held_index_.size(); }  // nothing per unheld node
  std::size_t tracked_sources() const { return sources_.size(); }
  std::size_t tracked_services() const { return budgets_.size(); }

 private:
  struct SourceState {
    std::size_t members = 0;            // nodes seen through it, held ones included
    std::size_t held = 0;               // of which held, any reason
    std::size_t held_partition = 0;     // of which held for a partition
    std::size_t expired_in_window = 0;  // its nodes expired within the window
  };
  using Sources = std::map<std::string, SourceState, std::less<>>;
  // Holds and expiry records point at a source's entry (a map node stays put,
  // even when the guard is moved; an end() iterator would not).
  using SourceEntry = Sources::value_type;
  struct ServiceBudget {
    std::size_t size = 0;     // instances as last reported, minus those expired since
    std::size_t expired = 0;  // instances expired within the window
    std::size_t refs = 0;     // expiry records and held nodes pointing here
  };
  using Budgets = std::map<proto::ServiceKey, ServiceBudget>;
  struct Share {
    Budgets::iterator budget;
    std::uint32_t instances = 0;
  };
  // What one node's expiry weighs; holds a reference on each budget.
  struct Footprint {
    std::vector<Share> shares{};
    std::size_t instances = 0;
  };
  struct Held {
    std::string node_id{};
    MonoTime since{};
    ExpiryVerdict reason = ExpiryVerdict::kHoldBudget;
    Footprint footprint{};
    SourceEntry* source = nullptr;  // nullptr: its own
  };
  using HeldList = std::list<Held>;  // in hold order, so oldest first
  // The held nodes by id (a beat, a removal or a release finds its hold).
  using HeldIndex = StringMap<HeldList::iterator>;
  struct Record {
    MonoTime at{};
    SourceEntry* source = nullptr;  // nullptr: the node was its own
    Footprint footprint{};
  };
  enum class Cap : std::uint8_t { kNone, kService, kRegistry };

  // The entry counting `source`'s members; nullptr for "" (a node alone).
  SourceEntry* join(std::string_view source);
  void leave(SourceEntry* source);
  SourceEntry* counted_in(std::string_view source);
  void maybe_erase_source(SourceEntry* source);

  Footprint footprint_of(const ExpiryRequest& request);
  void release_refs(const Footprint& footprint);
  ExpiryVerdict decide(const SourceEntry* source, const Footprint& footprint);
  bool partitioned(const SourceEntry* source) const;
  Cap over_cap(const Footprint& footprint) const;
  bool service_over(const Share& share) const;
  bool registry_over(std::size_t instances) const;

  // Expiring forgets the node: it leaves its source.
  void expire(MonoTime now, SourceEntry* source, Footprint footprint);
  void hold(MonoTime now, std::string_view node_id, SourceEntry* source, ExpiryVerdict reason,
            Footprint footprint);
  // Ends the hold of the node (it stays a member of its source).
  Footprint unhold(HeldIndex::iterator held);
  void release(MonoTime now, HeldIndex::iterator held, std::vector<std::string>& out);
  void prune(MonoTime now);
  void release_overdue(MonoTime now, std::size_t max, std::vector<std::string>& out);
  void drain_budget(MonoTime now, std::size_t max, std::vector<std::string>& out);
  HeldList& list_for(ExpiryVerdict reason) {
    return reason == ExpiryVerdict::kHoldPartition ? held_partition_ : held_budget_;
  }
  const HeldList* oldest_list() const;
  void budget_may_fit() { recheck_budget_ = recheck_budget_ || !held_budget_.empty(); }
  std::vector<PartitionedSource> partitioned_sources() const;

  EvictionGuardConfig config_;
  Sources sources_;  // shared sources with members or expiries in the window
  Budgets budgets_;
  std::size_t registry_size_ = 0;     // as last reported, minus instances expired since
  std::size_t registry_expired_ = 0;  // instances expired within the window
  std::deque<Record> records_;        // expiries within the window, oldest first
  HeldList held_budget_;
  HeldList held_partition_;
  HeldIndex held_index_;
  std::size_t held_instances_ = 0;
  std::size_t partitioned_sources_ = 0;  // sources whose held_partition > 0
  // The budgets may have room for a node held for budget: set when expiries
  // leave the window, a size grows or the guard is re-enabled while such nodes
  // are held (a hold decided later saw the change); cleared by a full scan.
  bool recheck_budget_ = false;
  GuardCounters counters_;
};

}  // namespace cascade::hub
