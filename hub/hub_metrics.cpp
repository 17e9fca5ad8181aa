#include "cascade/hub/hub_metrics.hpp"

#include <algorithm>
#include <set>

#include "cascade/metrics/read_at_scrape.hpp"

namespace cascade::hub {

namespace {

using metrics::MetricType;
using metrics::SampledFamilies;

// Label value -> sample key, for a family with one label.
using Split = std::vector<std::pair<std::string, std::string>>;

// A family whose samples come from the status by key: one series without
// labels, or one per value of its single label.
class StateFamilies {
 public:
  StateFamilies(SampledFamilies& sampled, std::string prefix)
      : sampled_(sampled), prefix_(std::move(prefix)) {}

  void counter(const std::string& name, std::string help, std::string key) {
    sampled_.add({prefix_ + "_" + name, std::move(help), MetricType::kCounter}, std::move(key));
  }
  void gauge(const std::string& name, std::string help, std::string key) {
    sampled_.add({prefix_ + "_" + name, std::move(help), MetricType::kGauge}, std::move(key));
  }
  void counter(const std::string& name, std::string help, std::string label, const Split& split) {
    add(name, std::move(help), MetricType::kCounter, std::move(label), split);
  }
  void gauge(const std::string& name, std::string help, std::string label, const Split& split) {
    add(name, std::move(help), MetricType::kGauge, std::move(label), split);
  }

 private:
  void add(const std::string& name, std::string help, MetricType type, std::string label,
           const Split& split) {
    std::vector<SampledFamilies::Child> children;
    for (const auto& [value, key] : split)
      children.push_back({{value}, key});
    sampled_.add({prefix_ + "_" + name, std::move(help), type, {std::move(label)}},
                 std::move(children));
  }

