#pragma once
// Every wire message's fields, declared once, in wire order
// (schemas/protocol-v1.md, section 3).
//
// The codec runs these declarations with different visitors: one counts the
// fields (for the array header), one writes them, one reads and checks them
// (common/field_reader.hpp, common/field_writer.hpp). A field is therefore
// added in one place and cannot be encoded one way and decoded another, and
// every bound the spec states for it sits next to it.
//
// The vocabulary of a visitor `io`:
//   io.field(name, member)              integers, booleans, enums (bounds from
//                                       EnumRange), maps, records, lists of
//                                       records, optionals (nil = absent)
//   io.field(name, member, Text{max})   a string (or list of strings) of at most max bytes
//   io.field(name, member, Token{max})  the same, 1..max bytes, no control character
//   io.field(name, member, Bytes{max})  bytes (a MessagePack bin) of at most max bytes
//   io.field(name, member, MaxItems{n}) a list of at most n records
//   io.optional_from_here()             every field after it may be absent
//                                       from the wire, each on its own
//                                       (fields added in a later revision)
//
// Each record type also names itself (kRecordName) for error messages such as
// "registration.address longer than 1024 bytes".

#include <concepts>
#include <cstddef>
#include <type_traits>

#include "cascade/common/protocol.hpp"

namespace cascade::proto::wire {

// A string field of at most `max` bytes, anything in it.
struct Text {
  std::size_t max;
};
// A string field of 1..max bytes without control characters (names, ids, addresses).
struct Token {
  std::size_t max;
};
inline constexpr Token kName{kMaxServiceNameBytes};
// Bytes of at most `max`, any content, as a MessagePack bin (revision 6):
// config values, which need not be text.
struct Bytes {
  std::size_t max;
};
// A list field of at most `max` records (beyond the frame's own bound).
struct MaxItems {
  std::size_t max;
};

template <typename E>
struct EnumRange;
template <std::uint8_t Min, std::uint8_t Max>
struct Range {
  static constexpr std::uint8_t min = Min;
  static constexpr std::uint8_t max = Max;
};
template <>
struct EnumRange<InstanceStatus> : Range<0, kMaxInstanceStatus> {};
template <>
struct EnumRange<Health> : Range<0, kMaxHealth> {};
template <>
struct EnumRange<UpdateKind> : Range<0, kMaxUpdateKind> {};
template <>
struct EnumRange<AnswerSource> : Range<0, kMaxAnswerSource> {};
template <>
struct EnumRange<FailureKind> : Range<0, kMaxFailureKind> {};
template <>
struct EnumRange<AdminOp> : Range<1, kMaxAdminOp> {};
template <>
struct EnumRange<ErrorCode> : Range<1, kMaxErrorCode> {};
template <>
struct EnumRange<ConfigView> : Range<0, kMaxConfigView> {};

// M is T as the writer (const) or the reader (mutable) sees it.
template <typename M, typename T>
concept Of = std::same_as<std::remove_const_t<M>, T>;

template <typename T>
inline constexpr const char* kRecordName = nullptr;  // not a record

template <typename T>
concept Record = (kRecordName<std::remove_const_t<T>> != nullptr);

// ------------------------------------------------------------ shared parts

template <typename Io, Of<ServiceKey> K>
void key_fields(Io& io, K& k) {
  io.field("service", k.name, kName);
  io.field("group", k.group, kName);
}

// The fields an agent sets; hubs add tier and health.
template <typename Io, Of<Instance> I>
void instance_core_fields(Io& io, I& in) {
  io.field("id", in.id, Token{kMaxIdBytes});
  io.field("address", in.address, Token{kMaxAddressBytes});
  io.field("weight", in.weight);
  io.field("zone", in.zone, Text{kMaxServiceNameBytes});
  io.field("status", in.status);
  io.field("metadata", in.metadata);
}

template <typename Io, Of<Instance> I>
void health_fields(Io& io, I& in) {
  io.field("health", in.health);
  io.field("health_reason", in.health_reason, Text{kMaxReasonBytes});
}

// ------------------------------------------------------------ records

template <>
inline constexpr const char* kRecordName<Instance> = "instance";
template <typename Io, Of<Instance> I>
void describe(Io& io, I& in) {
  instance_core_fields(io, in);
  io.optional_from_here();
  io.field("tier", in.tier);
  health_fields(io, in);
}

// A registration is flat: the service's key, then the instance's own fields.
template <>
inline constexpr const char* kRecordName<Registration> = "registration";
template <typename Io, Of<Registration> R>
void describe(Io& io, R& r) {
  key_fields(io, r.service);
  instance_core_fields(io, r.instance);
  io.optional_from_here();
  health_fields(io, r.instance);
}

template <>
inline constexpr const char* kRecordName<InstanceKey> = "removed";
template <typename Io, Of<InstanceKey> K>
void describe(Io& io, K& k) {
  key_fields(io, k.service);
  io.field("id", k.id, Token{kMaxIdBytes});
}

template <>
inline constexpr const char* kRecordName<RegistrationDelta> = "delta";
template <typename Io, Of<RegistrationDelta> D>
void describe(Io& io, D& d) {
  io.field("reset", d.reset);
  io.field("more", d.more);
  io.field("upserts", d.upserts);
  io.field("removed", d.removed);
}

template <>
inline constexpr const char* kRecordName<ServiceUse> = "use";
template <typename Io, Of<ServiceUse> U>
void describe(Io& io, U& u) {
  key_fields(io, u.service);
  io.field("version", u.version);
}

template <>
inline constexpr const char* kRecordName<RouteRuleText> = "route";
template <typename Io, Of<RouteRuleText> R>
void describe(Io& io, R& r) {
  io.field("text", r.text, Text{kMaxRouteRuleBytes});
  io.field("priority", r.priority);
  io.field("force", r.force);
  io.field("enabled", r.enabled);
}

template <>
inline constexpr const char* kRecordName<ServiceUpdate> = "update";
template <typename Io, Of<ServiceUpdate> U>
void describe(Io& io, U& u) {
  key_fields(io, u.service);
  io.field("from_version", u.from_version);
  io.field("version", u.version);
  io.field("kind", u.kind);
  io.field("upserts", u.upserts);
  io.field("removed", u.removed, Text{kMaxIdBytes});
  io.optional_from_here();
  io.field("routes", u.routes, MaxItems{kMaxRouteRules});
  io.field("more", u.more);
}

template <>
inline constexpr const char* kRecordName<ConfigUse> = "config_use";
template <typename Io, Of<ConfigUse> U>
void describe(Io& io, U& u) {
  io.field("group", u.group, kName);
  io.field("version", u.version);
}

// Flat: the key, its value, then where the value was set.
template <>
inline constexpr const char* kRecordName<ConfigEntry> = "config_entry";
template <typename Io, Of<ConfigEntry> E>
void describe(Io& io, E& e) {
  io.field("key", e.key, Token{kMaxConfigKeyBytes});
  io.field("value", e.value, Bytes{kMaxConfigValueBytes});
  io.field("tier", e.origin.tier);
  io.field("hub", e.origin.hub, Text{kMaxIdBytes});
  io.field("version", e.origin.version);
}

template <>
inline constexpr const char* kRecordName<ConfigUpdate> = "config_update";
template <typename Io, Of<ConfigUpdate> U>
void describe(Io& io, U& u) {
  io.field("group", u.group, kName);
  io.field("from_version", u.from_version);
  io.field("version", u.version);
  io.field("kind", u.kind);
  io.field("upserts", u.upserts, MaxItems{kMaxConfigKeysPerGroup * kMaxConfigTiers});
  io.field("removed", u.removed, Text{kMaxConfigKeyBytes});
  io.optional_from_here();
  io.field("more", u.more);
}

template <>
inline constexpr const char* kRecordName<ConfigEdit> = "config_edit";
template <typename Io, Of<ConfigEdit> E>
void describe(Io& io, E& e) {
  io.field("key", e.key, Token{kMaxConfigKeyBytes});
  io.field("value", e.value, Bytes{kMaxConfigValueBytes});  // nil: remove the key
}

template <>
inline constexpr const char* kRecordName<ConfigGroupSummary> = "config_group";
template <typename Io, Of<ConfigGroupSummary> S>
void describe(Io& io, S& s) {
  io.field("group", s.group, kName);
  io.field("version", s.version);
  io.field("keys", s.keys);
  io.field("own_keys", s.own_keys);
  io.field("bytes", s.bytes);
  io.field("followers", s.followers);
}

template <>
inline constexpr const char* kRecordName<ConfigChange> = "config_change";
template <typename Io, Of<ConfigChange> C>
void describe(Io& io, C& c) {
  io.field("version", c.version);
  io.field("key", c.key, Token{kMaxConfigKeyBytes});
  io.field("old_value", c.old_value, Bytes{kMaxConfigValueBytes});
  io.field("new_value", c.new_value, Bytes{kMaxConfigValueBytes});
  io.field("author", c.author, Text{kMaxIdBytes});
  io.field("wall_ms", c.wall_ms);
}

template <>
inline constexpr const char* kRecordName<StaleList> = "stale_list";
template <typename Io, Of<StaleList> S>
void describe(Io& io, S& s) {
  key_fields(io, s.service);
  io.field("age_ms", s.age_ms);
}

template <>
inline constexpr const char* kRecordName<StaleConfig> = "stale_config";
template <typename Io, Of<StaleConfig> S>
void describe(Io& io, S& s) {
  io.field("group", s.group, kName);
  io.field("age_ms", s.age_ms);
}

template <>
inline constexpr const char* kRecordName<UpstreamStatus> = "upstream";
template <typename Io, Of<UpstreamStatus> U>
void describe(Io& io, U& u) {
  io.field("endpoint", u.endpoint, Text{kMaxAddressBytes});
  io.field("hub_id", u.hub_id, Text{kMaxIdBytes});
  io.field("current", u.current);
  io.field("reachable", u.reachable);
  io.field("last_reply_ms", u.last_reply_ms);
  io.field("lease_ms", u.lease_ms);
}

template <>
inline constexpr const char* kRecordName<ServiceSummary> = "summary";
template <typename Io, Of<ServiceSummary> S>
void describe(Io& io, S& s) {
  key_fields(io, s.service);
  io.field("version", s.version);
  io.field("instances", s.instances);
  io.field("up", s.up);
}

template <>
inline constexpr const char* kRecordName<FailureSignal> = "signal";
template <typename Io, Of<FailureSignal> S>
void describe(Io& io, S& s) {
  key_fields(io, s.service);
  io.field("address", s.address, Token{kMaxAddressBytes});
  io.field("kind", s.kind);
  io.field("reporter", s.reporter, Text{kMaxIdBytes});
  io.field("count", s.count);
}

// ------------------------------------------------------------ messages
// The fields after [protocol_version, type].

template <typename Io, Of<UpBeat> M>
void describe(Io& io, M& m) {
  io.field("node_id", m.node_id, kName);
  io.field("epoch", m.epoch);
  io.field("seq", m.seq);
  io.field("digest", m.digest);
  io.field("registrations", m.registrations);
  io.field("uses", m.uses);
  io.optional_from_here();
  io.field("delta", m.delta);
  io.field("sender_tier", m.sender_tier);
  io.field("on_behalf_of", m.on_behalf_of, Text{kMaxIdBytes});
  io.field("configs", m.configs, MaxItems{kMaxConfigUsesPerBeat});
  io.field("configs_digest", m.configs_digest);
}

template <typename Io, Of<DownBeat> M>
void describe(Io& io, M& m) {
  io.field("hub_id", m.hub_id, kName);
  io.field("hub_epoch", m.hub_epoch);
  io.field("node_id", m.node_id, kName);
  io.field("ack_seq", m.ack_seq);
  io.field("send_full", m.send_full);
  io.field("lease_ms", m.lease_ms);
  io.field("updates", m.updates);
  io.optional_from_here();
  io.field("push", m.push);
  io.field("stale", m.stale);
  io.field("config_updates", m.config_updates, MaxItems{kMaxConfigUsesPerBeat});
  io.field("stale_configs", m.stale_configs, MaxItems{kMaxConfigUsesPerBeat});
  io.field("send_configs", m.send_configs);
  io.field("interval_ms", m.interval_ms);
}

template <typename Io, Of<Query> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("node_id", m.node_id, Text{kMaxIdBytes});
  key_fields(io, m.service);
  io.optional_from_here();
  io.field("on_behalf_of", m.on_behalf_of, Text{kMaxIdBytes});
}

