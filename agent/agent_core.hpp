#pragma once
// The agent's logic as a deterministic state machine: beats, registrations,
// the cache of used services, queries and hub failover.
//
// AgentCore takes (now, event) and returns AgentActions: messages to send to
// which hub, and what changed in the cache. It reads no clock and owns no
// socket; hub indexes refer to the hub list the adapter was configured with.
// Thread-safety: none; agent/client.hpp serialises access.
//
// Beat schedule: one UpBeat per beat interval ±jitter to the current hub. A
// beat left unanswered when the next one is due is a miss; after
// `misses_before_failover` misses the agent moves to the next hub after a
// capped, jittered exponential backoff. A registration change beats at once.
//
// Config groups (docs/design-config.md) are followed the way used services
// are: a ConfigCopy (common/config_copy.hpp) says what each beat declares,
// takes the updates of replies and pushes, and drops a group unused for
// subscription_ttl. A group followed for the first time beats within
// change_delay, so its first answer does not wait a whole interval.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/agent/failure_reporter.hpp"
#include "cascade/agent/snapshot_store.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/config_copy.hpp"
#include "cascade/common/digest.hpp"
#include "cascade/common/message_parts.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/common/random.hpp"

namespace cascade::agent {

// kFailover: beat to one hub, move to the next after misses. kAll: register
// with every hub (each holds this agent's instances independently, so losing
// one loses nothing), read (uses, queries) from one and fail over as usual.
enum class HubMode : std::uint8_t { kFailover, kAll };

// The oldest a hub's answer is taken to be. A QueryReply's age_ms comes from
// the network and may say anything up to 2^64-1 ms; an older answer is no
// staler than this one, and time arithmetic on it stays far from overflow.
inline constexpr Duration kMaxAnswerAge = std::chrono::hours(24);

struct AgentCoreConfig {
  std::string node_id;
  std::uint64_t epoch = 1;  // must change on every start
  std::size_t hub_count = 1;
  HubMode hub_mode = HubMode::kFailover;
  Duration beat_interval{2000};
  double beat_jitter = 0.1;  // ±10%
  std::uint32_t misses_before_failover = 3;
  Duration failover_backoff_base{500};
  Duration failover_backoff_max{30'000};
  Duration subscription_ttl{std::chrono::minutes(5)};  // unused entries are dropped after this
  Duration query_timeout{2000};
  // A beat still unanswered after reply_timeout is sent again, at most
  // retries_per_beat times per interval. The lease is three intervals and
  // jitter stretches an interval by up to 10%, so without retries two lost
  // datagrams in a row can cost a live agent its lease.
  Duration reply_timeout{500};
  std::uint32_t retries_per_beat = 3;
  // A registration change beats after this delay, so a burst of changes
  // travels as one beat (a hub's uplink coalesces its tier's changes).
  Duration change_delay{0};
  // Send changes as deltas once the hub holds our set, instead of the whole
  // set (for large sets: a hub beating its tier's aggregate upstream).
  bool send_deltas = false;
  // A set or delta larger than this goes in chunks of this many registrations
  // (0: never split). Keeps every frame far below the receiver's size limit.
  std::size_t max_registrations_per_beat = 0;
  std::uint32_t sender_tier = 0;    // 0 for an agent; a hub's tier for its uplink
  FailureReporterConfig reports{};  // fast-fail reports (agent/failure_reporter.hpp)
};

struct Outgoing {
  std::size_t hub;  // index into the configured hub list
  proto::Message message;
};

struct AgentActions {
  std::vector<Outgoing> send;
  std::vector<proto::ServiceKey> changed;  // cache entries whose list changed
  std::vector<proto::ServiceKey> dropped;  // cache entries dropped (unused for the TTL)
  std::vector<std::uint64_t> answered;     // query ids that got a reply
  std::vector<std::uint64_t> timed_out;    // query ids that got none in time
  // Standby hubs (configured, not beaten to) to send a keepalive now: an
  // empty batch, which a hub answers with an empty batch. It keeps a hub's
  // idle timeout from closing the connection a failover will need.
  std::vector<std::size_t> keepalive;
  bool deregistered = false;  // the hub acknowledged our Deregister
  // What hubs refused because of this agent's key (unauthenticated,
  // forbidden): the shell logs it; a refused query also ends in timed_out.
  std::vector<proto::ErrorReply> refused;
  // Config groups whose values changed (or whose first answer came), and
  // those dropped (unused for subscription_ttl).
  std::vector<std::string> config_changed;
  std::vector<std::string> config_dropped;
  void merge(AgentActions&& other);
};

enum class Source : std::uint8_t { kHub, kSnapshot };

struct Resolution {
  proto::ServiceKey service;
  std::uint64_t version = 0;
  std::vector<proto::Instance> instances;
  Source source = Source::kHub;
  bool stale = false;  // not confirmed by a hub recently (or only from the snapshot)
  Duration age{0};     // since a hub last confirmed this list
  // The service's routing rules as the hub serves them with the list
  // (protocol section 5.12): empty = the hub holds none; nullopt = no hub has
  // said (a list from a hub of an older revision, or restored from a snapshot
  // saved before any hub said). A list restored from the snapshot has the
  // rules it was saved with.
  std::optional<std::vector<proto::RouteRuleText>> routes{};
};

// What the core counted since it started: the hub link's traffic and how
// first lookups ended. Plain numbers, as the core is single-threaded: the
// Client copies them under the lock that serialises the core
// (Client::stats()), so counting costs the core an increment and nothing else.
struct AgentCoreCounters {
  // Beats: every UpBeat built (retries, chunks of a large set and kAll's
  // beats to the other hubs included).
  std::uint64_t beats_sent = 0;
  // The interval's beat sent again: no reply within reply_timeout.
  std::uint64_t beat_retries = 0;
  // The transport could not take a beat (no connection: beat_not_sent()).
  std::uint64_t beats_unsent = 0;
  // Intervals that ended with their beat unanswered (misses lead to failover).
  std::uint64_t beats_missed = 0;
  // Beats the hub shed unread, answered busy (protocol section 5.18): the
  // next went only after the time it asked for.
  std::uint64_t beats_shed = 0;
  std::uint64_t beat_replies = 0;  // DownBeats to this node that answer a beat (from any hub)
  std::uint64_t pushes = 0;        // DownBeats the hub pushed between beats (isolations)
  // First lookups (queries to the hub, query()), and how those that ended ended.
  std::uint64_t lookups_sent = 0;
  std::uint64_t lookups_answered = 0;   // the hub sent the list
  std::uint64_t lookups_not_found = 0;  // the hub knows no such service
  std::uint64_t lookups_timed_out = 0;  // no answer within query_timeout
  // The hub refused this agent's key (forbidden, unauthenticated).
  std::uint64_t lookups_refused = 0;
  std::uint64_t lookups_unavailable = 0;  // the hub could not answer (its upper tier unreachable)
  std::uint64_t lookups_busy = 0;         // the hub shed the query unread (overloaded)
  std::uint64_t fast_fail_reports = 0;    // FailureReport messages sent (each with 1+ signals)
  // Config groups left out of beats: past kMaxConfigUsesPerBeat followed
  // groups, the least recently used are not declared (summed over beats).
  std::uint64_t config_groups_left_out = 0;
};

// The cache as operators watch it (AgentCore::cache_ages()).
struct CacheAges {
  // Of the list a hub confirmed longest ago (a list from the snapshot: since it
  // was saved); nullopt when nothing is cached.
  std::optional<Duration> oldest{};
  std::size_t stale = 0;  // services a lookup now answers with Resolution::stale set
};

class AgentCore {
 public:
  AgentCore(AgentCoreConfig config, std::uint64_t rng_seed);

