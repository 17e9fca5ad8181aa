#pragma once
// cascade::agent::Client — the in-process agent library for C++ applications.
//
//   agent::ClientOptions opts;
//   opts.hubs = {"tcp://10.0.0.1:7400", "tcp://10.0.0.2:7400"};
//   agent::Client client(opts);
//   client.register_instance({{"orders", "default"}, {"orders-1", "10.0.0.7:8080"}});
//   const proto::ServiceKey payments{"payments", "default"};
//   if (auto instance = client.pick(payments)) call(instance->address);
//   // With a learning policy (least_active, p2c, adaptive), report each call:
//   if (auto instance = client.pick(payments, agent::LbPolicy::kP2c)) {
//     client.on_call_started(payments, instance->address);
//     bool ok = call(instance->address);
//     client.on_call_finished(payments, instance->address, elapsed_us, ok);
//   }
//   client.shutdown();  // deregisters everything, acknowledged, then stops
//
// Threading: every public method is thread-safe. A background I/O thread owns
// the ZeroMQ sockets and beats to the hub; public calls lock the AgentCore,
// queue what must be sent and wake the I/O thread through an eventfd.
//
// Lookups: the first resolve() of a service is a synchronous query to the hub
// (bounded by query_timeout); from then on the service is kept fresh by the
// beats and resolve() answers from memory. A service not resolved for
// subscription_ttl is dropped. With a data_dir, the last known lists are kept
// in SQLite: an agent restarted while no hub answers still resolves from them
// (Resolution::stale, with the age of the data).

#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/agent/agent_core.hpp"
#include "cascade/agent/async_resolves.hpp"
#include "cascade/agent/call_levers.hpp"
#include "cascade/agent/caller.hpp"
#include "cascade/agent/client_observer.hpp"
#include "cascade/agent/hub_keys.hpp"
#include "cascade/agent/lb/load_balancer.hpp"
#include "cascade/agent/picker.hpp"
#include "cascade/agent/router.hpp"
#include "cascade/agent/send_times.hpp"
#include "cascade/agent/snapshot_store.hpp"
#include "cascade/common/clock.hpp"

namespace cascade {
class RateLimit;  // common/log.hpp
}  // namespace cascade

