#pragma once
// The hub's registry logic as a deterministic state machine.
//
// HubCore takes (now, message) and returns the reply; tick(now) expires
// leases; take_persist_batch() hands over what must be written. It never reads
// a clock, touches a socket or a file, so leases and versions are tested with
// a fake clock and thousands of hubs can run in one simulated process.
// Thread-safety: none; one owning thread drives it (hub/hub_server.hpp).
//
// That thread also serves every beat, so a question about state (a
// StatusRequest: cascadectl status, a monitoring poll) must cost it next to
// nothing whatever the registry holds: the figures status reports are running
// totals, kept where the state they count changes (the registry's instance
// totals, the subscriptions, the child hubs, the eviction guard's gauges), and
// read in O(1). recount_mismatch() recomputes them all by walking, for tests.

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "cascade/common/access.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/access_rules.hpp"
#include "cascade/hub/config_centre.hpp"
#include "cascade/hub/departed_nodes.hpp"
#include "cascade/hub/eviction_guard.hpp"
#include "cascade/hub/granted_stretch.hpp"
#include "cascade/hub/intern_pool.hpp"
#include "cascade/hub/isolation.hpp"
#include "cascade/hub/lease_queue.hpp"
#include "cascade/hub/liveness_probes.hpp"
#include "cascade/hub/load_governor.hpp"
#include "cascade/hub/metrics.hpp"
#include "cascade/hub/node_table.hpp"
#include "cascade/hub/push_gate.hpp"
#include "cascade/hub/registry.hpp"
#include "cascade/hub/small_list.hpp"
#include "cascade/hub/store.hpp"
#include "cascade/hub/uplink.hpp"

namespace cascade::hub {

struct HubCoreConfig {
  std::string hub_id = "hub";
  std::uint32_t tier = 1;
  Duration lease{6000};          // an agent that misses this long is expired
  Duration beat_interval{2000};  // the agents' interval, which `lease` fits
  // Spaces the fleet's beats out while the serving thread falls behind
  // (hub/load_governor.hpp, protocol section 5.17).
  LoadGovernorConfig governor{};
  std::size_t change_log_per_service = 256;      // changes a delta reaches back, or a list's 1/4
  std::size_t max_expirations_per_tick = 10000;  // bounds the work of one tick
  // A service entry without instances or rules that nobody follows is freed
  // after this grace (Registry::reclaim), at most this many per tick.
  Duration empty_service_ttl{30'000};
  std::size_t max_reclaims_per_tick = 10000;
  // Entries nothing is registered in (consumers' waits, cross-tier lists)
  // at most: past it a consumer waiting for a new service learns it at its
  // next beat instead of by push.
  std::size_t max_unregistered_services = 100'000;
  std::size_t max_registrations_per_node = 10000;
  std::size_t max_registrations_per_child_hub = 5'000'000;  // a lower tier's whole aggregate
  // Set when the hub has an upper tier: it beats there and forwards what its
  // tier lacks (hub/uplink.hpp).
  std::optional<UplinkConfig> uplink{};
  // A service with fewer UP instances in this tier than this is completed
  // with the upper tier's instances (each tagged with its tier).
  std::uint32_t min_local_up = 1;
  std::string zone{};                 // datacenter or zone label, shown in status
  IsolationPolicy isolation{};        // fast-fail isolation by callers' reports (hub/isolation.hpp)
  PushConfig push{};                  // pushes between beats (hub/push_gate.hpp)
  std::uint32_t max_report_hops = 8;  // a failure report crossing more hubs is dropped
  EvictionGuardConfig eviction{};     // protection against mass expiry (hub/eviction_guard.hpp)
  LivenessProbeConfig probes{};  // crashed or unreachable, while held (hub/liveness_probes.hpp)
  // Agents take their epoch from the wall clock at start (µs): a restart
  // moves it forward by about the time since the previous one. A new epoch
  // further ahead than that plus this margin (clock steps, skew) is refused:
  // it is not a restart but a claim that would lock the real agent out.
  Duration max_epoch_lead{std::chrono::hours(24)};
};

// Who sent a message, as the transport proved it. The core decides what the
// message may do from this alone (docs/security.md).
struct Peer {
  Peer() = default;
  // NOLINTNEXTLINE(google-explicit-constructor): most callers know only a source
  Peer(std::string_view source_of_peer, const access::Principal* key = nullptr,
       std::string_view network_address = {})
      : source(source_of_peer), principal(key), address(network_address) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Peer(const std::string& source_of_peer) : Peer(std::string_view(source_of_peer)) {}
  // NOLINTNEXTLINE(google-explicit-constructor)
  Peer(const char* source_of_peer) : Peer(std::string_view(source_of_peer)) {}

