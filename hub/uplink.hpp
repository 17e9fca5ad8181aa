#pragma once
// A tiered hub's link to the tier above: it beats its tier's aggregate up and
// keeps the answers it got from above (see docs/architecture.md, "Tiers").
//
// The hub is an agent of its upstream. Each link is an agent::AgentCore, so
// the uplink inherits the agent's beat schedule, retries, failover with
// backoff capped by the granted lease, digest-only steady state and per-
// service versions with deltas. What it registers is every instance of its
// own registry; what it declares in `uses` are the cross-tier services its
// consumers use, so the upstream's replies keep those lists fresh with no
// per-query watch.
//
// Why these rules:
// - Freshness: a cached list is fresh for `cache_ttl` after the upstream last
//   confirmed it (default: half the lease the upstream grants, so it is always
//   shorter than the upstream's own hold on the data). Every reply to our
//   beats confirms every list we declared.
// - Stale-if-upstream-down: while no upstream answers, an expired list is
//   still served, marked stale with its age, for up to `max_stale`.
// - "Not found" answers are kept for `negative_ttl`, so a storm of lookups for
//   a missing service stays in this tier; at most `max_negative_entries` of them.
// - One question per service in flight: consumers that miss while it is
//   asked wait for the same answer.
// - Multi-homing: `kAll` beats to every upstream (each holds this tier's
//   state independently); `kFailover` beats to one and moves on after misses.
//   Lists are served from the first-listed upstream's copy while it is
//   fresh, never from whichever copy was confirmed last: a lagging copy must
//   not take back a change consumers were pushed.
// - Config groups (docs/design-config.md): the links follow upstream the
//   groups this tier's followers declare, each link's ConfigCopy holding the
//   upper tier's copy (confirmed by every reply, changed by replies and
//   pushes). A copy is never dropped because the upper tier is silent, only
//   when no follower below declared its group for `unused_ttl`. A `gone` from
//   above is an empty copy.
//
// Sans-IO: time comes in as `now`; messages go out through take_outgoing().

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/negative_cache.hpp"

namespace cascade::hub {

enum class UplinkMode : std::uint8_t { kFailover, kAll };

struct UplinkConfig {
  std::vector<std::string> endpoints;  // upstream hubs (shown in status; the count matters here)
  UplinkMode mode = UplinkMode::kFailover;
  Duration beat_interval{2000};
  Duration change_delay{20};  // changes of this tier travel up coalesced over this long
  Duration cache_ttl{0};      // 0: half the lease the upstream grants
  Duration negative_ttl{1000};
  Duration max_stale{std::chrono::minutes(5)};
  // A list (or config group) no consumer declared this long is dropped.
  Duration unused_ttl{std::chrono::seconds(30)};
  // Also how long a follower's first answer for a config group waits for the
  // upper tier's copy before the hub answers with what it holds.
  Duration query_timeout{1000};
  std::size_t max_negative_entries = 100'000;
  // Services waited for (declared upstream though the upper tier lacks
  // them) at most: every one rides in every beat upstream, so a storm of
  // names nobody registers must not grow the beats. Past it, a wait is
  // learnt by asking again, once per negative TTL.
  std::size_t max_waits = 1000;
  std::size_t max_registrations_per_beat = 2000;  // larger sets and deltas go in chunks
};

// What this tier knows of a service from above.
struct CrossTierView {
  std::uint64_t version = 0;               // the upstream's version of the list
  std::vector<proto::Instance> instances;  // each tagged with the tier holding it
  std::uint32_t tier = 0;                  // the tier that answered
  Duration age{0};                         // since the upstream last confirmed it
  bool stale = false;
};

enum class Outcome : std::uint8_t { kFound, kNotFound, kUnavailable };

struct CrossTierAnswer {
  Outcome outcome = Outcome::kUnavailable;
  std::optional<CrossTierView> view;  // kFound
  bool asked_now = false;             // the upstream was asked for this very answer
};

// An answer for a consumer that waited (its token came with lookup()).
struct AnsweredWaiter {
  std::uint64_t token;
  proto::ServiceKey service;
  CrossTierAnswer answer;
};

struct UplinkOutgoing {
  std::size_t upstream;  // index into UplinkConfig::endpoints
  proto::Message message;
};

class Uplink {
 public:
  Uplink(UplinkConfig config, std::string hub_id, std::uint32_t tier, std::uint64_t epoch,
         std::uint64_t rng_seed, MonoTime now);

  // This tier's aggregate: every instance of the hub's own registry.
  void upsert(MonoTime now, proto::Registration reg);
  void remove(MonoTime now, const proto::InstanceKey& key);

  // A consumer below looks the service up: an answer now, or nullopt and the
  // token comes back through take_answered() once the upstream answered.
  std::optional<CrossTierAnswer> lookup(MonoTime now, const proto::ServiceKey& service,
                                        std::uint64_t token);
  // A consumer below declared the service in its beat: keep it fresh. What is
  // known now: the upstream's version of the list (the list itself comes from
  // view()), or that the upper tier has no such service. Asks the upstream
  // when nothing is known or the "not found" is old.
  struct Known {
    std::optional<std::uint64_t> version;
    bool missing = false;
  };
  Known use(MonoTime now, const proto::ServiceKey& service);
  // The list served of the service (the first upstream's while it is fresh,
  // see serving_core), tagged with tiers.
  std::optional<CrossTierView> view(MonoTime now, const proto::ServiceKey& service) const {
    return best_view(now, service);
  }
  // How old the freshest list held of the service is, when it is past its
  // TTL (served stale: the upper tier did not confirm it in time); nullopt
  // when it is fresh or not held.
  std::optional<Duration> stale_age(MonoTime now, const proto::ServiceKey& service) const;
  // The upstream said recently that it has no such service.
  bool known_missing(MonoTime now, const proto::ServiceKey& service) const;