namespace cascade::agent {

struct ClientOptions {
  std::string node_id;            // empty: HOSTNAME-PID
  std::vector<std::string> hubs;  // ZeroMQ endpoints, tried in order on failover
  // CurveZMQ: with a secret key, every hub connection is encrypted and
  // authenticated, and every hub must have a public key here.
  HubKeys keys;
  HubMode hub_mode = HubMode::kFailover;  // kAll: registered with every hub
  Duration beat_interval{2000};
  std::uint32_t misses_before_failover = 3;
  Duration failover_backoff_base{500};
  Duration failover_backoff_max{30'000};
  Duration subscription_ttl{std::chrono::minutes(5)};
  Duration query_timeout{2000};                   // a first lookup waits at most this long
  Duration shutdown_timeout{2000};                // how long shutdown() waits for the hub's ack
  std::optional<std::filesystem::path> data_dir;  // where the snapshot of used services lives
  LbConfig lb;  // tuning of the load-balancing policies (agent/lb/load_balancer.hpp)
  LbPolicy default_policy = LbPolicy::kRoundRobin;
  std::map<proto::ServiceKey, LbPolicy> policies;  // per service; others use default_policy
  // Routing rules (agent/router.hpp), and this process as they see it. A bad
  // rule makes the constructor throw, naming it. The rules a hub serves with a
  // service (cascadectl set-routes) join these in the same Router, scoped to
  // that service ("NAME@GROUP"); priorities decide between them, and among
  // equal priorities these come first.
  std::vector<RouteRuleSpec> routes;
  // Config groups followed from the start and never dropped: where the
  // operator's levers for this client live (agent/call_levers.hpp).
  std::vector<std::string> config_groups;
  ConsumerContext consumer;             // host, zone, tier, metadata (method comes with each pick)
  FailureReporterConfig reports;        // fast-fail reports: batching and per-address limits
  bool report_business_errors = false;  // call(): business errors count as failures
  CallerConfig caller;                  // call(): breakers, extra-request budget, workers
  // Gets the beats' round trips and the first lookups' latencies (null: no
  // one); must outlive the Client (agent/client_observer.hpp).
  ClientObserver* observer = nullptr;
};

struct ClientStatus {
  std::string node_id;
  std::size_t current_hub = 0;
  bool hub_reachable = false;
  std::uint64_t failovers = 0;
  std::size_t cached_services = 0;
  // The last refusal of this agent's key by a hub ("forbidden: key web may
  // not register service payroll (register scope)"); empty: none.
  std::string last_refusal{};
  std::string hub_id{};       // of the hub beaten to, once it answered
  Duration lease{0};          // the lease it last granted (0: not known yet)
  Duration beat_interval{0};  // beats go this often: the own interval, or a hub's longer grant
  std::optional<Duration> last_reply_age{};  // since it last answered (nullopt: never)
};

// What the Client counted since it started, and its cache and breakers now,
// read in one go: the daemon's metrics take one per scrape
// (agent/agent_metrics.hpp).
// A config group as the client holds it (Client::config).
struct ConfigSnapshot {
  std::string group;
  std::uint64_t version = 0;
  // Key -> value, each with where it was set (tier, hub, the group's version there).
  proto::ConfigValues values;
  bool gone = false;  // the hub said no tier has the group (values empty)
  // Not confirmed by a hub within three beat intervals, restored from disk
  // and not confirmed since, or served by a hub cut off from the tier above.
  bool stale = false;
  Duration age{0};  // since a hub last confirmed the group
  // The value of `key`, nullopt when the group does not hold it.
  std::optional<std::string> value(std::string_view key) const {
    auto it = values.find(key);
    return it == values.end() ? std::nullopt : std::optional<std::string>(it->second.value);
  }
};
using ConfigCallback = std::function<void(const ConfigSnapshot&)>;

struct ClientStats {
  ClientStatus status;
  std::size_t registered_instances = 0;
  AgentCoreCounters hub{};             // beats, replies, pushes, first lookups, fast-fail reports
  FailureReporterCounters failures{};  // what report_failure() was told
  CacheAges cache{};                   // one pass over the cache
  std::array<std::uint64_t, kPickResultCount> picks{};  // by PickResult
  // call(): zero until the first call() started the Caller.
  CallerTotals calls{};
  BreakerCensus breakers{};  // one pass over the addresses called lately
  LeverCounters levers{};    // calls the operator's levers stopped (agent/call_levers.hpp)
};

class Client {
 public:
  // Starts the I/O thread. Throws std::invalid_argument for bad options and
  // StoreError when the data directory cannot be used.
  explicit Client(ClientOptions options);
  ~Client();  // shutdown() if not done yet
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  // Adds or replaces (same service and id) an instance this process provides.
  // The change reaches the hub at once, not at the next beat. Throws
  // std::invalid_argument for a registration the hub would refuse (limits in
  // common/protocol.hpp); resolve() and keep_fresh() do the same for keys.
  void register_instance(proto::Registration registration);
  void deregister_instance(const proto::ServiceKey& service, const std::string& instance_id);