  // What the peer's nodes fail together through, for eviction protection: a
  // subnet, a proxy, a connection. "" = every node is its own source.
  std::string_view source{};
  // The key the message was sent with (CurveZMQ, checked against the
  // authorised keys). nullptr: the hub runs without keys (plaintext on
  // loopback, or --insecure) and takes every claim as made, bar the checks
  // that need no key (epochs within reason).
  const access::Principal* principal = nullptr;
  std::string_view address{};  // the peer's network address, for the audit log
};

// The reason served with instances eviction protection holds.
inline constexpr std::string_view kUnconfirmedReason = "lease ran out; held by eviction protection";

struct HandleResult {
  proto::Message reply;
  // True when the reply acknowledges a state change: the server must commit
  // the pending PersistBatch before sending it ("nothing acknowledged is lost").
  bool durable = false;
  // Non-zero: there is no reply yet (the question went to the upper tier);
  // it comes out of take_deferred_replies() under this token.
  std::uint64_t deferred = 0;
  bool no_reply = false;  // fire and forget (a FailureReport without request id)
  // An operator asked to reload the authorised keys (AdminOp::kReloadKeys,
  // accepted): the shell re-reads the file and completes the AdminReply with
  // the outcome before sending it.
  bool reload_keys = false;
};

// A message for one node, sent between its beats (a push, or a failure
// report on its way down to the lower-tier hub that holds the address). The
// server sends it the way that node's last beat came in.
struct NodeMessage {
  std::string node_id;
  proto::Message message;
};

struct DeferredReply {
  std::uint64_t token;
  proto::Message reply;
};

// A hub of a lower tier beating here, as HubCore::child_hubs() lists it.
struct ChildHubView {
  std::string node_id;
  std::uint32_t tier = 0;
  Duration lease_left{0};     // zero while eviction protection holds it
  bool held = false;          // its lease ran out; eviction protection keeps its instances
  std::size_t instances = 0;  // of its tier's aggregate, held here
};

// An instance in one of HubCore's bounded lists (isolated, unconfirmed).
struct ListedInstance {
  proto::ServiceKey service;
  std::string id;
  std::string address;
  std::string reason;  // as served (Instance::health_reason)
  std::string node;    // the node whose instance it is
  // Isolated: until it is readmitted. Unconfirmed: how long its node has been held.
  Duration span{0};
  std::string hold;  // unconfirmed only: "budget" or "partition" (why it is held)
};

struct ListedInstances {
  std::vector<ListedInstance> instances;  // at most the limit asked for
  std::size_t total = 0;                  // in the whole list
};

class HubCore {
 public:
  HubCore(HubCoreConfig config, std::uint64_t hub_epoch, MonoTime started);

  // Loads a persisted snapshot. Every restored agent gets one full lease of
  // grace from `now`, of the longest stretch the crashed hub may have
  // granted it (hub/granted_stretch.hpp): a crashed agent expires after it,
  // a live one renews.
  // The config centre gets this hub's keys and their recent history back,
  // each group served under a version of this incarnation.
  void restore(const HubSnapshot& snapshot, MonoTime now);

  // `peer` says who sent the message (Peer): its key decides what the message
  // may do, and its source is what eviction protection groups nodes by
  // (nodes of one proxy or subnet that stop together are held as a partition
  // rather than expired).
  HandleResult handle(MonoTime now, const proto::Message& message, const Peer& peer = {});
  // Starts loading what handle() will need for this message into the CPU
  // cache. For a batch: call it for every message first, then handle them.
  void prefetch(const proto::Message& message) const;
  // A message that failed to decode: counted, answered with an ErrorReply.
  proto::ErrorReply on_decode_failure(const proto::DecodeFailure& failure);