  AgentActions start(MonoTime now);
  AgentActions on_timer(MonoTime now);
  AgentActions on_message(MonoTime now, std::size_t from_hub, const proto::Message& message);
  MonoTime next_deadline() const;

  // Registration set. A change beats at once.
  AgentActions add_registration(MonoTime now, proto::Registration reg);
  AgentActions remove_registration(MonoTime now, const proto::ServiceKey& service,
                                   const std::string& id);

  // A call to `address` failed: the current hub hears of it within the
  // reporter's batch delay, rate-limited per address (agent/failure_reporter.hpp).
  void report_failure(MonoTime now, const proto::ServiceKey& service, const std::string& address,
                      proto::FailureKind kind) {
    reporter_.report(now, service, address, kind);
  }
  const FailureReporterCounters& report_counters() const { return reporter_.counters(); }
  const AgentCoreCounters& counters() const { return counters_; }

  // Keeps a service fresh regardless of use (the daemon's --use); unpin()
  // ends that (a cached list then expires when unused, like any other).
  void pin(const proto::ServiceKey& service);
  void unpin(const proto::ServiceKey& service) { pinned_.erase(service); }

  // Follows a config group from now on (the beats declare it) and marks it
  // used; one followed for the first time beats within change_delay.
  void use_config(MonoTime now, std::string_view group);
  // Follows a config group whether used or not (it is never dropped).
  void pin_config(MonoTime now, std::string_view group);
  // The config groups followed, as the hub's replies and pushes left them.
  const proto::ConfigCopy& configs() const { return configs_; }

