#pragma once
// cascade wire messages, version 1. The normative description with field
// tables lives in schemas/protocol-v1.md; golden samples in schemas/golden/.
// Every message is a MessagePack array [protocol_version, type, fields...];
// decoders ignore trailing fields they do not know (forward compatibility).

#include <compare>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace cascade::proto {

inline constexpr std::uint32_t kProtocolVersion = 1;
inline constexpr std::string_view kDefaultGroup = "default";

// Limits enforced by the decoder (and by the agent before it sends).
inline constexpr std::size_t kMaxServiceNameBytes = 255;
inline constexpr std::size_t kMaxIdBytes = 255;
inline constexpr std::size_t kMaxAddressBytes = 1024;
inline constexpr std::size_t kMaxMetadataEntries = 64;
inline constexpr std::size_t kMaxMetadataKeyBytes = 128;
inline constexpr std::size_t kMaxMetadataValueBytes = 1024;
inline constexpr std::size_t kMaxBatchMessages = 4096;
inline constexpr std::size_t kDefaultMaxFrameBytes = 4 * 1024 * 1024;
// Senders split a reply or push larger than this into parts (section 5.13),
// so a service of any size reaches a receiver with the default frame limit.
inline constexpr std::size_t kMaxPartBytes = 1024 * 1024;

enum class MsgType : std::uint8_t {
  kUpBeat = 1,
  kDownBeat = 2,
  kQuery = 3,
  kQueryReply = 4,
  kDeregister = 5,
  kDeregisterAck = 6,
  kStatusRequest = 7,
  kStatusReply = 8,
  kServicesRequest = 9,
  kServicesReply = 10,
  kError = 11,
  kBatch = 12,
  kFailureReport = 13,
  kReportAck = 14,
  kAdminRequest = 15,
  kAdminReply = 16,
  kConfigRequest = 17,  // revision 6
  kConfigReply = 18,
};
inline constexpr std::uint8_t kMaxMsgType = 18;

enum class InstanceStatus : std::uint8_t { kUp = 0, kDown = 1, kOutOfService = 2, kStarting = 3 };
inline constexpr std::uint8_t kMaxInstanceStatus = 3;

// What a hub decided about an instance, beside the status its agent reports:
// isolated after callers reported it failing, or unconfirmed while its lease
// has run out but eviction protection holds it (a partition, not a death).
enum class Health : std::uint8_t { kOk = 0, kIsolated = 1, kUnconfirmed = 2 };
inline constexpr std::uint8_t kMaxHealth = 2;
inline constexpr std::size_t kMaxReasonBytes = 255;
// The text of an ErrorReply or an AdminReply.
inline constexpr std::size_t kMaxMessageBytes = 4096;

// Routing rules a hub serves with a service (revision 3; section 5.12 of
// schemas/protocol-v1.md). The text's syntax is agent/routing_rule.hpp's.
inline constexpr std::size_t kMaxRouteRuleBytes = 4096;
inline constexpr std::size_t kMaxRouteRules = 64;  // per service: keeps DownBeats small

struct ServiceKey {
  std::string name;
  std::string group{kDefaultGroup};
  auto operator<=>(const ServiceKey&) const = default;
};

struct Instance {
  std::string id;       // unique within its service
  std::string address;  // host:port or URL
  std::uint32_t weight = 100;
  std::string zone;
  InstanceStatus status = InstanceStatus::kUp;
  std::map<std::string, std::string> metadata;
  // Set by hubs in answers, never by agents: the tier whose registry holds the
  // instance, 0 when it is the answering hub's own tier. Consumers prefer 0.
  std::uint32_t tier = 0;
  // Set by hubs, never by agents (revision 3; encoded only when not kOk).
  Health health = Health::kOk;
  std::string health_reason{};  // why, for humans: "isolated: 5 reports from 2 callers"
  bool operator==(const Instance&) const = default;
};

// Names one instance of one service.
struct InstanceKey {
  ServiceKey service;
  std::string id;
  auto operator<=>(const InstanceKey&) const = default;
};

// One instance an agent provides, as carried in its registration set.
struct Registration {
  ServiceKey service;
  Instance instance;
  bool operator==(const Registration&) const = default;
};

// "I use this service and hold this version of it" (0 = nothing held yet).
struct ServiceUse {
  ServiceKey service;
  std::uint64_t version = 0;
  bool operator==(const ServiceUse&) const = default;
};