  // The instances of a service (all statuses). nullopt when nothing is known:
  // the hub did not answer in time and there is no cached or snapshot copy.
  std::optional<Resolution> resolve(const proto::ServiceKey& service);
  // resolve() without blocking: `done` receives what resolve() would return.
  // It runs at once on the calling thread when the answer is at hand (a fresh
  // list, or hubs known unreachable); otherwise on the I/O thread when the hub
  // answers or the query times out, so keep it short (hand the result to your
  // own thread). Concurrent calls for one service not yet at hand share a
  // single query to the hub.
  void resolve_async(const proto::ServiceKey& service, ResolveCallback done);
  // Whatever is cached for a service, however stale, and marks it used; never
  // asks a hub (nullopt: nothing cached).
  std::optional<Resolution> cached(const proto::ServiceKey& service);
  // The version cached for a service, without copying its list; marks it used.
  std::optional<std::uint64_t> cached_version(const proto::ServiceKey& service);
  // cached() without marking the service used: for listings (the agent's
  // catalog), which must not keep every service they show alive.
  std::optional<Resolution> peek(const proto::ServiceKey& service) const;
  // One candidate chosen by `policy` (or by the service's configured policy:
  // options.policies, else default_policy), or nullopt (nothing known, no
  // candidate, or every candidate's address is in ctx.exclude). Candidates:
  // UP, weight > 0, not isolated by the hub; then the routing rules (with
  // ctx.method); then confirmed before unconfirmed; then the nearest tier.
  // The first pick of a service resolves it like resolve(); then the list is
  // rebuilt only when its version (or, with routing rules, the method)
  // changes, and a pick costs a lookup of the held version plus the choice.
  std::optional<proto::Instance> pick(const proto::ServiceKey& service, LbPolicy policy,
                                      const PickContext& ctx = {});
  std::optional<proto::Instance> pick(const proto::ServiceKey& service,
                                      const PickContext& ctx = {});
  // pick() from what is cached, however stale, never asking a hub (nullopt
  // also when nothing is cached): for callers that must not block, after
  // resolve_async() brought the service in.
  std::optional<proto::Instance> pick_cached(const proto::ServiceKey& service, LbPolicy policy,
                                             const PickContext& ctx = {});

  // A call to `address` failed: the hub hears of it within milliseconds (batched,
  // rate-limited per address; agent/failure_reporter.hpp). Business errors are
  // reported only with options.report_business_errors.
  void report_failure(const proto::ServiceKey& service, const std::string& address,
                      proto::FailureKind kind);
  // Calls `fn` on an instance of `service` with the resilience of
  // agent/caller.hpp: per-address breakers, retries on another address for
  // idempotent calls, backup requests, all within the extra-request budget.
  // Failed attempts are reported to the hub and fed to the balancers; an
  // opened breaker is reported as a fast-fail signal. First, the operator's
  // levers in the config groups this client follows (agent/call_levers.hpp):
  // a degraded service fails fast (CallResult::refused, or options.fallback
  // runs) and a service at its in-flight limit is refused at once.
  CallResult call(const proto::ServiceKey& service, const AttemptFn& fn,
                  const CallOptions& options = {});
  CallerStats call_stats(const proto::ServiceKey& service);
  BreakerStats breaker(const std::string& address);
  const Router& router() const { return router_; }
  // Feedback for the learning policies (least_active and p2c count calls in
  // flight, adaptive and p2c average latencies), given to every balancer of
  // the service. Report each started call finished exactly once. Unknown
  // services and addresses are ignored.
  void on_call_started(const proto::ServiceKey& service, std::string_view address);
  void on_call_finished(const proto::ServiceKey& service, std::string_view address,
                        std::chrono::microseconds latency, bool ok);
  // Keeps a service fresh from now on, whether or not it is resolved.
  void keep_fresh(const proto::ServiceKey& service);
  // Called on the I/O thread whenever a kept service's list changes. Keep it
  // short, and do not call resolve() of an uncached service or shutdown() from it.
  void on_change(std::function<void(const Resolution&)> callback);

  // The config centre (docs/design-config.md). A group is followed from its
  // first config() on, kept current by the beats and pushes, and dropped when
  // unused for subscription_ttl; levers in it (degrade.SERVICE,
  // limit.SERVICE.max_in_flight) apply to call(). Until a group's first
  // answer, config() waits for it, but only within query_timeout of the
  // group's first use (and not when the hubs are known unreachable, nor on
  // the I/O thread); nullopt when no answer came and nothing is held.
  std::optional<ConfigSnapshot> config(std::string_view group);
  // One value of a group (config()'s rules); nullopt when not held.
  std::optional<std::string> config_value(std::string_view group, std::string_view key);
  // Whether an operator switched `service` off (degrade.SERVICE = on in a
  // followed group): what call() obeys, for a sidecar to answer its
  // applications' picks with. A true answer counts as a call failed fast.
  bool degraded(std::string_view service);
  // Follows `group` for good (never dropped) and calls `callback` on the I/O
  // thread with the new snapshot whenever its values change. Keep it short.
  void on_config_change(std::string_view group, ConfigCallback callback);
  // config() for callers that must not wait (the daemon's HTTP API,
  // agent/client_config_async.cpp): what is held for `group` now, nullopt
  // when no hub has answered for it yet. Follows the group from this call on
  // and marks it used, as config() does; its first answer, like every later
  // change, reaches the listener of on_any_config_change().
  std::optional<ConfigSnapshot> config_held(std::string_view group);
  // One listener (a later call replaces it) called on the I/O thread with the
  // new snapshot whenever the values of any followed group change, its first
  // answer included. Unlike on_config_change(), it pins no group. Keep it short.
  void on_any_config_change(ConfigCallback listener);