  // A cached answer our hub stood by within the last three beat intervals (and
  // marks the entry used), or nothing: then a query is worth sending. The
  // answer may be stale (Resolution::stale) when the hub serves it stale.
  std::optional<Resolution> lookup(MonoTime now, WallMs wall_now, const proto::ServiceKey& service);
  // Whatever is cached, however stale, without marking it used.
  std::optional<Resolution> peek(MonoTime now, WallMs wall_now,
                                 const proto::ServiceKey& service) const;
  // The version held and its age, without copying the list (nullopt: not cached).
  struct Held {
    std::uint64_t version = 0;
    Duration age{0};
  };
  std::optional<Held> held(MonoTime now, const proto::ServiceKey& service) const;
  // Whether the cached list of the service names the instance, without
  // copying the list (nullopt: the service is not cached).
  std::optional<bool> cache_lists(const proto::ServiceKey& service,
                                  const std::string& instance_id) const;
  // The routing rules held for a cached service, without copying them
  // (nullptr: not cached, or no hub has said; see Resolution::routes).
  const std::vector<proto::RouteRuleText>* routes_of(const proto::ServiceKey& service) const {
    auto it = cache_.find(service);
    return it == cache_.end() || !it->second.routes ? nullptr : &*it->second.routes;
  }
  // Marks a cached service used (kept in the beats' `uses`), without copying it.
  void touch(MonoTime now, const proto::ServiceKey& service) {
    if (auto it = cache_.find(service); it != cache_.end()) it->second.last_used = now;
  }
  // Whatever is cached, however stale (used when the hub cannot answer).
  std::optional<Resolution> lookup_any(MonoTime now, WallMs wall_now,
                                       const proto::ServiceKey& service);
  // Sends a synchronous query; the reply arrives as `answered` with this id.
  AgentActions query(MonoTime now, const proto::ServiceKey& service, std::uint64_t& request_id);

  // Graceful stop: one Deregister for all instances. Beats stop; the
  // Deregister is repeated every retry interval until the hub acknowledges it.
  AgentActions shutdown(MonoTime now);

  // The adapter could not even hand a beat to the transport (no connection
  // yet, or gone). The beat is retried after a short pause instead of a full
  // interval, and still counts as a miss: a hub that refuses connections is
  // left quickly, while a connection that is merely being set up costs little.
  void beat_not_sent(MonoTime now);

  // The adapter's connection to `hub` is up again after it saw it lost
  // (LinkWatch, common/zmq_util.hpp). If that is the hub we beat to and we are
  // waiting on it (a beat unanswered or not sent, a failover backoff, an
  // unacknowledged Deregister), beat now instead of at the end of that wait:
  // after a cut heals, the link, not a backoff grown during the cut, decides
  // when we talk again. What went into the lost connection is not counted as
  // a miss. The transport spreads a fleet's reconnects (common/link_timing.hpp),
  // so these beats are spread the same way.
  AgentActions on_link_up(MonoTime now, std::size_t hub);