  // A follower below declared this config group: follow it upstream (the
  // links' beats declare it with the version of the upper copy held); a group
  // not followed before beats within change_delay.
  void follow_config(MonoTime now, std::string_view group);
  // The upper tier's first answer for the group is still to come: followed,
  // no copy yet, asked less than query_timeout ago, and the upper tier not
  // known to be down.
  bool config_pending(MonoTime now, std::string_view group) const;
  // The upper tier's copy of the group: every key the links hold, the
  // first-listed upstream's value where several do; nullopt when none is
  // held or the upper tier has no such group.
  std::optional<proto::ConfigValues> upper_config(std::string_view group) const;
  // How old the upper tier's copy of a followed group is when past the TTL
  // (the upper tier is unreachable, or itself serves it stale); nullopt when
  // fresh, still awaited, or not followed. A copy that never came counts from
  // when the group was first followed.
  std::optional<Duration> config_stale_age(MonoTime now, std::string_view group) const;
  // Groups whose upper copy came, changed or was dropped since the last call.
  std::vector<std::string> take_config_changes();
  // Followed groups the links' beats left out (past kMaxConfigUsesPerBeat), summed over beats.
  std::uint64_t config_groups_left_out() const;

  // The upper tier listed this address for the service (in what we hold of it).
  bool knows_address(MonoTime now, const proto::ServiceKey& service,
                     std::string_view address) const;
  // Sends a failure report up, to an upstream that answers (the first
  // otherwise); the upper tier passes it on to the hub holding the address.
  void send_report(MonoTime now, proto::FailureReport report);

  void on_message(MonoTime now, std::size_t upstream, const proto::Message& message);
  // The connection to `upstream` is back after a loss: its link beats at once
  // if it was waiting on that upstream (agent::AgentCore::on_link_up).
  void on_link_up(MonoTime now, std::size_t upstream);
  void on_timer(MonoTime now);
  MonoTime next_deadline() const;

  std::vector<UplinkOutgoing> take_outgoing();
  std::vector<AnsweredWaiter> take_answered();

  // Some upstream answered within its freshness window.
  bool reachable(MonoTime now) const;
  // Not reachable, and long enough after the start (query_timeout) that it
  // would have answered by now: waiting for the upper tier is pointless.
  bool known_down(MonoTime now) const;
  std::vector<proto::UpstreamStatus> status(MonoTime now) const;
  std::size_t cached_entries() const;
  std::size_t waits() const { return waits_.size(); }
  std::uint32_t upstream_tier() const { return tier_ + 1; }
  // Lookups of the cache by outcome, as status counters ("cross_tier_hits", ...).
  void append_counters(std::vector<std::pair<std::string, std::uint64_t>>& out) const;

 private:
  struct Question {
    std::size_t core;
    std::uint64_t request_id;
    std::vector<std::uint64_t> waiters;
  };

  agent::AgentCore& core_for(std::size_t upstream, std::size_t& from_hub);
  std::size_t upstream_of(std::size_t core, std::size_t hub) const;
  void take_actions(MonoTime now, std::size_t core, agent::AgentActions&& actions);
  void touch(MonoTime now, const proto::ServiceKey& service);
  void ask(MonoTime now, const proto::ServiceKey& service, std::optional<std::uint64_t> waiter);
  void settle(MonoTime now, const proto::ServiceKey& service, bool answered);
  void count_lookup(const std::optional<CrossTierAnswer>& answer);
  std::optional<CrossTierView> best_view(MonoTime now, const proto::ServiceKey& service) const;
  // The core whose copy of the service is served: the first holding one
  // within the TTL, else the one confirmed last; nullptr if none holds one.
  const agent::AgentCore* serving_core(MonoTime now, const proto::ServiceKey& service) const;
  std::size_t reachable_core(MonoTime now) const;  // the first that answers, else 0
  std::optional<CrossTierAnswer> answer_now(MonoTime now, const proto::ServiceKey& service) const;
  // Waits: services consumers below declare that the upper tier has not got.
  void wait_for(MonoTime now, const proto::ServiceKey& service);
  void end_wait(const proto::ServiceKey& service);
  void unpin(const proto::ServiceKey& service);  // on every link
  void end_waits_found(const proto::Message& message);
  void drop_unused_waits(MonoTime now);
  Duration ttl() const;

  UplinkConfig config_;
  std::uint32_t tier_;
  MonoTime started_;
  std::vector<agent::AgentCore> cores_;  // one per upstream (kAll), or one for all (kFailover)
  std::map<proto::ServiceKey, Question> questions_;
  std::map<std::pair<std::size_t, std::uint64_t>, proto::ServiceKey> question_by_request_;
  NegativeCache missing_;
  // Services consumers below wait for that the upper tier said it has not
  // got, by when a consumer last declared each: the links pin them, so their
  // beats declare them upstream and the upper tier pushes the first
  // registration (a list), as it pushes any change. Bounded like missing_.
  std::map<proto::ServiceKey, MonoTime> waits_;
  MonoTime next_wait_prune_{};
  std::vector<UplinkOutgoing> outgoing_;
  std::vector<AnsweredWaiter> answered_;
  std::set<std::string, std::less<>> config_changes_;
  // Lookups answered from the cache: fresh, "not found", stale (the upper
  // tier down); unavailable (down, nothing held); misses went to ask.
  struct LookupCounts {
    std::uint64_t hits = 0, negative_hits = 0, stale = 0, unavailable = 0, misses = 0;
  } lookups_;
};

}  // namespace cascade::hub