  // Removes every instance of this process at the hub in one acknowledged
  // message, then stops the I/O thread. Idempotent; true if the hub acknowledged.
  bool shutdown();

  ClientStatus status() const;
  // More than status(), at the cost of a pass over the cache and the breakers.
  ClientStats stats() const;
  // The instances this process provides, as registered (sorted by service and id).
  std::vector<proto::Registration> registrations() const;
  // The services kept fresh by the beats (used recently, or kept with keep_fresh()).
  std::vector<proto::ServiceKey> cached_services() const;
  const ClientOptions& options() const { return options_; }
  // The policy pick() uses for a service: options.policies, else default_policy.
  LbPolicy policy_for(const proto::ServiceKey& service) const;
  const std::string& node_id() const { return node_id_; }

 private:
  void io_loop();
  void receive_from(std::size_t hub);
  void dispatch(AgentActions actions);
  void log_hub_problem(std::size_t hub, std::string_view what, std::string_view detail,
                       proto::ErrorCode code);
  void log_rejection(std::size_t hub, const proto::ErrorReply& error);  // I/O thread
  void time_beat_reply(const proto::Message& message);                  // I/O thread
  ClientStatus status_of(MonoTime now) const;                           // caller holds mu_
  // Asks the hub for `service` (caller holds mu_); returns the query's id.
  std::uint64_t send_query(MonoTime now, const proto::ServiceKey& service);
  // Hands the latencies of first lookups that ended to the observer (caller holds mu_).
  void time_lookups(const std::vector<std::uint64_t>& ids);
  // Counts how a pick ended, and returns `chosen`.
  std::optional<proto::Instance> counted(std::optional<proto::Instance> chosen);
  std::optional<proto::Instance> unresolved_pick();
  void send(const Outgoing& out);
  void persist(const AgentActions& actions);
  // Writes the current lists of `keep` and deletes `drop` in the snapshot store.
  void save_snapshots(const std::vector<proto::ServiceKey>& keep,
                      const std::vector<proto::ServiceKey>& drop);
  void notify_changes(const std::vector<proto::ServiceKey>& changed);
  void wake();
  // Client's config centre (agent/client_config.cpp); the caller holds mu_.
  std::optional<ConfigSnapshot> config_snapshot(MonoTime now, std::string_view group) const;
  bool config_answered(std::string_view group) const;
  // The groups followed now (for a last save at shutdown).
  std::vector<std::string> all_config_groups() const;
  // Writes these groups to the snapshot store (when there is one) and drops `drop`.
  void save_config_snapshots(const std::vector<std::string>& keep,
                             const std::vector<std::string>& drop);
  // Follows `group` and, during its first query_timeout, waits for its answer.
  void follow_and_wait(std::unique_lock<std::mutex>& lock, std::string_view group);
  // The I/O thread after config groups changed: levers, waiters, callbacks.
  void config_changed(const AgentActions& actions);
  template <typename Fn>
  void with_core(Fn&& fn);  // locks, runs fn(core, now), queues its actions, wakes the I/O thread
  bool wait_for_query(std::unique_lock<std::mutex>& lock, std::uint64_t id);
  // resolve()'s answer when no query is needed (caller holds mu_): a fresh
  // list, or what is known while hubs are known unreachable or after shutdown.
  bool answer_at_hand(MonoTime now, const proto::ServiceKey& service,
                      std::optional<Resolution>& answer);
  // Answers resolve_async() callers whose queries finished (I/O thread).
  void finish_async(const std::vector<std::uint64_t>& finished);
  static void answer_async(std::vector<ResolveCallback>& callers,
                           const std::optional<Resolution>& answer);