// Changes to a registration set, sent instead of the whole set by senders
// with large sets (a hub beating to its upstream). `reset` starts the set over
// from empty; `more` says further chunks of the same change follow, so the
// receiver checks the digest only after the last one.
struct RegistrationDelta {
  bool reset = false;
  bool more = false;
  std::vector<Registration> upserts;
  std::vector<InstanceKey> removed;
  bool operator==(const RegistrationDelta&) const = default;
};

// ---- The config centre (revision 6, docs/design-config.md): groups of keys
// and values, each group versioned like a service list, each value saying
// where it was set. A hub serves its own keys of a group over the keys of the
// tier above, and every entry keeps its origin.

inline constexpr std::size_t kMaxConfigKeyBytes = 255;
inline constexpr std::size_t kMaxConfigValueBytes = 64 * 1024;
// A group's keys and values together, per tier that sets them.
inline constexpr std::size_t kMaxConfigGroupBytes = 1024 * 1024;
inline constexpr std::size_t kMaxConfigKeysPerGroup = 4096;
// Tiers whose keys one served group may hold (each within the limits above).
inline constexpr std::size_t kMaxConfigTiers = 8;
// Groups one beat may follow.
inline constexpr std::size_t kMaxConfigUsesPerBeat = 1024;

// Where a value was set: the hub, its tier, and the group's version there
// when it was set.
struct ConfigOrigin {
  std::uint32_t tier = 0;
  std::string hub;
  std::uint64_t version = 0;
  bool operator==(const ConfigOrigin&) const = default;
};

struct ConfigEntry {
  std::string key;
  std::string value;  // bytes
  ConfigOrigin origin;
  bool operator==(const ConfigEntry&) const = default;
};

// One key of an operator's edit: set to `value`, or removed (nullopt).
struct ConfigEdit {
  std::string key;
  std::optional<std::string> value;  // bytes
  bool operator==(const ConfigEdit&) const = default;
};

// A subscriber's group and the version it holds (0: nothing yet).
struct ConfigUse {
  std::string group;
  std::uint64_t version = 0;
  bool operator==(const ConfigUse&) const = default;
};

// agent (or hub, towards its upstream) -> hub, every beat interval.
// `registrations` is present only when the set changed since the hub last
// acknowledged it, or when the hub asked for it; `delta` carries only the changes.
struct UpBeat {
  std::string node_id;
  std::uint64_t epoch = 0;   // changes on every agent start
  std::uint64_t seq = 0;     // increases per message within an epoch
  std::uint64_t digest = 0;  // digest of the full registration set (common/digest.hpp)
  std::optional<std::vector<Registration>> registrations;
  std::vector<ServiceUse> uses;
  std::optional<RegistrationDelta> delta;  // trailing field
  std::uint32_t sender_tier = 0;           // trailing field: 0 for an agent, else the hub's tier
  // Trailing field (revision 5): set by a proxy only, the name of the key its
  // agent authenticated with; the hub binds the node to it (section 5.15).
  std::string on_behalf_of{};
  // Trailing field (revision 6): the config groups the sender follows, with
  // the version it holds of each. Sent when the list changed since the sender
  // last sent it, or when the hub asked (DownBeat::send_configs); otherwise
  // empty, and `configs_digest` stands for it.
  std::vector<ConfigUse> configs{};
  // Trailing field (revision 6): with `configs` empty, the digest of the list
  // the sender would declare (config_uses_digest, common/digest.hpp); 0 when
  // it follows no group or `configs` carries the list. The hub checks it
  // against the versions it believes the sender holds.
  std::uint64_t configs_digest = 0;
  bool operator==(const UpBeat&) const = default;
};

// One routing rule of a service, as an operator set it at a hub
// (`CONSUMER-MATCH => PROVIDER-FILTER`, agent/routing_rule.hpp).
struct RouteRuleText {
  std::string text{};
  std::int32_t priority = 0;  // higher first
  bool force = false;         // keep an empty result instead of falling back to the whole list
  bool enabled = true;        // a disabled rule is carried but never applies
  bool operator==(const RouteRuleText&) const = default;
};

enum class UpdateKind : std::uint8_t {
  kDelta = 0,  // upserts are added or changed instances, removed are ids
  kFull = 1,   // upserts are the whole list; drop anything not in it
  kGone = 2,   // the service has no instances at this hub
};
inline constexpr std::uint8_t kMaxUpdateKind = 2;