template <typename Io, Of<QueryReply> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("hub_id", m.hub_id, kName);
  io.field("hub_epoch", m.hub_epoch);
  key_fields(io, m.service);
  io.field("found", m.found);
  io.field("version", m.version);
  io.field("instances", m.instances);
  io.optional_from_here();
  io.field("tier", m.tier);
  io.field("source", m.source);
  io.field("age_ms", m.age_ms);
  io.field("stale", m.stale);
  io.field("routes", m.routes, MaxItems{kMaxRouteRules});
  io.field("more", m.more);
}

template <typename Io, Of<Deregister> M>
void describe(Io& io, M& m) {
  io.field("node_id", m.node_id, kName);
  io.field("epoch", m.epoch);
  io.field("seq", m.seq);
  io.optional_from_here();
  io.field("on_behalf_of", m.on_behalf_of, Text{kMaxIdBytes});
}

template <typename Io, Of<DeregisterAck> M>
void describe(Io& io, M& m) {
  io.field("node_id", m.node_id, kName);
  io.field("seq", m.seq);
  io.field("removed", m.removed);
}

template <typename Io, Of<StatusRequest> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
}

template <typename Io, Of<StatusReply> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("hub_id", m.hub_id, kName);
  io.field("tier", m.tier);
  io.field("hub_epoch", m.hub_epoch);
  io.field("uptime_ms", m.uptime_ms);
  io.field("nodes", m.nodes);
  io.field("services", m.services);
  io.field("instances", m.instances);
  io.field("counters", m.counters);
  io.optional_from_here();
  io.field("zone", m.zone, Text{kMaxServiceNameBytes});
  io.field("upstreams", m.upstreams);
  io.field("child_hubs", m.child_hubs);
  io.field("cross_tier_entries", m.cross_tier_entries);
  io.field("isolated", m.isolated);
  io.field("unconfirmed", m.unconfirmed);
  io.field("eviction_protection", m.eviction_protection);
  io.field("notify_share_percent", m.notify_share_percent);
  io.field("security", m.security, Text{kMaxServiceNameBytes});
}