  SampledFamilies& sampled_;
  std::string prefix_;
};

void add_registry_state(StateFamilies& f) {
  f.gauge("nodes", "Nodes holding a lease here, by kind (agents, hubs of the tier below).", "kind",
          {{"agent", "agent_nodes"}, {"hub", "child_hubs"}});
  f.gauge("services", "Services in the registry.", "services");
  f.gauge("instances", "Instances registered here (every state).", "instances");
  f.gauge("instances_in_state",
          "Instances by what consumers are served: up, isolated by callers' reports, "
          "unconfirmed (lease ran out, held by eviction protection), out of service (an "
          "operator's mark). An instance may be in several.",
          "state",
          {{"up", "instances_up"},
           {"isolated", "isolated"},
           {"unconfirmed", "unconfirmed"},
           {"out_of_service", "instances_out_of_service"}});
  f.gauge("static_instances", "Instances an operator added (no agent, no lease).",
          "instances_static");
  f.gauge("out_of_service_marks", "Operators' out-of-service marks, present instances or not.",
          "out_of_service_marks");
  f.gauge("subscriptions", "Services consumers follow here (one per consumer and service).",
          "subscriptions");
  f.gauge("cross_tier_cached_services", "Services held from the upper tier.", "cross_tier_entries");
  f.counter("services_reclaimed_total",
            "Service entries forgotten: no instance, rule or consumer for the empty-service grace.",
            "services_reclaimed");
  f.gauge("unregistered_services",
          "Service entries nothing is registered in: consumers waiting for a service, "
          "cross-tier lists.",
          "services_unregistered");
  f.counter("waits_capped_total",
            "Consumers' waits for a service nobody registered, not followed (the cap was "
            "reached): they learn it at their next beat.",
            "waits_capped");
  f.gauge("cross_tier_waits",
          "Services declared to the upper tier though it has none (consumers here wait).",
          "cross_tier_waits");
}

void add_config_families(StateFamilies& f) {
  f.gauge("config_groups", "Config groups served here.", "config_groups");
  f.gauge("config_subscriptions", "Config groups nodes follow here (one per node and group).",
          "config_subscriptions");
  f.counter("config_updates_sent_total", "Config group updates sent to followers, by kind.", "kind",
            {{"delta", "config_updates_delta"},
             {"full", "config_updates_full"},
             {"gone", "config_updates_gone"}});
  f.counter("config_edits_total", "Operators' config edits and rollbacks, by outcome.", "result",
            {{"applied", "config_edits"}, {"refused", "config_edits_refused"}});
  f.counter("config_pushes_total", "Config changes pushed to followers between their beats.",
            "config_pushes");
  f.counter("config_lists_requested_total",
            "Replies that asked a node for its list of followed groups (its digest did not "
            "match what the hub believes it holds).",
            "config_lists_requested");
  f.counter("config_served_stale_total",
            "Followed groups named stale in beat replies: the upper tier's copy is past its TTL.",
            "config_served_stale");
  f.counter(
      "config_pushes_held_total", "Config pushes held back, by cap.", "reason",
      {{"rate", "config_pushes_over_rate"}, {"notify_switch", "config_pushes_held_by_switch"}});
}

void add_beat_counters(StateFamilies& f) {
  f.counter("beats_total", "Heartbeats handled.", "beats");
  f.counter("messages_refused_total", "Messages refused, by reason.", "reason",
            {{"stale_seq", "beats_stale_seq"},
             {"stale_epoch", "stale_epoch"},
             {"invalid", "invalid_messages"},
             {"unexpected", "unexpected_messages"},
             {"forbidden", "forbidden"},
             {"epoch_jump", "epoch_jumps"}});
  f.counter("registration_sets_total", "Registration sets applied, by kind.", "kind",
            {{"full", "full_sets_received"}, {"delta", "deltas_received"}});
  f.counter("full_sets_requested_total", "Replies that asked a node for its full set.",
            "full_sets_requested");
  f.gauge("interval_stretch",
          "How many times longer than the configured ones the intervals and leases granted now "
          "are: above 1 while the serving thread falls behind (overload).",
          "interval_stretch");
  f.counter("interval_stretch_changes_total",
            "Changes of the granted interval's stretch, by direction.", "direction",
            {{"longer", "interval_stretched"}, {"shorter", "interval_relaxed"}});
  f.counter("frames_shed_total",
            "Frames answered busy unread: they waited past the queue bound (--shed-after-ms).",
            "frames_shed");
  f.counter("expiries_postponed_total",
            "Leases that ran out while the hub shed frames, extended until their nodes could "
            "beat again.",
            "expiries_postponed");
  f.counter("deregistrations_total", "Graceful deregistrations.", "deregistrations");
  f.counter("queries_total", "Lookups answered.", "queries");
  f.counter("queries_not_found_total", "Lookups of a service with no instance.",
            "queries_not_found");
  f.counter("queries_cross_tier_total", "Lookups this tier could not answer alone.",
            "queries_cross_tier");
  f.counter("updates_sent_total", "Service updates sent to consumers, by kind.", "kind",
            {{"delta", "updates_delta"},
             {"full", "updates_full"},
             {"gone", "updates_gone"},
             {"cross_tier", "updates_cross_tier"}});
  f.counter("stale_lists_served_total", "Lists served stale (the upper tier did not confirm them).",
            "updates_stale");
  f.counter("pushes_total", "Updates pushed to consumers between their beats.", "pushes");
  f.counter("pushes_held_total", "Pushes held back, by cap.", "reason",
            {{"rate", "pushes_over_rate"}, {"notify_switch", "pushes_held_by_switch"}});
  f.counter("cross_tier_lookups_total", "Lookups of the upper tier's cache, by outcome.", "result",
            {{"hit", "cross_tier_hits"},
             {"negative_hit", "cross_tier_negative_hits"},
             {"stale", "cross_tier_stale"},
             {"miss", "cross_tier_misses"},
             {"unavailable", "cross_tier_unavailable"}});
}

void add_expiry_counters(StateFamilies& f) {
  f.counter("nodes_expired_total", "Nodes whose lease ran out.", "nodes_expired");
  f.counter("instances_expired_total", "Instances removed by lease expiry.", "instances_expired");
  f.counter("expiry_deferred_total", "Ticks that reached the per-tick expiry cap.",
            "expiry_deferred");
  f.counter("expiries_held_total", "Expired leases eviction protection held.", "expiries_held");
  f.counter("expiry_cap_holds_total", "Expiries held by the service or registry cap.",
            "expiry_cap_holds");
  f.counter("held_released_max_hold_total", "Held nodes released after the longest hold.",
            "held_released_max_hold");
  f.counter("nodes_confirmed_dead_total", "Held nodes whose every address refused a connection.",
            "nodes_confirmed_dead");
  f.gauge("held_nodes", "Nodes eviction protection holds now, by reason.", "reason",
          {{"budget", "held_for_budget"}, {"partition", "held_for_partition"}});
  f.gauge("partitioned_sources", "Sources (subnets, proxies) held as cut off.",
          "partitioned_sources");
  f.gauge("eviction_protection_enabled", "1 while eviction protection is on.",
          "eviction_protection");
  f.gauge("notify_share_ratio", "Share of consumers pushed to per interval (notify switch).",
          "notify_share");
  f.counter("liveness_probes_sent_total", "TCP probes of held nodes' addresses.", "probes_sent");
  f.counter("liveness_probes_total", "Probe results, by outcome.", "result",
            {{"refused", "probes_refused"},
             {"accepted", "probes_accepted"},
             {"no_answer", "probes_no_answer"}});
  f.counter("liveness_probes_capped_total", "Probes not made: over the cap.", "probes_capped");
}

void add_fast_fail_counters(StateFamilies& f) {
  f.counter("failure_signals_received_total", "Failure signals in callers' reports.",
            "failure_signals");
  f.counter("failure_signals_total", "Failure signals, by where they went.", "route",
            {{"counted", "signals_counted"},
             {"sent_up", "signals_sent_up"},
             {"sent_down", "signals_sent_down"},
             {"unknown", "signals_unknown"},
             {"dropped", "signals_dropped"}});
  f.counter("reports_refused_on_held_total", "Reports about held nodes' addresses refused.",
            "refused_reports_on_held");
  f.counter("isolations_total", "Instances isolated by callers' reports.", "isolations");
  f.counter("readmissions_total", "Isolations that ended.", "readmissions");
  f.counter("isolations_capped_total", "Isolations held back by the per-service cap.",
            "isolations_capped");
  f.gauge("isolation_tracked_instances", "Instances with failure reports being counted.",
          "isolation_tracked");
  f.counter("admin_requests_total", "Operator commands (all audited).", "admin_requests");
  f.counter("admin_refused_total", "Operator commands refused.", "admin_refused");
}

void add_upstreams(StateFamilies& f, const std::vector<std::string>& upstreams) {
  const auto split = [&](const std::string& field) {
    Split out;
    for (std::size_t i = 0; i < upstreams.size(); ++i)
      out.emplace_back(upstreams[i], "upstream." + std::to_string(i) + "." + field);
    return out;
  };
  if (upstreams.empty()) return;
  f.gauge("upstream_reachable", "1 while the upstream hub answers.", "upstream",
          split("reachable"));
  f.gauge("upstream_current", "1 for the upstream beaten to now.", "upstream", split("current"));
  f.gauge("upstream_last_reply_age_seconds", "Time since the upstream last answered.", "upstream",
          split("last_reply_age_seconds"));
  f.gauge("upstream_lease_seconds", "The lease the upstream granted.", "upstream",
          split("lease_seconds"));
}

// Counters shown another way, or only for `cascadectl status`.
const std::set<std::string>& shown_elsewhere() {
  static const std::set<std::string> names{
      "decode_errors",  // by kind, from the shell (ShellMetrics)
      "held_nodes",     // as held_nodes{reason}: budget and partition
  };
  return names;
}

void add_upstream_sample(SampledFamilies::Sample& sample, std::size_t index,
                         const proto::UpstreamStatus& up) {
  const auto key = [index](const char* field) {
    return "upstream." + std::to_string(index) + "." + field;
  };
  sample[key("reachable")] = up.reachable ? 1 : 0;
  sample[key("current")] = up.current ? 1 : 0;
  if (up.last_reply_ms >= 0) sample[key("last_reply_age_seconds")] = up.last_reply_ms / 1000.0;
  if (up.lease_ms > 0) sample[key("lease_seconds")] = up.lease_ms / 1000.0;
}

}  // namespace

ShellMetrics::ShellMetrics(metrics::Registry& registry, const std::string& prefix)
    : frames_received_(registry.counter(prefix + "_frames_received_total",
                                        "ZeroMQ frames received from peers below.")),
      bytes_received_(registry.counter(prefix + "_received_bytes_total",
                                       "Payload bytes of the frames received.")),
      frames_sent_(registry.counter(prefix + "_frames_sent_total", "Frames sent to peers below.")),
      bytes_sent_(
          registry.counter(prefix + "_sent_bytes_total", "Payload bytes of the frames sent.")),
      frame_handling_(registry.histogram(
          prefix + "_frame_handling_seconds",
          "Time to decode, handle and answer one frame (a batch of beats counts once).",
          {1e-5, 2.5e-5, 5e-5, 1e-4, 2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.1, 0.5})) {
  auto& replies =
      registry.counter(prefix + "_replies_total", "Messages answered, by type.", {"type"});
  auto& other = replies.with({"other"});  // a request type: never sent as an answer
  replies_.fill(&other);
  for (const auto type :
       {proto::MsgType::kDownBeat, proto::MsgType::kQueryReply, proto::MsgType::kDeregisterAck,
        proto::MsgType::kStatusReply, proto::MsgType::kServicesReply, proto::MsgType::kError,
        proto::MsgType::kReportAck, proto::MsgType::kAdminReply})
    replies_[static_cast<std::size_t>(type)] = &replies.with({proto::to_string(type)});
  auto& errors = registry.counter(prefix + "_decode_errors_total",
                                  "Frames or messages that failed to decode, by kind.", {"kind"});
  for (std::uint8_t c = 1; c <= proto::kMaxErrorCode; ++c)
    decode_errors_[c] = &errors.with({proto::to_string(static_cast<proto::ErrorCode>(c))});
  // A failure without a code (a frame of the wrong shape) is malformed.
  decode_errors_[0] = decode_errors_[static_cast<std::size_t>(proto::ErrorCode::kMalformed)];
}

StoreMetrics::StoreMetrics(metrics::Registry& registry)
    : commit_seconds_(registry.histogram(
          "cascade_hub_store_commit_seconds", "Time to commit one batch of changes to SQLite.",
          {1e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 0.01, 0.025, 0.05, 0.1, 0.25, 1, 5})),
      commit_rows_(registry.histogram("cascade_hub_store_commit_rows",
                                      "Rows written by one commit (a batch of changes).",
                                      {1, 10, 100, 1000, 10'000, 100'000, 1'000'000})),
      commit_failures_(registry.counter("cascade_hub_store_commit_failures_total",
                                        "Commits that failed (the batch is retried).")) {}

SampledFamilies::Sample sample_of(
    const std::vector<std::pair<std::string, std::uint64_t>>& counters) {
  SampledFamilies::Sample sample;
  for (const auto& [name, value] : counters)
    sample[name] = static_cast<double>(value);
  return sample;
}

SampledFamilies::Sample sample_of(const proto::StatusReply& status) {
  auto sample = sample_of(status.counters);
  sample["nodes"] = static_cast<double>(status.nodes);
  sample["child_hubs"] = static_cast<double>(status.child_hubs);
  sample["agent_nodes"] = static_cast<double>(status.nodes - status.child_hubs);
  sample["services"] = static_cast<double>(status.services);
  sample["instances"] = static_cast<double>(status.instances);
  sample["cross_tier_entries"] = static_cast<double>(status.cross_tier_entries);
  sample["isolated"] = static_cast<double>(status.isolated);
  sample["unconfirmed"] = static_cast<double>(status.unconfirmed);
  sample["eviction_protection"] = status.eviction_protection ? 1 : 0;
  sample["notify_share"] = status.notify_share_percent / 100.0;
  if (auto it = sample.find("held_nodes"); it != sample.end())
    sample["held_for_budget"] = it->second - sample["held_for_partition"];
  for (std::size_t i = 0; i < status.upstreams.size(); ++i)
    add_upstream_sample(sample, i, status.upstreams[i]);
  return sample;
}

void add_hub_state_families(SampledFamilies& sampled, const std::vector<std::string>& upstreams) {
  StateFamilies f(sampled, "cascade_hub");
  add_registry_state(f);
  add_config_families(f);
  add_beat_counters(f);
  add_expiry_counters(f);
  add_fast_fail_counters(f);
  add_upstreams(f, upstreams);
  add_listener_families(sampled, "cascade_hub");
}

void add_listener_families(SampledFamilies& sampled, const std::string& prefix) {
  StateFamilies f(sampled, prefix);
  f.gauge("connections", "Connections of the listening socket now, by trust.", "state",
          {{"open", "connections_open"}, {"trusted", "connections_trusted"}});
  f.counter("connection_events_total", "Connections of the listening socket, by event.", "event",
            {{"accepted", "connections_accepted"},
             {"refused_at_limit", "connections_refused"},
             {"idle_closed", "connections_idle_closed"},
             {"closed", "connections_closed"},
             {"handshake_failed", "handshakes_failed"}});
  f.counter("idle_closes_deferred_total", "Ticks at which the per-tick cap held closes back.",
            "idle_closes_deferred");
  f.counter("curve_handshakes_total", "CurveZMQ handshakes, by ZAP verdict.", "result",
            {{"accepted", "zap_accepted"}, {"refused", "zap_refused"}});
  f.counter("unauthenticated_total", "Messages refused: their key is no longer authorised.",
            "unauthenticated");
}

void add_proxy_state_families(SampledFamilies& sampled) {
  StateFamilies f(sampled, "cascade_proxy");
  f.counter("messages_forwarded_total", "Agents' messages accepted for the hub above.",
            "forwarded");
  f.counter("messages_refused_total", "Agents' messages refused here, by reason.", "reason",
            {{"type", "rejected"}, {"forbidden", "forbidden"}});
  f.counter("batches_total", "Batches sent to the hub above.", "batches");
  f.counter("replies_routed_total", "Replies from above delivered to agents.", "replies_routed");
  f.counter("unmatched_replies_total", "Replies from above that nothing waited for.",
            "unmatched_replies");
  f.counter("timed_out_total", "Forwarded messages given up on: no reply in time.", "timed_out");
  f.counter("reports_total", "Failure reports sent on at once.", "reports");
  f.counter("pushes_total", "Pushes from above, by whether their node could be reached.", "result",
            {{"routed", "pushes_routed"}, {"unroutable", "pushes_unroutable"}});
  add_listener_families(sampled, "cascade_proxy");
}

void add_hub_info(metrics::Registry& registry, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>> labels) {
  metrics::FamilyInfo info{prefix + "_info", "Constant 1, labelled with who this is.",
                           MetricType::kGauge};
  std::vector<std::string> values;
  for (auto& [name, value] : labels) {
    info.label_names.push_back(name);
    values.push_back(value);
  }
  auto read = std::make_unique<metrics::ReadAtScrape>();
  read->add(std::move(info), {{std::move(values), [] { return 1.0; }}});
  registry.add(std::move(read));
}

std::vector<std::string> unshown_status_counters(const SampledFamilies& sampled,
                                                 const proto::StatusReply& status) {
  const auto keys = sampled.keys();
  const std::set<std::string> shown(keys.begin(), keys.end());
  std::vector<std::string> missing;
  for (const auto& [name, value] : status.counters)
    if (!shown.contains(name) && !shown_elsewhere().contains(name)) missing.push_back(name);
  return missing;
}

}  // namespace cascade::hub