struct ServiceUpdate {
  ServiceKey service;
  std::uint64_t from_version = 0;  // a delta applies only on top of exactly this version
  std::uint64_t version = 0;       // the version the receiver holds after applying
  UpdateKind kind = UpdateKind::kDelta;
  std::vector<Instance> upserts;
  std::vector<std::string> removed;
  // Trailing field (revision 3): the service's whole rule set at this hub
  // (empty: no rules); nullopt = unchanged. Full and gone updates always
  // carry it, deltas only when the rules changed after from_version.
  std::optional<std::vector<RouteRuleText>> routes{};
  // Trailing field (revision 4): the update continues in the next update of
  // the same service (in this DownBeat or in the push frames that follow it):
  // a list too large for one frame travels in parts, and the receiver applies
  // them together once the part without `more` arrived (section 5.13).
  bool more = false;
  bool operator==(const ServiceUpdate&) const = default;
};

// What changed in a group since `from_version`, as ServiceUpdate says it for
// a service's list: a delta applies on exactly `from_version`; full replaces
// the group; gone means no tier has the group.
struct ConfigUpdate {
  std::string group;
  std::uint64_t from_version = 0;
  std::uint64_t version = 0;
  UpdateKind kind = UpdateKind::kFull;
  std::vector<ConfigEntry> upserts;  // delta: set or changed; full: the whole group
  std::vector<std::string> removed;  // delta: keys no longer in the group
  // The update continues in the next update of the same group, as
  // ServiceUpdate::more (a group larger than one part, section 5.13).
  bool more = false;
  bool operator==(const ConfigUpdate&) const = default;
};

// A list the hub serves although its source has not confirmed it recently: a
// cross-tier list past its TTL because the upper tier is unreachable
// (revision 4, section 5.14). Consumers show it as stale, with this age.
struct StaleList {
  ServiceKey service;
  std::uint64_t age_ms = 0;  // since the tier that holds the list last confirmed it
  bool operator==(const StaleList&) const = default;
};

// A config group the hub serves although the upper tier it comes from has not
// confirmed it recently (revision 6, section 5.16): the StaleList of groups.
struct StaleConfig {
  std::string group;
  std::uint64_t age_ms = 0;  // since the tier above last confirmed its copy
  bool operator==(const StaleConfig&) const = default;
};

// hub -> agent, the reply to every UpBeat.
struct DownBeat {
  std::string hub_id;
  std::uint64_t hub_epoch = 0;
  std::string node_id;         // echoed, so proxies can fan replies out
  std::uint64_t ack_seq = 0;   // the UpBeat seq this answers
  bool send_full = false;      // the hub does not know the digest: resend the set
  std::uint32_t lease_ms = 0;  // the lease the hub granted
  std::vector<ServiceUpdate> updates;
  // Trailing field (revision 3): not a reply but a push of urgent updates
  // (an isolation) between beats. ack_seq is 0; only `updates` apply.
  bool push = false;
  // Trailing field (revision 4): of the services the beat declared, those
  // served stale. A declared list not named here is current as of this reply.
  std::vector<StaleList> stale{};
  // Trailing field (revision 6): changes to the config groups the beat
  // declared (or, in a push, that the node follows).
  std::vector<ConfigUpdate> config_updates{};
  // Trailing field (revision 6): of the groups the beat declared, those whose
  // upper tier's copy is past its TTL. A declared group not named here is
  // current as of this reply.
  std::vector<StaleConfig> stale_configs{};
  // Trailing field (revision 6): the beat's configs_digest is not the digest
  // of what the hub believes the sender holds: send the list (nothing about
  // the groups is confirmed by this reply).
  bool send_configs = false;
  // Trailing field (revision 7): beat no more often than this, in
  // milliseconds (a hub that falls behind spaces its fleet's beats out, and
  // grants a lease as much longer); 0 = at the sender's own interval.
  std::uint32_t interval_ms = 0;
  bool operator==(const DownBeat&) const = default;
};

struct Query {
  std::uint64_t request_id = 0;
  std::string node_id;  // who asks; may be empty for tools
  ServiceKey service;
  std::string on_behalf_of{};  // trailing field (revision 5): as UpBeat's
  bool operator==(const Query&) const = default;
};

// Where an answer came from: the answering hub's own tier, its cache of an
// upper tier, or an upper tier asked just now.
enum class AnswerSource : std::uint8_t { kLocal = 0, kCache = 1, kUpstream = 2 };
inline constexpr std::uint8_t kMaxAnswerSource = 2;