  // A message from upstream `index` (UplinkConfig::endpoints) of a tiered hub.
  void on_upstream_message(MonoTime now, std::size_t index, const proto::Message& message);
  // The connection to upstream `index` is back after a loss (Uplink::on_link_up).
  void on_upstream_link_up(MonoTime now, std::size_t index) {
    if (uplink_) uplink_->on_link_up(now, index);
  }
  // Messages for the upstreams; replies to deferred queries.
  std::vector<UplinkOutgoing> take_upstream_messages();
  std::vector<DeferredReply> take_deferred_replies();
  std::vector<NodeMessage> take_node_messages();
  // TCP connects to make to the addresses of held nodes (the shell runs them
  // and hands each result back): a refused one means the process is gone.
  std::vector<ProbeRequest> take_probes() { return probes_.take_requests(); }
  void on_probe_result(MonoTime now, const ProbeResult& result);

  // Expires leases whose deadline is <= now (at most max_expirations_per_tick)
  // and runs the uplink's timers.
  void tick(MonoTime now);
  // When tick() next has work; nullopt when nothing is pending.
  std::optional<MonoTime> next_deadline() const;

  // One pass of the serving loop ended at `now`, `busy` of it working;
  // `backlog`: frames were left queued. The load governor decides from these
  // the interval and lease the next replies grant.
  void on_serving_pass(MonoTime now, std::chrono::microseconds busy, bool backlog) {
    governor_.on_pass(now, busy, backlog, counters_.beats, counters_.frames_shed);
    if (auto held = granted_stretch_.on_pass(now, governor_.stretch())) stretch_to_store_ = held;
  }
  const LoadGovernor& governor() const { return governor_; }
  // The serving loop shed a frame unread: it waited `waited` in the hub's
  // queue, over its bound (protocol section 5.18). Returns the busy reply,
  // naming `ref` (the frame's seq or request id, 0 if unread) and when to
  // ask again; until its sender can have asked again, a lease that runs out
  // is extended instead of expired.
  proto::ErrorReply on_frame_shed(MonoTime now, std::uint64_t ref, Duration waited);

  // What must be written since the last batch. `wall_ms`, the commit's wall
  // time (the server reads it just before apply()), becomes the batch's
  // wall_ms and the time of its config changes, in the batch and in the
  // history `config history` shows; 0 leaves both unstamped.
  PersistBatch take_persist_batch(WallMs wall_ms = 0);
  // Marks everything in a batch that failed to commit dirty again, so the
  // next batch writes its current values; its audit records and config
  // changes come first in the next batch, in their order.
  void requeue(const PersistBatch& failed);
  // Hands back a batch the store is done with: the next batch's rows reuse
  // its buffers, up to a bound. A registration wave's batch is megabytes,
  // whose pages were faulted in afresh for every batch (docs/benchmarks.md,
  // "Registration with durable acks").
  void reuse(PersistBatch&& done);

  // The shell reloaded the authorised keys an operator asked for
  // (HandleResult::reload_keys): the request's audit record gets the outcome.
  void complete_keys_reload(bool ok, const std::string& outcome);

