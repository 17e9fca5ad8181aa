#pragma once
// The messages behind the golden samples in schemas/golden/. The generator
// (golden_gen.cpp) encodes them and the codec tests build the same values to
// compare against, so the expected content lives here once.
//
// Changing anything here changes committed wire samples: regenerate them
// (schemas/README.md) and review the diff as a wire-format change.

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/digest.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::golden {

using proto::Deregister;
using proto::DeregisterAck;
using proto::DownBeat;
using proto::ErrorCode;
using proto::ErrorReply;
using proto::Instance;
using proto::InstanceStatus;
using proto::Message;
using proto::Query;
using proto::QueryReply;
using proto::Registration;
using proto::ServiceKey;
using proto::ServicesReply;
using proto::ServicesRequest;
using proto::ServiceUpdate;
using proto::StatusReply;
using proto::StatusRequest;
using proto::UpBeat;
using proto::UpdateKind;
using RouteRules = std::vector<proto::RouteRuleText>;

// Service keys in the style of the heartbeat networks cascade replaces:
// feature-component-/path.
inline ServiceKey cache_queue() {
  return {"healthmanager-HealthManagerServerWorker-/hm/cache/q", "default"};
}
inline ServiceKey query_api() {
  return {"healthmanager-HealthManagerServerWorker-/hm/query", "default"};
}
inline ServiceKey ingest() {
  return {"monitorframework-MonitorDataFrameworkWorker-/mdf/ingest", "prod-eu"};
}
inline ServiceKey app_config() {
  return {"apphub-AppHubServerWorker-/ah/config", "default"};
}

inline constexpr std::string_view kNodeA = "node-10.20.4.17-hm01";
inline constexpr std::string_view kNodeB = "node-10.20.4.18-mdf02";
inline constexpr std::string_view kHubId = "hub-eu1-a";
inline constexpr std::uint64_t kHubEpoch = 7;
inline constexpr std::uint64_t kAgentEpoch = 1732954800123;  // wall ms at agent start

inline Instance instance(std::string id, std::string address, std::string zone,
                         InstanceStatus status, std::map<std::string, std::string> metadata) {
  return Instance{std::move(id), std::move(address), 100, std::move(zone),
                  status,        std::move(metadata)};
}

inline Instance cache_q_1() {
  return instance("hm01-cache-q", "10.20.4.17:7070", "eu1-a", InstanceStatus::kUp,
                  {{"build", "2024.11.3"}, {"proto", "http"}, {"weight.reason", "default"}});
}
inline Instance cache_q_2() {
  auto in = instance("hm02-cache-q", "10.20.4.21:7070", "eu1-b", InstanceStatus::kStarting,
                     {{"build", "2024.11.4"}, {"proto", "http"}});
  in.weight = 50;  // warming up: half the traffic
  return in;
}
inline Instance query_1() {
  return instance("hm01-query", "http://10.20.4.17:7080/hm/query", "eu1-a", InstanceStatus::kUp,
                  {{"proto", "http"}});
}
inline Instance ingest_2() {
  auto in = instance("mdf05-ingest", "10.20.5.33:9092", "", InstanceStatus::kOutOfService, {});
  in.weight = 0;
  return in;
}

// Node A's registration set, in canonical order so the digest is the one on the wire.
inline std::vector<Registration> node_a_registrations() {
  std::vector<Registration> regs{
      {cache_queue(), cache_q_1()}, {query_api(), query_1()}, {cache_queue(), cache_q_2()}};
  proto::canonicalize(regs);
  return regs;
}

// An agent's beat right after its set changed: the set travels with its digest.
inline UpBeat upbeat() {
  UpBeat m;
  m.node_id = std::string(kNodeA);
  m.epoch = kAgentEpoch;
  m.seq = 4821;
  m.registrations = node_a_registrations();
  m.digest = proto::digest_of(*m.registrations);
  m.uses = {{ingest(), 11}, {app_config(), 4}, {query_api(), 0}};
  return m;
}

// An L1 hub's beat to its L2: its tier's aggregate changed since the L2 last
// acknowledged it, so only the change travels (one instance added, one gone).
inline UpBeat hub_delta_upbeat() {
  UpBeat m;
  m.node_id = std::string(kHubId);
  m.epoch = kHubEpoch;
  m.seq = 90210;
  m.digest = 0x5ca1ab1e0ddba11ULL;  // of the whole aggregate, which this sample does not show
  proto::RegistrationDelta delta;
  delta.upserts = {{ingest(), ingest_2()}};
  delta.removed = {{ingest(), "mdf03-ingest"}};
  m.delta = std::move(delta);
  m.uses = {{app_config(), (std::uint64_t{1} << 63) | 12}};
  m.sender_tier = 1;
  return m;
}

// A reply of the sample hub to node A's beat `ack_seq`, before its updates.
inline DownBeat reply_to_node_a(std::uint64_t ack_seq) {
  DownBeat m;
  m.hub_id = std::string(kHubId);
  m.hub_epoch = kHubEpoch;
  m.node_id = std::string(kNodeA);
  m.ack_seq = ack_seq;
  m.lease_ms = 45000;
  return m;
}

// The hub's answer to upbeat(): one update of each kind.
inline DownBeat downbeat() {
  auto m = reply_to_node_a(4821);
  // Full and gone updates always say the rules (none here); a delta only when
  // they changed, so this one leaves them as they were (nil).
  m.updates = {
      ServiceUpdate{ingest(), 11, 13, UpdateKind::kDelta, {ingest_2()}, {"mdf03-ingest"}},
      ServiceUpdate{query_api(), 0, 42, UpdateKind::kFull, {query_1()}, {}, RouteRules{}},
      ServiceUpdate{app_config(), 4, 5, UpdateKind::kGone, {}, {}, RouteRules{}},
  };
  return m;
}

// An operator's rules for the query service: consumers in eu1-a stay in
// eu1-a, one subnet may call no instance at all (a forced deny), and a
// disabled rule kept for later.
inline RouteRules query_api_routes() {
  return {
      {"zone = eu1-a => zone = eu1-a", 20, false, true},
      {"host = 10.20.9.* =>", 10, true, true},
      {"=> metadata.build = 2024.11.*", 0, false, false},
  };
}

// Revision 3: the rules were set after the version node A holds, so its
// delta carries them (the list itself did not change).
inline DownBeat downbeat_with_routes() {
  auto m = reply_to_node_a(4830);
  m.updates = {ServiceUpdate{query_api(), 42, 44, UpdateKind::kDelta, {}, {}, query_api_routes()}};
  return m;
}

inline Query query() {
  return Query{9001, std::string(kNodeA), cache_queue()};
}

inline QueryReply query_reply() {
  QueryReply m{9001, std::string(kHubId),       kHubEpoch, cache_queue(), true,
               43,   {cache_q_1(), cache_q_2()}};
  m.tier = 2;
  m.source = proto::AnswerSource::kCache;
  m.age_ms = 850;
  m.routes = RouteRules{};  // the answering hub's own rules for the service: none
  for (auto& in : m.instances)
    in.tier = 2;  // both came from the L2's registry
  return m;
}

inline Deregister deregister() {
  return Deregister{std::string(kNodeA), kAgentEpoch, 4822};
}

inline DeregisterAck deregister_ack() {
  return DeregisterAck{std::string(kNodeA), 4822, 3};
}

inline StatusRequest status_request() {
  return StatusRequest{77};
}

inline StatusReply status_reply() {
  StatusReply m;
  m.request_id = 77;
  m.hub_id = std::string(kHubId);
  m.tier = 1;
  m.hub_epoch = kHubEpoch;
  m.uptime_ms = 93784512;  // 1 d 2 h 3 min 4.512 s
  m.nodes = 1250;
  m.services = 340;
  m.instances = 5120;
  m.counters = {{"beats_received", 123456789},
                {"decode_failures", 3},
                {"full_sets_requested", 41},
                {"deltas_sent", 998877}};
  m.zone = "eu1";
  m.upstreams = {{"tcp://l2-a.eu:7700", "l2-eu-a", true, true, 412, 9000},
                 {"tcp://l2-b.eu:7700", "", false, false, -1, 0}};
  m.child_hubs = 0;
  m.cross_tier_entries = 12;
  m.security = "curve";
  return m;
}

inline ServicesRequest services_request() {
  return ServicesRequest{78};
}

inline ServicesReply services_reply() {
  return ServicesReply{78,
                       {{cache_queue(), 43, 2, 1}, {query_api(), 42, 1, 1}, {ingest(), 13, 4, 3}}};
}

inline ErrorReply error_reply() {
  return ErrorReply{ErrorCode::kInvalid, "registration.address longer than 1024 bytes", 4823};
}

// A hub's reply batch to a proxy that forwarded two beats and a query: item i
// answers request i. The DownBeat carries metadata, so this frame reaches the
// deepest nesting a v1 frame has (batch > list > DownBeat > updates > update >
// upserts > instance > metadata).
inline std::vector<Message> reply_batch() {
  DownBeat to_b;
  to_b.hub_id = std::string(kHubId);
  to_b.hub_epoch = kHubEpoch;
  to_b.node_id = std::string(kNodeB);
  to_b.ack_seq = 310;
  to_b.send_full = true;  // the hub does not know node B's digest
  to_b.lease_ms = 45000;
  to_b.updates = {ServiceUpdate{cache_queue(), 41, 43, UpdateKind::kDelta, {cache_q_2()}, {}}};
  QueryReply not_found{
      9002, std::string(kHubId), kHubEpoch, {"billing-InvoiceWorker-/inv", "default"}, false, 0,
      {}};
  ErrorReply bad_version{ErrorCode::kUnknownVersion, "unsupported protocol version 2", 0};
  return {to_b, not_found, bad_version};
}

// Revision 3: a hub pushes an isolation between beats; the isolated
// instance carries the hub's health verdict and its reason.
inline DownBeat isolation_push() {
  DownBeat m;
  m.hub_id = std::string(kHubId);
  m.hub_epoch = kHubEpoch;
  m.node_id = std::string(kNodeB);
  m.push = true;
  auto isolated = cache_q_1();
  isolated.health = proto::Health::kIsolated;
  isolated.health_reason = "isolated 10 s: 5 failure reports from 2 callers in 10 s";
  m.updates = {ServiceUpdate{cache_queue(), 43, 44, UpdateKind::kDelta, {isolated}, {}}};
  return m;
}

// Revision 4: an L1 hub cut off from its upper tier still serves the
// cross-tier list it cached, and tells the consumer how old it is.
inline DownBeat downbeat_stale() {
  auto m = reply_to_node_a(4902);
  m.stale = {proto::StaleList{cache_queue(), 41250}};
  return m;
}

// Revision 4: the first part of a full list too large for one frame; the
// rest follows in push frames, the last part without `more`.
inline DownBeat downbeat_first_part() {
  auto m = reply_to_node_a(4903);
  ServiceUpdate part{cache_queue(), 0, 43, UpdateKind::kFull, {cache_q_1()}, {}, RouteRules{}};
  part.more = true;
  m.updates = {part};
  return m;
}

// A caller saw two timeouts and a refused connection: reported at once.
inline proto::FailureReport failure_report() {
  proto::FailureReport m;
  m.request_id = 0;  // fire and forget, as agents send it
  m.signals = {
      {cache_queue(), "10.20.4.17:7070", proto::FailureKind::kTimeout, std::string(kNodeB), 2},
      {query_api(), "http://10.20.4.17:7080/hm/query", proto::FailureKind::kConnectionRefused,
       std::string(kNodeB), 1},
  };
  return m;
}

inline proto::ReportAck report_ack() {
  return proto::ReportAck{31, 1, 1, 0, 1};
}

// An operator takes an instance out of service (kept across hub restarts).
inline proto::AdminRequest admin_request() {
  proto::AdminRequest m;
  m.request_id = 32;
  m.op = proto::AdminOp::kMarkOutOfService;
  m.actor = "ops@bastion-eu1";
  m.service = cache_queue();
  m.instance_id = "hm01-cache-q";
  return m;
}

// An instance without an agent, added by hand.
inline proto::AdminRequest admin_add_static() {
  proto::AdminRequest m;
  m.request_id = 33;
  m.op = proto::AdminOp::kAddStatic;
  m.actor = "ops@bastion-eu1";
  m.service = {"legacy-mainframe-/mf/ledger", "default"};
  m.instance_id = "mf-ledger-1";
  m.instance = instance("mf-ledger-1", "10.9.0.5:3270", "eu1-a", InstanceStatus::kUp, {});
  return m;
}

// An operator sets the query service's rules (replacing any it had).
inline proto::AdminRequest admin_set_routes() {
  proto::AdminRequest m;
  m.request_id = 34;
  m.op = proto::AdminOp::kSetRoutes;
  m.actor = "ops@bastion-eu1";
  m.service = query_api();
  m.routes = query_api_routes();
  return m;
}

// Node A's steady beat as a proxy forwards it: the proxy names the key node A
// authenticated with (revision 5, section 5.15).
inline UpBeat upbeat_via_proxy() {
  UpBeat m;
  m.node_id = std::string(kNodeA);
  m.epoch = kAgentEpoch;
  m.seq = 4822;
  m.digest = proto::digest_of(node_a_registrations());
  m.uses = {{ingest(), 11}};
  m.on_behalf_of = "ingest-writer";
  return m;
}

// A refusal of the sample beat: its key may not register that service.
inline ErrorReply error_forbidden() {
  return ErrorReply{ErrorCode::kForbidden,
                    "key ingest-writer may not register service "
                    "healthmanager-HealthManagerServerWorker-/hm/cache/q (register scope)",
                    4821};
}

inline proto::AdminRequest admin_reload_keys() {
  proto::AdminRequest m;
  m.request_id = 34;
  m.op = proto::AdminOp::kReloadKeys;
  m.actor = "ops@bastion-eu1";
  return m;
}

// ---- Revision 6: the config centre (section 5.16).

inline constexpr std::string_view kConfigGroup = "healthmanager";
inline constexpr std::string_view kConfigSharedGroup = "shared-eu";
inline constexpr std::string_view kUpperHubId = "l2-eu-a";
inline constexpr std::uint64_t kUpperHubEpoch = 3;
// Config versions, as hubs issue them: (hub_epoch << 40) | counter.
inline constexpr std::uint64_t config_version(std::uint64_t epoch, std::uint64_t counter) {
  return (epoch << 40) | counter;
}
// A binary value: a feature mask as raw bytes, 0x00 and 0xff among them.
inline std::string feature_mask() {
  return std::string("\x00\x01\x7f\x80\xfe\xff", 6);
}

inline proto::ConfigEntry config_entry(std::string key, std::string value, std::uint32_t tier,
                                       std::string_view hub, std::uint64_t version) {
  return {std::move(key), std::move(value), {tier, std::string(hub), version}};
}

// Node A's steady beat, following two groups: one it holds at a version, one
// it has just started to follow (0: nothing held yet).
inline UpBeat upbeat_configs() {
  UpBeat m;
  m.node_id = std::string(kNodeA);
  m.epoch = kAgentEpoch;
  m.seq = 4823;
  m.digest = proto::digest_of(node_a_registrations());
  m.uses = {{ingest(), 13}};
  m.configs = {{std::string(kConfigGroup), config_version(kHubEpoch, 12)},
               {std::string(kConfigSharedGroup), 0}};
  return m;
}

// The hub's answer to upbeat_configs(): the new group whole (one value set
// above, at L2, one binary value set here), the held one as a delta that
// changes a key and removes two.
inline DownBeat downbeat_config_updates() {
  auto m = reply_to_node_a(4823);
  proto::ConfigUpdate full{
      std::string(kConfigSharedGroup),
      0,
      config_version(kHubEpoch, 31),
      UpdateKind::kFull,
      {config_entry("log.level", "info", 2, kUpperHubId, config_version(kUpperHubEpoch, 88)),
       config_entry("features.mask", feature_mask(), 1, kHubId, config_version(kHubEpoch, 30))},
      {}};
  proto::ConfigUpdate delta{
      std::string(kConfigGroup),
      config_version(kHubEpoch, 12),
      config_version(kHubEpoch, 14),
      UpdateKind::kDelta,
      {config_entry("cache.ttl_ms", "30000", 1, kHubId, config_version(kHubEpoch, 14))},
      {"degrade.hm-query", "limit.hm-query.max_in_flight"}};
  m.config_updates = {full, delta};
  return m;
}

// Revision 6: an L1 hub cut off from its upper tier answers node A's beat:
// the held group is current (its keys are set here), the shared group comes
// from above and is past its TTL, named stale with its age.
inline DownBeat downbeat_config_stale() {
  auto m = reply_to_node_a(4824);
  m.stale_configs = {{std::string(kConfigSharedGroup), 41250}};
  return m;
}

// Node A's next beat: its list is the one it sent (its versions as the reply
// to upbeat_configs() left them), so the digest stands for it.
inline UpBeat upbeat_config_digest() {
  auto m = upbeat_configs();
  m.seq = 4825;
  m.configs.clear();
  m.configs_digest =
      proto::config_uses_digest({{std::string(kConfigGroup), config_version(kHubEpoch, 14)},
                                 {std::string(kConfigSharedGroup), config_version(kHubEpoch, 31)}});
  return m;
}

// A hub that believes node A holds other versions than its digest says (a
// push was lost on the way) asks for the list.
inline DownBeat downbeat_send_configs() {
  auto m = reply_to_node_a(4825);
  m.send_configs = true;
  return m;
}

// A hub whose serving thread fell behind spaces node A's beats out: twice
// the interval it expects (2 s), and a lease as much longer (revision 7).
inline DownBeat downbeat_slower() {
  auto m = reply_to_node_a(4826);
  m.interval_ms = 4000;
  m.lease_ms = 90000;
  return m;
}

// A hub past its queue bound sheds the sample beat unread (protocol section
// 5.18): it names the beat's seq and grants the stretched interval.
inline ErrorReply error_busy() {
  return ErrorReply{ErrorCode::kBusy, "hub overloaded: frame waited 27 ms in its queue", 4826,
                    4000};
}

// An operator sets one key and removes another of a group, in one change.
inline proto::AdminRequest admin_config_edit() {
  proto::AdminRequest m;
  m.request_id = 35;
  m.op = proto::AdminOp::kConfigEdit;
  m.actor = "ops@bastion-eu1";
  m.config_group = std::string(kConfigGroup);
  m.config_edits = {{"cache.ttl_ms", "30000"}, {"degrade.hm-query", std::nullopt}};
  return m;
}

// An operator puts this hub's keys of the group back as they were at a version.
inline proto::AdminRequest admin_config_rollback() {
  proto::AdminRequest m;
  m.request_id = 36;
  m.op = proto::AdminOp::kConfigRollback;
  m.actor = "ops@bastion-eu1";
  m.config_group = std::string(kConfigGroup);
  m.config_version = config_version(kHubEpoch, 12);
  return m;
}

inline proto::ConfigRequest config_request() {
  return {37, proto::ConfigView::kGet, std::string(kConfigGroup), "cache.ttl_ms"};
}

// The answer to a get of the whole group: this hub's keys over L2's, each
// with its origin.
inline proto::ConfigReply config_reply() {
  proto::ConfigReply m;
  m.request_id = 38;
  m.ok = true;
  m.group = std::string(kConfigGroup);
  m.version = config_version(kHubEpoch, 14);
  m.entries = {
      config_entry("cache.ttl_ms", "30000", 1, kHubId, config_version(kHubEpoch, 14)),
      config_entry("limit.hm-cache-q.max_in_flight", "64", 2, kUpperHubId,
                   config_version(kUpperHubEpoch, 90)),
  };
  return m;
}

// The history of this hub's own keys of the group, newest first: a key
// removed, a key changed, the same key first set (no old value).
inline proto::ConfigReply config_reply_history() {
  proto::ConfigReply m;
  m.request_id = 39;
  m.ok = true;
  m.group = std::string(kConfigGroup);
  m.history = {
      {config_version(kHubEpoch, 14), "degrade.hm-query", "on", std::nullopt, "ops@bastion-eu1",
       1733043600000},
      {config_version(kHubEpoch, 13), "cache.ttl_ms", "20000", "30000", "ops@bastion-eu1",
       1733040000000},
      {config_version(kHubEpoch, 12), "degrade.hm-query", std::nullopt, "on", "ops@bastion-eu2",
       1732957200000},
  };
  return m;
}

inline proto::AdminReply admin_reply() {
  return proto::AdminReply{32, true, "hm01-cache-q is OUT_OF_SERVICE until marked back in"};
}

struct Sample {
  std::string_view stem;  // file name without extension
  std::string_view note;  // one line for the .json
  Message message;
};

// One sample per message type, in MsgType order.
inline std::vector<Sample> single_samples() {
  return {
      {"01-upbeat", "agent beat right after its registration set changed", upbeat()},
      {"02-downbeat", "hub reply to 01-upbeat: a delta, a full list and a gone service",
       downbeat()},
      {"03-query", "one-off lookup of a service", query()},
      {"04-query-reply", "answer to 03-query with two instances", query_reply()},
      {"05-deregister", "graceful stop of node A", deregister()},
      {"06-deregister-ack", "answer to 05-deregister", deregister_ack()},
      {"07-status-request", "status probe from a tool", status_request()},
      {"08-status-reply", "answer to 07-status-request", status_reply()},
      {"09-services-request", "service listing request from a tool", services_request()},
      {"10-services-reply", "answer to 09-services-request", services_reply()},
      {"11-error", "rejection of an UpBeat whose address broke a limit", error_reply()},
  };
}

// Further samples of message types above that carry fields the first ones leave empty.
inline std::vector<Sample> variant_samples() {
  return {
      {"13-upbeat-hub-delta", "L1 hub beat to its L2 carrying a change of its tier as a delta",
       hub_delta_upbeat()},
      {"14-downbeat-push", "hub push between beats: an instance isolated by failure reports",
       isolation_push()},
      {"15-failure-report", "a caller's fast-fail report: two timeouts and a refused connection",
       failure_report()},
      {"16-report-ack", "answer to a failure report sent with a request id (a tool)", report_ack()},
      {"17-admin-request", "operator marks an instance OUT_OF_SERVICE", admin_request()},
      {"18-admin-add-static", "operator adds an instance that cannot run an agent",
       admin_add_static()},
      {"19-admin-reply", "answer to 17-admin-request", admin_reply()},
      {"20-downbeat-routes",
       "hub reply whose delta carries the routing rules set since the consumer's version",
       downbeat_with_routes()},
      {"21-admin-set-routes", "operator sets a service's routing rules", admin_set_routes()},
      {"22-downbeat-stale",
       "reply of a hub cut off from its upper tier: a used list served stale, with its age",
       downbeat_stale()},
      {"23-downbeat-first-part",
       "reply whose full list continues in the push frames that follow (more = true)",
       downbeat_first_part()},
      {"24-upbeat-via-proxy", "agent beat as a proxy forwards it, naming the agent's key",
       upbeat_via_proxy()},
      {"25-error-forbidden", "refusal of a beat whose key may not register a service",
       error_forbidden()},
      {"26-admin-reload-keys", "operator asks the hub to re-read its authorised keys",
       admin_reload_keys()},
      {"27-upbeat-configs",
       "agent beat following two config groups, one held at a version, one not yet",
       upbeat_configs()},
      {"28-downbeat-config-updates",
       "reply to 27-upbeat-configs: a full group with a binary value, a delta removing keys",
       downbeat_config_updates()},
      {"29-admin-config-edit", "operator sets one key of a group and removes another at once",
       admin_config_edit()},
      {"30-admin-config-rollback", "operator puts the hub's keys of a group back to a version",
       admin_config_rollback()},
      {"31-config-request", "tool reads one key of a group as the hub serves it", config_request()},
      {"32-config-reply", "answer to a read of a whole group: values from two tiers, with origins",
       config_reply()},
      {"33-config-reply-history",
       "answer to a history read: a removal, a change, a first set (no old value)",
       config_reply_history()},
      {"34-downbeat-config-stale",
       "reply of an L1 hub cut off from its upper tier: a followed group served stale, with its "
       "age",
       downbeat_config_stale()},
      {"35-upbeat-config-digest",
       "agent beat whose list of followed groups is the one it last sent: its digest instead",
       upbeat_config_digest()},
      {"36-downbeat-send-configs",
       "reply to a beat whose config digest the hub does not expect: send the list",
       downbeat_send_configs()},
      {"37-downbeat-slower",
       "reply of a hub that fell behind: beat every 4 s at most, with a lease as much longer",
       downbeat_slower()},
      {"38-error-busy",
       "a beat shed unread by a hub past its queue bound: ask again in 4 s at the soonest",
       error_busy()},
  };
}

inline constexpr std::string_view kBatchStem = "12-batch";
inline constexpr std::string_view kBatchNote =
    "hub reply batch to a proxy: DownBeat, QueryReply (not found), ErrorReply, in request order";

}  // namespace cascade::golden