struct QueryReply {
  std::uint64_t request_id = 0;
  std::string hub_id;
  std::uint64_t hub_epoch = 0;
  ServiceKey service;
  bool found = false;
  std::uint64_t version = 0;
  std::vector<Instance> instances;
  // Provenance (optional trailing fields; absent in older encodings: 0 / local / 0).
  std::uint32_t tier = 0;  // tier of the hub whose registry holds the list (0 = not said)
  AnswerSource source = AnswerSource::kLocal;
  std::uint64_t age_ms = 0;  // since that tier last confirmed the list
  bool stale = false;        // from a cache past its TTL: the upper tier is unreachable
  // Trailing field (revision 3): the routing rules of the answering hub's own
  // entry of the service (empty: none); nullopt = not said (an older hub).
  std::optional<std::vector<RouteRuleText>> routes{};
  // Trailing field (revision 4): further QueryReply frames with the same
  // request_id follow, carrying more of `instances` (section 5.13).
  bool more = false;
  bool operator==(const QueryReply&) const = default;
};

// Graceful stop: drop every instance of this node at once.
struct Deregister {
  std::string node_id;
  std::uint64_t epoch = 0;
  std::uint64_t seq = 0;
  std::string on_behalf_of{};  // trailing field (revision 5): as UpBeat's
  bool operator==(const Deregister&) const = default;
};

struct DeregisterAck {
  std::string node_id;
  std::uint64_t seq = 0;
  std::uint32_t removed = 0;
  bool operator==(const DeregisterAck&) const = default;
};

struct StatusRequest {
  std::uint64_t request_id = 0;
  bool operator==(const StatusRequest&) const = default;
};

// One upstream of a tiered hub, as its status reports it.
struct UpstreamStatus {
  std::string endpoint;
  std::string hub_id;               // empty until it answered
  bool current = false;             // beats go there now (failover mode: one of them)
  bool reachable = false;           // answered within its freshness window
  std::int64_t last_reply_ms = -1;  // since its last answer; -1: never answered
  std::uint32_t lease_ms = 0;       // the lease it granted this hub
  bool operator==(const UpstreamStatus&) const = default;
};

struct StatusReply {
  std::uint64_t request_id = 0;
  std::string hub_id;
  std::uint32_t tier = 1;
  std::uint64_t hub_epoch = 0;
  std::int64_t uptime_ms = 0;
  std::uint64_t nodes = 0;
  std::uint64_t services = 0;
  std::uint64_t instances = 0;
  std::vector<std::pair<std::string, std::uint64_t>> counters;
  // Trailing fields (tiers).
  std::string zone;                       // the hub's datacenter or zone label
  std::vector<UpstreamStatus> upstreams;  // empty for a top-tier hub
  std::uint64_t child_hubs = 0;           // of `nodes`, how many are hubs of a lower tier
  std::uint64_t cross_tier_entries = 0;   // services cached from the upper tier
  // Trailing fields (revision 3): fast-fail isolation and eviction protection.
  std::uint64_t isolated = 0;                // instances isolated by callers' reports
  std::uint64_t unconfirmed = 0;             // instances whose lease ran out, held by protection
  bool eviction_protection = true;           // switched on
  std::uint32_t notify_share_percent = 100;  // of consumers pushed to per interval
  // Trailing field (revision 5): how the hub authenticates its peers:
  // "curve" (keys), "loopback" (plaintext, loopback only) or "insecure"
  // (plaintext on a network, started with --insecure).
  std::string security{};
  bool operator==(const StatusReply&) const = default;
};

struct ServicesRequest {
  std::uint64_t request_id = 0;
  bool operator==(const ServicesRequest&) const = default;
};

struct ServiceSummary {
  ServiceKey service;
  std::uint64_t version = 0;
  std::uint32_t instances = 0;
  std::uint32_t up = 0;
  bool operator==(const ServiceSummary&) const = default;
};

struct ServicesReply {
  std::uint64_t request_id = 0;
  std::vector<ServiceSummary> services;
  bool operator==(const ServicesReply&) const = default;
};

// What a caller saw when a call to a provider address failed.
enum class FailureKind : std::uint8_t {
  kTimeout = 0,
  kConnectionRefused = 1,
  kConnectionReset = 2,
  kSystemError = 3,    // any other transport or OS error
  kBusinessError = 4,  // an application error the caller's policy counts
  kBreakerOpen = 5,    // the caller's circuit breaker for the address opened
};
inline constexpr std::uint8_t kMaxFailureKind = 5;