  const HubCounters& counters() const { return counters_; }
  // The config centre (docs/design-config.md): an edit of this hub's keys of
  // a group, its followers pushed between beats. For simulations and
  // benchmarks, which have no operator: it is not audited. Operators' edits
  // come as AdminRequest kConfigEdit through handle(), audited.
  ConfigGroups::Outcome edit_config(MonoTime now, std::string_view group,
                                    const std::vector<ConfigEdit>& edits, const std::string& author,
                                    WallMs wall_ms) {
    return config_centre_.edit(now, group, edits, author, wall_ms);
  }
  const ConfigCentre& config_centre() const { return config_centre_; }
  // A read of the config centre (cascadectl config get / list / history, the
  // HTTP API): what this hub serves, its groups, the history it keeps.
  proto::ConfigReply config_view(const proto::ConfigRequest& request) const;
  // What `cascadectl status` shows (request id 0); what metrics sample.
  proto::StatusReply status(MonoTime now) const { return status(now, 0); }
  const IsolationTracker& isolation() const { return isolation_; }
  const Registry& registry() const { return registry_; }
  std::size_t node_count() const { return nodes_.size(); }
  bool knows_node(const std::string& id) const { return nodes_.contains(id); }
  // Whether this core may ever send a NodeMessage to the node that sent
  // `beat`: one that reads something (services, config groups) or a hub
  // below. A server keeps a route back to those only.
  static bool may_push_to(const proto::UpBeat& beat) {
    return !beat.uses.empty() || !beat.configs.empty() || beat.configs_digest != 0 ||
           beat.sender_tier != 0;
  }
  // O(1): kept by set_uses / forget_uses.
  std::size_t subscription_count() const { return subscriptions_; }
  // Nodes that are hubs of a lower tier (beat with a tier > 0); O(1).
  std::size_t child_hub_count() const { return child_hubs_.size(); }
  // For tests and diagnostics only, O(nodes + instances): recomputes every
  // running total status() reports (the registry's, the subscriptions, the
  // child hubs, the eviction guard's) by walking the state, and names the
  // first that differs from its running value; nullopt when all agree. Never
  // call it on a serving thread.
  std::optional<std::string> recount_mismatch() const;
  std::uint64_t epoch() const { return epoch_; }
  const HubCoreConfig& config() const { return config_; }

  // What the hub's HTTP admin API reads (hub/hub_core_views.cpp), on the
  // owning thread. Each costs what it lists (a service's instances, the child
  // hubs, what the isolation tracker and the eviction guard hold, at most
  // `limit` of them), never a walk of every node or instance.
  //
  // The lease `node_id` has left (zero once it ran out: eviction protection
  // holds it), nullopt for no such node (a static instance's kStaticOwner).
  std::optional<Duration> lease_left(std::string_view node_id, MonoTime now) const;
  bool is_held(std::string_view node_id) const { return guard_.is_held(node_id); }
  std::vector<ChildHubView> child_hubs(MonoTime now) const;
  // Instances this hub isolates now, soonest readmitted first.
  ListedInstances isolated_instances(MonoTime now, std::size_t limit) const;
  // Instances of the nodes eviction protection holds, oldest hold first.
  ListedInstances unconfirmed_instances(MonoTime now, std::size_t limit) const;
  // The switches as the operator left them (eviction-protection, notify-switch).
  bool eviction_protection() const { return guard_.enabled(); }
  const PushConfig& push_settings() const { return push_budget_.config(); }

 private:
  // An instance a node reports, as owner or claimant: its service and its
  // slot in the service's instance map, which stays put while the instance
  // is registered, and it is while some node reports it (recount_mismatch
  // checks). 16 bytes; a copy of the id was 40 and a heap block.
  struct OwnedInstance {
    ServiceEntry* service;
    const InstanceSlot* slot;
    InstanceId id() const { return slot->id(); }
    const InstanceEntry& entry() const { return slot->entry(); }
    auto operator<=>(const OwnedInstance&) const = default;
  };
  // The registered instance `id` of `svc` (it must be registered).
  static OwnedInstance owned_of(ServiceEntry& svc, std::string_view id) {
    return {&svc, svc.instances.find(id)};
  }
  // A service a node declared in its last beat, and the version it holds
  // since that beat's reply (or a later push).
  struct Use {
    const ServiceEntry* service = nullptr;
    std::uint64_t held = 0;
    bool operator==(const Use&) const = default;
  };
  // A chunked full set being received: the chunks so far, and the seq the
  // next one must have.
  struct StagedSet {
    std::vector<proto::Registration> regs;
    std::uint64_t next_seq = 0;
  };
  // What only some nodes need, out of line: a consumer's uses, and the member
  // hashes of a set that changes by deltas. Most of a fleet are agents that
  // provide and re-send their whole set when it changes: their nodes never
  // allocate it (40 bytes a node less at a million; docs/benchmarks.md).
  struct NodeExtras {
    // The digest of the set as the node reported it, kept member by member
    // so that a delta is checked without rehashing the set (when
    // Node::running_known).
    proto::SetDigest running;
    std::vector<Use> uses;
  };
  // A node's lease is its place in leases_ (the LeaseHook).
  struct Node : LeaseHook {
    explicit Node(std::string_view node_id) : id(node_id) {}