  void restore_snapshot(const std::vector<ServiceSnapshot>& services, MonoTime now);
  ServiceSnapshot snapshot_of(const proto::ServiceKey& service, WallMs wall_now,
                              MonoTime now) const;
  // The config groups of the agent's snapshot: served (stale, with their
  // age) until a hub answers.
  void restore_config_snapshot(const std::vector<ConfigGroupSnapshot>& groups, MonoTime now);
  // A followed group as the snapshot keeps it (nullopt when not answered yet).
  std::optional<ConfigGroupSnapshot> config_snapshot_of(std::string_view group, WallMs wall_now,
                                                        MonoTime now) const;

  bool hub_reachable(MonoTime now) const;
  std::size_t current_hub() const { return current_hub_; }
  std::uint64_t failovers() const { return failovers_; }
  std::uint64_t digest() const { return digest_.value(); }
  std::vector<proto::Registration> registrations() const;
  std::size_t registration_count() const { return registrations_.size(); }
  // The lease the current hub last granted (0 until it answered).
  Duration granted_lease() const { return granted_lease_; }
  // The interval beats go at: the configured one, or the longer one a hub
  // that fell behind granted in its last reply (protocol section 5.17).
  Duration beat_interval() const { return std::max(config_.beat_interval, granted_interval_); }
  std::optional<MonoTime> last_reply_at() const { return last_reply_at_; }
  // The last time a hub refused what this agent sent (codes unauthenticated
  // and forbidden: its key may not do it), for status and logs.
  const std::optional<proto::ErrorReply>& last_refusal() const { return last_refusal_; }
  const std::string& hub_id() const { return hub_id_; }
  // Drops a cache entry (e.g. a "not found" answer the caller keeps elsewhere).
  void forget(const proto::ServiceKey& service) { cache_.erase(service); }
  std::size_t cache_size() const { return cache_.size(); }
  // One pass over the cache (a few comparisons per service this node uses),
  // for a scrape or a status page, not for every lookup.
  CacheAges cache_ages(MonoTime now, WallMs wall_now) const;
  std::vector<proto::ServiceKey> cached_keys() const {
    std::vector<proto::ServiceKey> keys;
    for (const auto& [key, entry] : cache_)
      keys.push_back(key);
    return keys;
  }

 private:
  struct CacheEntry {
    std::uint64_t version = 0;
    std::map<std::string, proto::Instance> instances;
    MonoTime last_used{};
    MonoTime confirmed_at{};     // as of when the list is current (the tier holding it said so)
    MonoTime heard_at{};         // last time our hub answered for it (however stale its answer)
    bool source_stale = false;   // our hub said it serves this list stale (protocol 5.14)
    bool from_snapshot = false;  // never confirmed since the agent started
    // A hub answered for the list: current as of `age_ms` ago, stale or not.
    void confirm(MonoTime now, std::uint64_t age_ms, bool stale);
    // False when `version` may not be one the current hub issued (restored
    // from the snapshot, or from another hub): beats then declare
    // kUnverifiedVersion, which no hub ever issues, so the hub sends the whole list.
    bool version_trusted = true;
    WallMs snapshot_wall_ms = 0;  // when the snapshot's list was confirmed
    // The hub's rules for the service: replaced by every update that carries
    // them, kept by those that do not (nil on the wire); nullopt until a hub said.
    std::optional<std::vector<proto::RouteRuleText>> routes{};
  };
  struct PendingQuery {
    proto::ServiceKey service;
    MonoTime deadline;
  };
  // A full list at `version` is older than the list held from the same hub.
  static bool overtaken(const CacheEntry& entry, std::uint64_t version);