struct FailureSignal {
  ServiceKey service;
  std::string address;  // the provider address the call went to
  FailureKind kind = FailureKind::kTimeout;
  std::string reporter;     // node id of the caller that saw it
  std::uint32_t count = 1;  // failures folded into this signal
  bool operator==(const FailureSignal&) const = default;
};

// agent -> hub at once when calls fail (and hub -> hub towards the tier that
// holds the address). Fire and forget unless request_id is non-zero, which
// asks for a ReportAck (tools).
struct FailureReport {
  std::uint64_t request_id = 0;
  std::vector<FailureSignal> signals;
  std::uint32_t hops = 0;      // tiers crossed so far; bounded so a report never loops
  std::string on_behalf_of{};  // trailing field (revision 5): as UpBeat's
  bool operator==(const FailureReport&) const = default;
};

struct ReportAck {
  std::uint64_t request_id = 0;
  std::uint32_t accepted = 0;   // counted by this hub
  std::uint32_t forwarded = 0;  // sent on to the tier that holds the address
  std::uint32_t unknown = 0;    // no such address known here
  std::uint32_t isolated = 0;   // instances isolated as a result
  bool operator==(const ReportAck&) const = default;
};

enum class AdminOp : std::uint8_t {
  kMarkOutOfService = 1,    // service + instance.id: served as OUT_OF_SERVICE until marked back
  kMarkInService = 2,       // undoes kMarkOutOfService
  kAddStatic = 3,           // service + instance: an instance without an agent or lease
  kRemoveStatic = 4,        // service + instance.id
  kEvictionProtection = 5,  // enabled: hold back mass expiry (on by default)
  kNotifySwitch = 6,        // enabled: push isolations to only share_percent of consumers
  kReadmit = 7,             // service + instance.id: lift an isolation now
  kSetRoutes = 8,           // service + routes: the service's whole rule set (empty = none)
  kReloadKeys = 9,          // re-read the authorised-keys file (revision 5)
  kConfigEdit = 10,         // config_group + config_edits: set and remove keys at once (revision 6)
  kConfigRollback = 11,     // config_group + config_version: this hub's keys as they were then
};
inline constexpr std::uint8_t kMaxAdminOp = 11;

// tool -> hub: an operator's action, recorded with who asked.
struct AdminRequest {
  std::uint64_t request_id = 0;
  AdminOp op = AdminOp::kMarkOutOfService;
  std::string actor;                 // who asks, for the audit log
  ServiceKey service;                // instance operations and kSetRoutes only
  std::string instance_id;           // instance operations only
  std::optional<Instance> instance;  // kAddStatic only (its id is instance_id)
  bool enabled = false;
  std::uint32_t share_percent = 100;    // kNotifySwitch
  std::vector<RouteRuleText> routes{};  // kSetRoutes (trailing field): the new complete set
  // Trailing fields (revision 6): the config operations.
  std::string config_group{};
  std::vector<ConfigEdit> config_edits{};  // kConfigEdit, applied together or not at all
  std::uint64_t config_version = 0;        // kConfigRollback: the version to go back to
  bool operator==(const AdminRequest&) const = default;
};

struct AdminReply {
  std::uint64_t request_id = 0;
  bool ok = false;
  std::string message;
  bool operator==(const AdminReply&) const = default;
};

enum class ErrorCode : std::uint8_t {
  kUnknownVersion = 1,
  kMalformed = 2,
  kTooLarge = 3,
  kUnknownType = 4,
  kStaleEpoch = 5,
  kInvalid = 6,      // well-formed but violates a limit or rule
  kUnavailable = 7,  // the answer lives in an upper tier that cannot be reached now
  // Revision 5 (section 5.15): the message came without a key the hub knows
  // (a hub that requires keys), or its key may not do what it asks.
  kUnauthenticated = 8,
  kForbidden = 9,
  // Revision 8 (section 5.18): the hub is past what it can serve and shed the
  // frame unread; ask again after `retry_after_ms`, spread by jitter.
  kBusy = 10,
};
inline constexpr std::uint8_t kMaxErrorCode = 10;