    CompactText id;
    std::uint64_t epoch = 0;
    std::uint64_t last_seq = 0;
    std::uint64_t digest = 0;
    // The small fields share one word (a node per agent: each byte is a
    // megabyte at a million).
    std::uint32_t table_slot = 0;  // its place in nodes_ (NodeTable)
    // 0: an agent; else a lower tier's hub (at most 16 with --tier; set_tier caps it at 255).
    std::uint8_t tier = 0;
    bool set_known : 1 = false;       // the hub holds the set that `digest` names
    bool follows_config : 1 = false;  // its last beat declared config groups
    bool held : 1 = false;           // its lease ran out; eviction protection keeps it, unconfirmed
    bool running_known : 1 = false;  // extras->running is computed
    MonoTime epoch_seen{};           // when `epoch` was first seen (or the hub restored it)
    SharedText owner_key;            // the key that registered it; "" on a hub without keys
    SharedText source;               // as the eviction guard knows it
    SmallList<OwnedInstance> owned;  // sorted
    std::unique_ptr<NodeExtras> extras;  // nullptr until needed

    std::span<const Use> uses() const {
      return extras ? std::span<const Use>(extras->uses) : std::span<const Use>();
    }
    std::span<Use> uses() { return extras ? std::span<Use>(extras->uses) : std::span<Use>(); }
    NodeExtras& more() {
      if (!extras) extras = std::make_unique<NodeExtras>();
      return *extras;
    }
  };
  // A slot of nodes_ each: a byte here is a megabyte at a million nodes.
  static_assert(sizeof(Node) <= 120);
  struct NodeIdOf {
    std::string_view operator()(const Node& node) const { return node.id; }
  };

  HandleResult dispatch(MonoTime now, const proto::Message& message, const Caller& caller,
                        const Peer& peer);
  // A message its key may not send: counted, logged (rate-limited), answered
  // with an ErrorReply of the refusal's code.
  HandleResult refuse(MonoTime now, const proto::Message& message, Refusal refusal);
  // Refused when `node` is bound to another key than the caller's.
  std::optional<Refusal> check_owner(const Node& node, const Caller& caller) const;
  std::vector<proto::ServiceUse> uses_in_scope(const Caller& caller,
                                               const std::vector<proto::ServiceUse>& uses);
  // A known node's new epoch is within reason (HubCoreConfig::max_epoch_lead).
  bool epoch_plausible(MonoTime now, const Node& node, std::uint64_t epoch) const;
  HandleResult on_upbeat(MonoTime now, const proto::UpBeat& beat, const Caller& caller,
                         std::string_view source);
  HandleResult on_query(MonoTime now, const proto::Query& query);
  proto::QueryReply local_reply(const proto::Query& query, const ServiceEntry* svc) const;
  // Composes the answer; the service's entry keeps its composition's version.
  proto::Message cross_tier_reply(const proto::Query& query, const ServiceEntry* svc,
                                  const CrossTierAnswer& answer);
  // This tier answers alone: no upper tier, or enough UP instances here and
  // no routing rule for the service.
  bool answers_locally(const ServiceEntry* svc) const;
  void collect_answers();
  void feed_uplink(MonoTime now);
  // Config groups from the upper tier (docs/design-config.md): a beat's
  // groups followed upstream, and its reply; each upper copy that came,
  // changed or was dropped served under this hub's own keys.
  void follow_declared_configs(MonoTime now, Node& node, const proto::UpBeat& beat,
                               proto::DownBeat& reply);
  void follow_configs(MonoTime now, Node& node, const std::vector<proto::ConfigUse>& uses,
                      proto::DownBeat& reply);
  void take_upper_configs(MonoTime now);
  void log_configs_left_out(MonoTime now);
  void log_upstream_state(MonoTime now);
  HandleResult on_deregister(MonoTime now, const proto::Deregister& msg, const Caller& caller);
  // Answers from running totals and fixed-size lists only (plus the few
  // upstreams): O(1) in nodes and instances, so polling it never stalls beats.
  proto::StatusReply status(MonoTime now, std::uint64_t request_id) const;
  proto::ServicesReply services(std::uint64_t request_id, const Caller& caller) const;
  HandleResult reject(proto::ErrorCode code, std::string message, std::uint64_t ref);