template <typename Io, Of<ServicesRequest> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
}

template <typename Io, Of<ServicesReply> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("services", m.services);
}

template <typename Io, Of<ErrorReply> M>
void describe(Io& io, M& m) {
  io.field("code", m.code);
  io.field("message", m.message, Text{kMaxMessageBytes});
  io.field("ref", m.ref);
  io.optional_from_here();
  io.field("retry_after_ms", m.retry_after_ms);
}

template <typename Io, Of<FailureReport> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("signals", m.signals);
  io.field("hops", m.hops);
  io.optional_from_here();
  io.field("on_behalf_of", m.on_behalf_of, Text{kMaxIdBytes});
}

template <typename Io, Of<ReportAck> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("accepted", m.accepted);
  io.field("forwarded", m.forwarded);
  io.field("unknown", m.unknown);
  io.field("isolated", m.isolated);
}

template <typename Io, Of<AdminRequest> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("op", m.op);
  io.field("actor", m.actor, Text{kMaxIdBytes});
  // Empty when the operation names no service, so not a name here.
  io.field("service", m.service.name, Text{kMaxServiceNameBytes});
  io.field("group", m.service.group, Text{kMaxServiceNameBytes});
  io.field("instance_id", m.instance_id, Text{kMaxIdBytes});
  io.field("instance", m.instance);
  io.field("enabled", m.enabled);
  io.field("share_percent", m.share_percent);
  io.optional_from_here();
  io.field("routes", m.routes, MaxItems{kMaxRouteRules});
  io.field("config_group", m.config_group, Text{kMaxServiceNameBytes});
  io.field("config_edits", m.config_edits, MaxItems{kMaxConfigKeysPerGroup});
  io.field("config_version", m.config_version);
}