  // A beat with this agent's identity; beat_header() adds what it reads (the
  // services and config groups used) and remembers it for the reply.
  proto::UpBeat bare_beat_header();
  proto::UpBeat beat_header();
  void declare_reads(proto::UpBeat& beat);
  void declare_configs(proto::UpBeat& beat);
  // Appends this interval's beat: digest only, or with the whole set or the
  // pending delta (several beats when either is split into chunks).
  void emit_beat(AgentActions& out);
  void emit_full_set(AgentActions& out);
  void emit_delta(AgentActions& out);
  std::uint64_t emit_whole_set(std::size_t hub, AgentActions& out);
  std::uint64_t emit_chunks(std::size_t hub, bool reset, std::vector<proto::Registration> upserts,
                            std::vector<proto::InstanceKey> removed, AgentActions& out);
  proto::UpBeat header_for(std::size_t hub);
  void on_set_acknowledged(std::uint64_t ack_seq);
  // kAll: the hubs other than the current one get our set, nothing else.
  void emit_mirror_beats(AgentActions& out);
  void emit_mirror_beat(std::size_t hub, AgentActions& out);
  void on_mirror_downbeat(std::size_t hub, const proto::DownBeat& down);
  void on_error(MonoTime now, std::size_t from_hub, const proto::ErrorReply& error,
                AgentActions& out);
  // The hub shed our beat unread (protocol section 5.18).
  void back_off(MonoTime now, const proto::ErrorReply& busy);
  void on_deregister_ack(std::size_t hub, const proto::DeregisterAck& ack, AgentActions& out);
  void send_deregister(AgentActions& out);
  bool all_mode() const { return config_.hub_mode == HubMode::kAll && config_.hub_count > 1; }
  void send_beat(MonoTime now, AgentActions& out);
  void retry_beat(MonoTime now, AgentActions& out);
  void arm_retry(MonoTime now);  // the next retry of this interval's beat, if one is left
  void adopt_interval(MonoTime now, Duration granted);
  void fail_over(MonoTime now);
  void on_downbeat(MonoTime now, const proto::DownBeat& down, AgentActions& out);
  void on_push(MonoTime now, std::size_t from_hub, const proto::DownBeat& push, AgentActions& out);
  void send_reports(MonoTime now, AgentActions& out);
  void on_query_reply(MonoTime now, const proto::QueryReply& reply, AgentActions& out);
  void apply_updates(MonoTime now, const std::vector<proto::ServiceUpdate>& updates,
                     AgentActions& out);
  void apply_config_updates(MonoTime now, const std::vector<proto::ConfigUpdate>& updates,
                            AgentActions& out);
  // An update missed its base: beat now (at most once per kRepairSpacing) so
  // that the reply repairs what we hold.
  void repair_soon(MonoTime now);
  enum class UpdateOutcome { kApplied, kIgnored, kMissedBase };
  UpdateOutcome apply_update(MonoTime now, const proto::ServiceUpdate& update, AgentActions& out);
  void expire_unused(MonoTime now, AgentActions& out);
  void expire_queries(MonoTime now, AgentActions& out);
  void registration_changed(MonoTime now, const proto::InstanceKey& key);
  // Delta mode: the journal's changes after `held` (a hub holds the rest).
  proto::RegistrationDelta journal_after(std::uint64_t held) const;
  // Drops the changes every hub we send deltas to holds.
  void trim_journal();
  Resolution resolution_of(const proto::ServiceKey& key, const CacheEntry& e, MonoTime now,
                           WallMs wall_now) const;
  // Since a hub confirmed the list (restored from the snapshot: since it was saved).
  Duration age_of(const CacheEntry& e, MonoTime now, WallMs wall_now) const;
  // What Resolution::stale says of a list this old.
  bool is_stale(const CacheEntry& e, Duration age) const {
    return e.from_snapshot || e.source_stale || age > stale_after();
  }
  // Replies (which confirm lists) come once per interval, the granted one too.
  Duration stale_after() const { return beat_interval() * 3; }
  // Well inside a hub's default idle timeout (five leases of three intervals).
  Duration standby_keepalive_interval() const { return config_.beat_interval * 5; }
  bool has_standby_hubs() const { return !all_mode() && config_.hub_count > 1; }
  void send_keepalives(MonoTime now, AgentActions& out);
  Duration retry_pause() const { return std::min(config_.beat_interval / 4, Duration{100}); }

  AgentCoreConfig config_;
  Rng rng_;
  // Its own stream, so keepalives leave the beats' jitter as it was.
  Rng keepalive_rng_;
  FailureReporter reporter_;
  AgentCoreCounters counters_;
  std::uint64_t seq_ = 0;
  // Query ids live far above any seq this agent will send (2^48: beyond
  // nine thousand years of a beat per millisecond), so the `ref` of an
  // ErrorReply names a query or a beat without doubt.
  std::uint64_t request_seq_ = std::uint64_t{1} << 48;
  std::optional<proto::ErrorReply> last_refusal_;