  // The node of this beat (`known`, or a new one), its lease renewed.
  Node& admit(MonoTime now, const proto::UpBeat& beat, Node* known, bool& state_changed);
  bool apply_registration_set(Node& node, const std::vector<proto::Registration>& set);
  bool apply_delta(Node& node, std::uint64_t seq, proto::RegistrationDelta delta);
  bool apply_incremental(Node& node, const proto::RegistrationDelta& delta);
  bool ensure_running_digest(Node& node);
  static void update_owned(std::vector<OwnedInstance>& owned, std::vector<OwnedInstance> dropped,
                           std::vector<OwnedInstance> added);
  void ask_for_set(const std::string& node_id);
  void collect_updates(MonoTime now, Node& node, const std::vector<proto::ServiceUse>& uses,
                       proto::DownBeat& reply);
  void note_if_stale(MonoTime now, const proto::ServiceKey& service, const ServiceEntry* svc,
                     std::vector<proto::StaleList>& stale);
  // Appends what a consumer holding `use.version` needs, if anything; returns
  // the entry that serves the service (nullptr: nothing to follow yet).
  const ServiceEntry* add_update(MonoTime now, const proto::ServiceUse& use,
                                 std::vector<proto::ServiceUpdate>& out);
  void add_local_update(const proto::ServiceUse& use, const ServiceEntry* svc,
                        std::vector<proto::ServiceUpdate>& out);
  const ServiceEntry* add_cross_tier_update(MonoTime now, const proto::ServiceUse& use,
                                            const ServiceEntry* svc,
                                            std::vector<proto::ServiceUpdate>& out);
  // Replaces the node's uses, keeping consumers_ (service -> nodes) and the
  // subscription count in step.
  void set_uses(Node& node, std::vector<Use>& next);
  // The node follows nothing any more: out of consumers_, its uses cleared.
  void forget_uses(Node& node);
  // The only writer of Node::tier, so the child-hub count follows it.
  void set_tier(Node& node, std::uint32_t tier);

  // Fast-fail reports (hub/hub_core_reports.cpp).
  HandleResult on_failure_report(MonoTime now, const proto::FailureReport& report,
                                 const Caller& caller);
  void route_signal(MonoTime now, const proto::FailureSignal& signal, std::uint32_t hops,
                    proto::ReportAck& ack);
  void count_signal(MonoTime now, ServiceEntry& svc, const std::string& id,
                    const proto::FailureSignal& signal, proto::ReportAck& ack);
  bool forward_up(MonoTime now, const proto::FailureSignal& signal, std::uint32_t hops);
  bool refused_at_held(const proto::FailureSignal& signal, const Node* owner);
  // A report that has crossed `hops` hubs may cross one more (max_report_hops).
  bool may_forward(std::uint32_t hops) const;
  void readmit_due(MonoTime now);
  Verdict verdict_after_isolation(const InstanceEntry& entry) const;
  void readmit_restarted(MonoTime now, Node& node);
  void drain_served_changes(MonoTime now);
  // What ends every event that may change lists: the changed services are
  // marked for their consumers' pushes and the uplink learns the new lists.
  void after_changes(MonoTime now);
  // Frees the service entries that stayed unused for their grace.
  void reclaim_services(MonoTime now);
  void take_instance_rows(PersistBatch& batch);
  void take_service_rows(PersistBatch& batch);
  const ServiceEntry* waiter(const proto::ServiceKey& service);
  void flush_pushes(MonoTime now);
  void push_to(Node& node, std::vector<proto::ServiceUpdate> updates);
  void count_sent(std::span<const proto::ServiceUpdate> updates);
  void flush_config_pushes(MonoTime now);
  // Whether a group's first answer still waits for the upper tier's copy
  // (none without an uplink).
  ConfigCentre::AwaitsUpper config_awaits_upper(MonoTime now) const;
  void add_config_counters(std::vector<std::pair<std::string, std::uint64_t>>& counters) const;
  // A pushed DownBeat to `node_id`, without updates yet.
  proto::DownBeat push_for(const std::string& node_id) const;