struct ErrorReply {
  ErrorCode code = ErrorCode::kMalformed;
  std::string message;
  std::uint64_t ref = 0;  // request id or seq of the offending message, 0 if unknown
  // kBusy (revision 8): how long the asker should wait before it asks again
  // (0: no advice).
  std::uint32_t retry_after_ms = 0;
  bool operator==(const ErrorReply&) const = default;
};
// tool -> hub: read the config centre (revision 6). Answered by a ConfigReply.
enum class ConfigView : std::uint8_t {
  kGet = 0,      // the group as this hub serves it (own keys over the upper tier's); `key`: one key
  kList = 1,     // the groups this hub serves, with their sizes
  kHistory = 2,  // the changes of this hub's own keys of `group`, newest first
};
inline constexpr std::uint8_t kMaxConfigView = 2;

struct ConfigRequest {
  std::uint64_t request_id = 0;
  ConfigView view = ConfigView::kGet;
  std::string group;  // kGet, kHistory
  std::string key;    // kGet: only this key (empty: every key)
  bool operator==(const ConfigRequest&) const = default;
};

struct ConfigGroupSummary {
  std::string group;
  std::uint64_t version = 0;   // the served version
  std::uint32_t keys = 0;      // served keys, all tiers
  std::uint32_t own_keys = 0;  // set at this hub
  std::uint64_t bytes = 0;     // served keys and values
  std::uint32_t followers = 0;
  bool operator==(const ConfigGroupSummary&) const = default;
};

// One change of a hub's own key, as its history keeps it.
struct ConfigChange {
  std::uint64_t version = 0;  // the group's served version the change made
  std::string key;
  std::optional<std::string> old_value;  // bytes; nullopt: not set at this hub before
  std::optional<std::string> new_value;  // bytes; nullopt: removed
  std::string author;
  std::int64_t wall_ms = 0;  // when it committed (Unix ms; 0: not known)
  bool operator==(const ConfigChange&) const = default;
};

struct ConfigReply {
  std::uint64_t request_id = 0;
  bool ok = false;
  std::string message;  // why not ok (an unknown group, ...)
  std::string group;
  std::uint64_t version = 0;               // kGet: the served version (0: no such group)
  std::vector<ConfigEntry> entries;        // kGet
  std::vector<ConfigGroupSummary> groups;  // kList
  std::vector<ConfigChange> history;       // kHistory
  // Further ConfigReply frames with the same request_id follow, each with more
  // entries or history (a group larger than one part, section 5.13).
  bool more = false;
  bool operator==(const ConfigReply&) const = default;
};

// Alternatives in MsgType order (Batch, 12, is a frame shape, not a message).
using Message =
    std::variant<UpBeat, DownBeat, Query, QueryReply, Deregister, DeregisterAck, StatusRequest,
                 StatusReply, ServicesRequest, ServicesReply, ErrorReply, FailureReport, ReportAck,
                 AdminRequest, AdminReply, ConfigRequest, ConfigReply>;

const char* to_string(InstanceStatus s);
std::optional<InstanceStatus> parse_status(std::string_view s);
const char* to_string(ErrorCode c);

// Where a message names itself for an ErrorReply's `ref` (section 3.11): the
// index in its array of its `seq` (UpBeat, Deregister) or `request_id` (the
// requests); 0 for a message that names nothing.
constexpr std::size_t ref_field_index(MsgType t) {
  switch (t) {
    case MsgType::kUpBeat:
    case MsgType::kDeregister:
      return 4;  // after node_id and epoch
    case MsgType::kQuery:
    case MsgType::kStatusRequest:
    case MsgType::kServicesRequest:
    case MsgType::kFailureReport:
    case MsgType::kAdminRequest:
    case MsgType::kConfigRequest:
      return 2;
    default:
      return 0;
  }
}
const char* to_string(AnswerSource s);
const char* to_string(Health h);
const char* to_string(FailureKind k);
std::optional<FailureKind> parse_failure_kind(std::string_view s);
const char* to_string(AdminOp op);
// The operation names one instance (service + instance_id).
bool is_instance_op(AdminOp op);
// TEXT cut to kMaxMessageBytes at a UTF-8 character boundary, ending in "..."
// when cut: what an ErrorReply or AdminReply may carry (a reply that quotes
// its request must still decode).
std::string clip_message(std::string text);
const char* to_string(MsgType t);
MsgType type_of(const Message& m);
// What an ErrorReply about `m` puts in `ref`: its request id, else its seq, else 0.
std::uint64_t ref_of(const Message& m);

}  // namespace cascade::proto

template <>
struct std::hash<cascade::proto::ServiceKey> {
  std::size_t operator()(const cascade::proto::ServiceKey& k) const noexcept {
    const std::size_t h = std::hash<std::string>{}(k.name);
    return h ^ (std::hash<std::string>{}(k.group) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2));
  }
};