  std::map<proto::InstanceKey, proto::Registration> registrations_;
  proto::SetDigest digest_;
  bool need_full_ = false;       // the hub may not hold our current set
  bool hub_holds_set_ = false;   // the current hub holds, or has on its way, a set of ours
  std::uint64_t change_no_ = 0;  // numbers registration changes (delta mode)
  // Delta mode: each changed key with the number of its last change, kept
  // until every hub we send deltas to holds it.
  std::map<proto::InstanceKey, std::uint64_t> journal_;
  std::map<std::uint64_t, std::uint64_t> change_no_at_seq_;  // beat seq -> change_no_ then
  std::uint64_t held_change_no_ = 0;  // the current hub holds every change up to this one
  std::uint64_t burst_end_seq_ = 0;   // last beat of the newest chunked set or delta

  // kAll: per hub, whether it holds our set (the current hub's entry is unused).
  struct Mirror {
    bool need_full = true;
    std::uint64_t full_sent_seq = 0;
    std::uint64_t full_sent_digest = 0;
    bool deregistered = false;  // acknowledged our Deregister
    // Delta mode, as the current hub's: every change up to this one is held
    // there (or on its way in a whole set), and the change number as each
    // beat to it was built.
    std::uint64_t held_change_no = 0;
    std::map<std::uint64_t, std::uint64_t> change_no_at_seq;
    std::uint64_t hub_epoch = 0;  // the incarnation that last answered (0: none yet)
  };
  std::vector<Mirror> mirrors_;
  void note_mirror_beat(Mirror& m, std::uint64_t seq);  // delta mode: what the beat held
  Duration granted_lease_{0};     // the lease the current hub last granted (0: not known)
  Duration granted_interval_{0};  // the interval it granted (0: the configured one)
  MonoTime regular_beat_at_{};    // the next beat as send_beat() scheduled it
  MonoTime last_beat_at_{};
  bool last_beat_unsent_ = false;
  std::uint64_t full_sent_seq_ = 0;         // seq of the last beat that carried the set
  std::uint64_t full_sent_digest_ = 0;      // digest of the set that beat carried
  std::uint64_t last_applied_ack_ = 0;      // newest DownBeat applied (by ack_seq)
  std::optional<MonoTime> resend_full_at_;  // after a hub restart, jittered

  std::map<proto::ServiceKey, CacheEntry> cache_;
  std::set<proto::ServiceKey> pinned_;
  proto::ConfigCopy configs_;
  // The config groups the newest beat declared: its reply confirms them.
  std::vector<proto::ConfigUse> configs_declared_;
  std::uint64_t configs_declared_seq_ = 0;
  // The follow list as a beat last carried it whole (nullopt: send it next),
  // and that beat's seq.
  std::optional<std::vector<proto::ConfigUse>> configs_list_sent_;
  std::uint64_t configs_list_sent_seq_ = 0;
  std::map<std::uint64_t, PendingQuery> pending_;

  std::size_t current_hub_ = 0;
  std::optional<MonoTime> next_keepalive_at_;  // standby hubs' next keepalive
  proto::PartAssembler parts_;                 // lists larger than a frame (protocol 5.13)
  std::uint64_t hub_epoch_ = 0;
  std::string hub_id_;
  MonoTime next_beat_at_{};
  // The last beat sent early to repair a list an update could not apply to.
  std::optional<MonoTime> last_repair_;
  static constexpr Duration kRepairSpacing{100};
  bool awaiting_reply_ = false;
  std::optional<MonoTime> retry_at_;  // resend the beat if still unanswered then
  std::uint32_t retries_left_ = 0;
  std::uint32_t misses_ = 0;
  std::uint32_t failover_streak_ = 0;
  std::uint64_t failovers_ = 0;
  std::optional<MonoTime> last_reply_at_;
  std::optional<proto::Deregister> deregister_;  // set by shutdown() until acknowledged
  bool stopped_ = false;  // the Deregister was acknowledged: nothing more is ever sent
};

}  // namespace cascade::agent