  // Lease expiry under eviction protection (hub/hub_core_expiry.cpp).
  void expire_leases(MonoTime now);
  // The deadline of a lease granted now: the lease, stretched by the load
  // governor, and never before a deadline already granted (a longer lease
  // granted while the stretch was higher is not cut short, and the lease
  // queue stays in order).
  MonoTime lease_deadline(MonoTime now) const;
  // A lease of `stretch` times the configured one, never before a deadline
  // already in the queue.
  MonoTime lease_deadline(MonoTime now, std::uint32_t stretch) const;
  // A lease that ran out while the hub shed: extended to the end of the
  // grace, if one is on at `now` (protocol section 5.18).
  bool postpone_expiry(MonoTime now, Node& node);
  void release_held(MonoTime now);
  void hold(MonoTime now, Node& node, ExpiryVerdict verdict);
  void expire(MonoTime now, Node& node, const char* why);
  // A held node whose every address refused connections: gone, not cut off.
  void expire_dead(MonoTime now, const std::string& node_id);
  std::vector<std::string> addresses_of(const Node& node) const;
  ExpiryRequest expiry_request(const Node& node) const;
  void note_source(MonoTime now, Node& node, std::string_view source);
  void mark_unconfirmed(Node& node, bool unconfirmed);
  // The node's instances ordered by service key and id. Changes made in this
  // order issue the same versions on every run (versions come from one
  // counter, and `owned` is ordered by entry address).
  static std::vector<OwnedInstance> in_key_order(std::span<const OwnedInstance> owned);
  std::optional<std::string> guard_mismatch() const;
  static std::optional<std::string> owned_mismatch(
      const Node& node, const std::unordered_map<const void*, const ServiceEntry*>& slots);
  // Removes the node (from the lease queue too) and its instances; returns the count.
  std::size_t drop_node(Node& node);

  // Operator operations (hub/hub_core_admin.cpp).
  // Every request, accepted or refused, gets an audit record; the reply is
  // durable, so it goes out only once the change and its record committed.
  // `refusal`: the key may not run operator commands (recorded, then refused).
  HandleResult on_admin(MonoTime now, const proto::AdminRequest& request, const Caller& caller,
                        const Peer& peer, std::optional<Refusal> refusal = std::nullopt);
  proto::AdminReply carry_out(MonoTime now, const proto::AdminRequest& request);
  void audit(MonoTime now, const proto::AdminRequest& request, const proto::AdminReply& reply,
             const Caller& caller, const Peer& peer);
  proto::AdminReply mark_out_of_service(const proto::AdminRequest& request, bool out);
  proto::AdminReply add_static(const proto::AdminRequest& request);
  proto::AdminReply remove_static(const proto::AdminRequest& request);
  proto::AdminReply readmit(MonoTime now, const proto::AdminRequest& request);
  proto::AdminReply set_eviction_protection(bool enabled);
  proto::AdminReply set_notify_switch(bool enabled, std::uint32_t share_percent);
  // Replaces a service's routing rules (checked by check_request), creating
  // its entry if needed; consumers following it get a push.
  proto::AdminReply set_routes(MonoTime now, const proto::AdminRequest& request);
  // The config centre's operations and reads (hub/hub_core_config.cpp).
  proto::AdminReply config_edit(MonoTime now, const proto::AdminRequest& request);
  proto::AdminReply config_rollback(MonoTime now, const proto::AdminRequest& request);
  proto::ConfigReply config_get(const proto::ConfigRequest& request,
                                proto::ConfigReply reply) const;
  proto::ConfigGroupSummary summary_of(const std::string& name,
                                       const ServedConfig::Group& group) const;
  // Overrides, settings and static instances from the snapshot; before the
  // agents' instances, so the overrides apply to them as they are restored.
  void restore_admin(const HubSnapshot& snapshot);
  // take_persist_batch() and requeue(), for what the operations changed.
  void take_admin_changes(PersistBatch& batch);
  void restore_granted_stretch(std::int64_t stored);
  void requeue_admin(const PersistBatch& failed);
  std::vector<AuditRecord> audit_pending_;           // in order, not yet in a batch
  std::vector<proto::InstanceKey> dirty_overrides_;  // marks to write (current value)
  std::vector<proto::ServiceKey> dirty_routes_;      // rule sets to write (current value)
  bool settings_dirty_ = false;                      // the switches changed