  // One balancer per policy used with a service, built on first use.
  struct ServiceBalancers {
    struct Slot {
      std::unique_ptr<LoadBalancer> balancer;  // null until the policy is first used
      std::uint64_t version = 0;               // of the list its candidates were built from
      Source source = Source::kHub;            // ... and where that list came from
      std::string method;                      // ... routed for this method (with rules)
    };
    std::array<Slot, kLbPolicyCount> by_policy{};
  };
  // pick()'s fast path: true (with the choice) when a balancer built from the
  // fresh cached version answers; false when the list must be looked at.
  bool hot_pick(const proto::ServiceKey& service, LbPolicy policy, const PickContext& ctx,
                std::optional<proto::Instance>& chosen);
  // pick()'s slow path: rebuilds the policy's candidates from `resolution`
  // when its version (or, with rules, the method) changed, then picks.
  std::optional<proto::Instance> pick_from(const proto::ServiceKey& service, LbPolicy policy,
                                           const PickContext& ctx, const Resolution& resolution);
  // The candidate `balancer` picks, copied out (caller holds mu_).
  std::optional<proto::Instance> pick_with(LoadBalancer& balancer, const PickContext& ctx);
  // eligible -> routing rules -> confirmed first -> nearest tier.
  std::vector<proto::Instance> candidates_of(const Resolution& resolution, std::string_view method);
  // Brings the Router's rules for `service` in line with the rules the core
  // holds from the hub, and drops the service's balancers when they changed
  // (caller holds mu_). Called when its list changes and before a rebuild.
  void sync_hub_routes(const proto::ServiceKey& service);
  Caller& caller();
  CallResult degraded_call(const CallOptions& options);
  void on_attempt(const proto::ServiceKey& service, const proto::Instance& instance,
                  AttemptOutcome outcome, std::chrono::microseconds latency);
  // A list is as current as AgentCore::lookup() says: confirmed by a hub
  // within three beat intervals (its rule for Resolution::stale).
  Duration stale_after() const { return options_.beat_interval * 3; }

  ClientOptions options_;
  std::string node_id_;
  SystemClock clock_;
  std::unique_ptr<RateLimit> rejection_log_;  // hubs' ErrorReplies; I/O thread only
  std::unique_ptr<SnapshotStore> store_;      // I/O thread only (after construction)

  std::mutex shutdown_mu_;  // serialises shutdown() callers (and the destructor)
  mutable std::mutex mu_;   // guards everything below up to the I/O thread's members
  std::condition_variable cv_;
  AgentCore core_;
  std::vector<Outgoing> outbox_;
  std::set<std::uint64_t> finished_queries_;
  AsyncResolves async_;  // resolve_async() callers waiting on queries
  bool deregistered_ = false;
  bool shut_down_ = false;
  std::function<void(const Resolution&)> on_change_;
  std::map<std::string, std::vector<ConfigCallback>, std::less<>> config_callbacks_;  // under mu_
  ConfigCallback config_listener_;                           // on_any_config_change(); under mu_
  std::map<proto::ServiceKey, ServiceBalancers> balancers_;  // guarded by mu_
  Rng pick_rng_;
  Router router_;  // thread-safe on its own
  // The hub's rules last acted on, per service (guarded by mu_): in router_
  // under the service's exact scope unless the Router refused them.
  std::map<proto::ServiceKey, std::vector<proto::RouteRuleText>> hub_routes_;
  std::once_flag caller_once_;
  std::unique_ptr<Caller> caller_;  // started on the first call(); set under mu_ for stats()
  CallLevers levers_;               // from the config groups followed; its own lock
  // Picks by PickResult: any thread, one relaxed add per pick.
  std::array<std::atomic<std::uint64_t>, kPickResultCount> picks_{};
  SendTimes<1024> lookups_sent_;  // first lookups by query id; guarded by mu_
  SendTimes<64> beats_sent_;      // beats by seq; I/O thread only

  std::atomic<bool> stop_{false};
  int wake_fd_ = -1;
  std::vector<zmq::socket_t>* sockets_ = nullptr;  // I/O thread only
  std::thread io_;
};

}  // namespace cascade::agent