template <typename Io, Of<AdminReply> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("ok", m.ok);
  io.field("message", m.message, Text{kMaxMessageBytes});
}

template <typename Io, Of<ConfigRequest> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("view", m.view);
  io.field("group", m.group, Text{kMaxServiceNameBytes});
  io.field("key", m.key, Text{kMaxConfigKeyBytes});
}

template <typename Io, Of<ConfigReply> M>
void describe(Io& io, M& m) {
  io.field("request_id", m.request_id);
  io.field("ok", m.ok);
  io.field("message", m.message, Text{kMaxMessageBytes});
  io.field("group", m.group, Text{kMaxServiceNameBytes});
  io.field("version", m.version);
  io.field("entries", m.entries);
  io.field("groups", m.groups);
  io.field("history", m.history);
  io.optional_from_here();
  io.field("more", m.more);
}

// ------------------------------------------------------------ counting

// Counts a record's fields: all of them (what an encoder writes) and those
// before optional_from_here() (what a decoder requires).
struct FieldCount {
  std::uint32_t all = 0;
  std::uint32_t required = 0;
  bool optional = false;

  template <typename... Any>
  void field(const char*, Any&&...) {
    ++all;
    if (!optional) ++required;
  }
  void optional_from_here() { optional = true; }
};

template <typename T>
FieldCount count_fields(const T& value) {
  FieldCount count;
  describe(count, value);
  return count;
}

}  // namespace cascade::proto::wire