  HubCoreConfig config_;
  std::uint64_t epoch_;
  MonoTime started_;
  Registry registry_;
  InternPool<std::string> node_texts_;  // owner keys and sources: few, each shared by many nodes
  NodeTable<Node, NodeIdOf> nodes_;  // owns the nodes (Node* stays valid); the beat path's lookup
  LeaseQueue<Node> leases_;          // every node's (a held one's: when it is asked about again)
  LoadGovernor governor_;
  // The longest stretch a node may hold, persisted (as the setting
  // kSettingGrantedStretch) when it changes: a restart's grace covers it.
  GrantedStretch granted_stretch_{config_.lease};
  std::optional<std::uint32_t> stretch_to_store_;
  // Text bytes per instance row in the last batch that had rows: the next
  // batch's buffer is sized from it.
  std::size_t row_bytes_hint_ = 160;
  InstanceRows spare_rows_;  // a committed batch's, for the next (reuse)
  HubCounters counters_;
  std::vector<std::string> dirty_nodes_;
  // Chunked full sets being received (delta reset ... more=false), by node:
  // only a lower tier's hub sends one, so a node keeps no field for it.
  std::unordered_map<const Node*, StagedSet> staged_sets_;
  DepartedNodes departed_;
  std::optional<Uplink> uplink_;
  bool upstream_reachable_ = false;  // as last logged
  std::uint64_t next_token_ = 0;
  std::unordered_map<std::uint64_t, proto::Query> deferred_queries_;
  std::vector<DeferredReply> deferred_replies_;
  IsolationTracker isolation_;
  EvictionGuard guard_;
  LivenessProbes probes_;
  // The notify switch and the per-second cap, shared by the service lists'
  // pushes (push_gate_) and the config groups' (the config centre's gate).
  PushBudget push_budget_;
  PushGate<const ServiceEntry*> push_gate_;
  ConfigCentre config_centre_;
  // Who uses each service: the consumers a push goes to, in node-id order
  // (never pointer order): which consumers a capped flush reaches, and the
  // order pushes leave in, must replay from a seed and not depend on where
  // the allocator put a node. A node's id never changes while it is listed.
  struct ByNodeId {
    bool operator()(const Node* a, const Node* b) const { return a->id < b->id; }
  };
  std::unordered_map<const ServiceEntry*, std::set<Node*, ByNodeId>> consumers_;
  std::vector<Use> uses_scratch_;         // reused by every beat: no allocation per beat
  std::size_t subscriptions_ = 0;         // the sum of the nodes' uses.size()
  std::set<Node*, ByNodeId> child_hubs_;  // nodes whose tier > 0: the lower tiers' hubs
  std::vector<NodeMessage> node_messages_;
  RateLimit refusal_log_{10, Duration{10'000}};
  RateLimit config_cap_log_{1, Duration{60'000}};
  RateLimit shed_log_{1, Duration{10'000}};
  // A node's fate (expired, held, confirmed again) is logged per node, but a
  // mass event (a restart's 200,000 held agents) must not flood the log
  // while the serving thread handles it: 20 lines per 10 s of each, then a
  // count of those left out.
  RateLimit expired_log_{20, Duration{10'000}};
  RateLimit held_log_{20, Duration{10'000}};
  RateLimit confirmed_log_{20, Duration{10'000}};
  // Until when a lease that runs out is extended rather than expired: the
  // hub shed frames until recently, and their senders are still backing off.
  MonoTime shed_grace_until_{};
  std::uint64_t configs_left_out_logged_ = 0;  // Uplink::config_groups_left_out() when last logged
};

}  // namespace cascade::hub
