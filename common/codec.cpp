#include "cascade/common/codec.hpp"

#include <limits>
#include <msgpack.hpp>
#include <stdexcept>

namespace cascade::proto {
namespace {

// ---------------------------------------------------------------- encoding

struct StringSink {
  Bytes& out;
  void write(const char* data, std::size_t size) { out.append(data, size); }
};
using Packer = msgpack::packer<StringSink>;

void pack_str(Packer& pk, std::string_view s) {
  pk.pack_str(static_cast<std::uint32_t>(s.size()));
  pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
}

void pack_metadata(Packer& pk, const std::map<std::string, std::string>& md) {
  pk.pack_map(static_cast<std::uint32_t>(md.size()));
  for (const auto& [k, v] : md) {
    pack_str(pk, k);
    pack_str(pk, v);
  }
}

// Instance fields without the array header, shared by Instance and Registration.
void pack_instance_fields(Packer& pk, const Instance& in) {
  pack_str(pk, in.id);
  pack_str(pk, in.address);
  pk.pack_uint32(in.weight);
  pack_str(pk, in.zone);
  pk.pack_uint8(static_cast<std::uint8_t>(in.status));
  pack_metadata(pk, in.metadata);
}

void pack_health(Packer& pk, const Instance& in) {
  pk.pack_uint8(static_cast<std::uint8_t>(in.health));
  pack_str(pk, in.health_reason);
}

void pack_instance(Packer& pk, const Instance& in) {
  pk.pack_array(9);
  pack_instance_fields(pk, in);
  pk.pack_uint32(in.tier);
  pack_health(pk, in);
}

void pack_instances(Packer& pk, const std::vector<Instance>& list) {
  pk.pack_array(static_cast<std::uint32_t>(list.size()));
  for (const auto& in : list)
    pack_instance(pk, in);
}

void pack_strings(Packer& pk, const std::vector<std::string>& list) {
  pk.pack_array(static_cast<std::uint32_t>(list.size()));
  for (const auto& s : list)
    pack_str(pk, s);
}

void pack_header(Packer& pk, std::uint32_t fields, MsgType type) {
  pk.pack_array(fields + 2);
  pk.pack_uint32(kProtocolVersion);
  pk.pack_uint8(static_cast<std::uint8_t>(type));
}

void pack_bool(Packer& pk, bool b) {
  if (b)
    pk.pack_true();
  else
    pk.pack_false();
}

// RouteRuleText: [text, priority, force, enabled].
void pack_routes(Packer& pk, const std::vector<RouteRuleText>& routes) {
  pk.pack_array(static_cast<std::uint32_t>(routes.size()));
  for (const auto& r : routes) {
    pk.pack_array(4);
    pack_str(pk, r.text);
    pk.pack_int32(r.priority);
    pack_bool(pk, r.force);
    pack_bool(pk, r.enabled);
  }
}

// nil when absent ("unchanged" / "not said").
void pack_optional_routes(Packer& pk, const std::optional<std::vector<RouteRuleText>>& routes) {
  if (routes)
    pack_routes(pk, *routes);
  else
    pk.pack_nil();
}

void pack_registrations(Packer& pk, const std::vector<Registration>& regs) {
  pk.pack_array(static_cast<std::uint32_t>(regs.size()));
  for (const auto& r : regs) {
    pk.pack_array(10);
    pack_str(pk, r.service.name);
    pack_str(pk, r.service.group);
    pack_instance_fields(pk, r.instance);
    pack_health(pk, r.instance);
  }
}

void pack_delta(Packer& pk, const RegistrationDelta& d) {
  pk.pack_array(4);
  pack_bool(pk, d.reset);
  pack_bool(pk, d.more);
  pack_registrations(pk, d.upserts);
  pk.pack_array(static_cast<std::uint32_t>(d.removed.size()));
  for (const auto& k : d.removed) {
    pk.pack_array(3);
    pack_str(pk, k.service.name);
    pack_str(pk, k.service.group);
    pack_str(pk, k.id);
  }
}

void pack_body(Packer& pk, const UpBeat& m) {
  pack_header(pk, 8, MsgType::kUpBeat);
  pack_str(pk, m.node_id);
  pk.pack_uint64(m.epoch);
  pk.pack_uint64(m.seq);
  pk.pack_uint64(m.digest);
  if (m.registrations)
    pack_registrations(pk, *m.registrations);
  else
    pk.pack_nil();
  pk.pack_array(static_cast<std::uint32_t>(m.uses.size()));
  for (const auto& u : m.uses) {
    pk.pack_array(3);
    pack_str(pk, u.service.name);
    pack_str(pk, u.service.group);
    pk.pack_uint64(u.version);
  }
  if (m.delta)
    pack_delta(pk, *m.delta);
  else
    pk.pack_nil();
  pk.pack_uint32(m.sender_tier);
}

void pack_body(Packer& pk, const DownBeat& m) {
  pack_header(pk, 8, MsgType::kDownBeat);
  pack_str(pk, m.hub_id);
  pk.pack_uint64(m.hub_epoch);
  pack_str(pk, m.node_id);
  pk.pack_uint64(m.ack_seq);
  pack_bool(pk, m.send_full);
  pk.pack_uint32(m.lease_ms);
  pk.pack_array(static_cast<std::uint32_t>(m.updates.size()));
  for (const auto& u : m.updates) {
    pk.pack_array(8);
    pack_str(pk, u.service.name);
    pack_str(pk, u.service.group);
    pk.pack_uint64(u.from_version);
    pk.pack_uint64(u.version);
    pk.pack_uint8(static_cast<std::uint8_t>(u.kind));
    pack_instances(pk, u.upserts);
    pack_strings(pk, u.removed);
    pack_optional_routes(pk, u.routes);
  }
  pack_bool(pk, m.push);
}

void pack_body(Packer& pk, const Query& m) {
  pack_header(pk, 4, MsgType::kQuery);
  pk.pack_uint64(m.request_id);
  pack_str(pk, m.node_id);
  pack_str(pk, m.service.name);
  pack_str(pk, m.service.group);
}

void pack_body(Packer& pk, const QueryReply& m) {
  pack_header(pk, 13, MsgType::kQueryReply);
  pk.pack_uint64(m.request_id);
  pack_str(pk, m.hub_id);
  pk.pack_uint64(m.hub_epoch);
  pack_str(pk, m.service.name);
  pack_str(pk, m.service.group);
  pack_bool(pk, m.found);
  pk.pack_uint64(m.version);
  pack_instances(pk, m.instances);
  pk.pack_uint32(m.tier);
  pk.pack_uint8(static_cast<std::uint8_t>(m.source));
  pk.pack_uint64(m.age_ms);
  pack_bool(pk, m.stale);
  pack_optional_routes(pk, m.routes);
}

void pack_body(Packer& pk, const Deregister& m) {
  pack_header(pk, 3, MsgType::kDeregister);
  pack_str(pk, m.node_id);
  pk.pack_uint64(m.epoch);
  pk.pack_uint64(m.seq);
}

void pack_body(Packer& pk, const DeregisterAck& m) {
  pack_header(pk, 3, MsgType::kDeregisterAck);
  pack_str(pk, m.node_id);
  pk.pack_uint64(m.seq);
  pk.pack_uint32(m.removed);
}

void pack_body(Packer& pk, const StatusRequest& m) {
  pack_header(pk, 1, MsgType::kStatusRequest);
  pk.pack_uint64(m.request_id);
}

void pack_body(Packer& pk, const StatusReply& m) {
  pack_header(pk, 17, MsgType::kStatusReply);
  pk.pack_uint64(m.request_id);
  pack_str(pk, m.hub_id);
  pk.pack_uint32(m.tier);
  pk.pack_uint64(m.hub_epoch);
  pk.pack_int64(m.uptime_ms);
  pk.pack_uint64(m.nodes);
  pk.pack_uint64(m.services);
  pk.pack_uint64(m.instances);
  pk.pack_map(static_cast<std::uint32_t>(m.counters.size()));
  for (const auto& [name, value] : m.counters) {
    pack_str(pk, name);
    pk.pack_uint64(value);
  }
  pack_str(pk, m.zone);
  pk.pack_array(static_cast<std::uint32_t>(m.upstreams.size()));
  for (const auto& u : m.upstreams) {
    pk.pack_array(6);
    pack_str(pk, u.endpoint);
    pack_str(pk, u.hub_id);
    pack_bool(pk, u.current);
    pack_bool(pk, u.reachable);
    pk.pack_int64(u.last_reply_ms);
    pk.pack_uint32(u.lease_ms);
  }
  pk.pack_uint64(m.child_hubs);
  pk.pack_uint64(m.cross_tier_entries);
  pk.pack_uint64(m.isolated);
  pk.pack_uint64(m.unconfirmed);
  pack_bool(pk, m.eviction_protection);
  pk.pack_uint32(m.notify_share_percent);
}

void pack_body(Packer& pk, const ServicesRequest& m) {
  pack_header(pk, 1, MsgType::kServicesRequest);
  pk.pack_uint64(m.request_id);
}

void pack_body(Packer& pk, const ServicesReply& m) {
  pack_header(pk, 2, MsgType::kServicesReply);
  pk.pack_uint64(m.request_id);
  pk.pack_array(static_cast<std::uint32_t>(m.services.size()));
  for (const auto& s : m.services) {
    pk.pack_array(5);
    pack_str(pk, s.service.name);
    pack_str(pk, s.service.group);
    pk.pack_uint64(s.version);
    pk.pack_uint32(s.instances);
    pk.pack_uint32(s.up);
  }
}

void pack_body(Packer& pk, const FailureReport& m) {
  pack_header(pk, 3, MsgType::kFailureReport);
  pk.pack_uint64(m.request_id);
  pk.pack_array(static_cast<std::uint32_t>(m.signals.size()));
  for (const auto& s : m.signals) {
    pk.pack_array(6);
    pack_str(pk, s.service.name);
    pack_str(pk, s.service.group);
    pack_str(pk, s.address);
    pk.pack_uint8(static_cast<std::uint8_t>(s.kind));
    pack_str(pk, s.reporter);
    pk.pack_uint32(s.count);
  }
  pk.pack_uint32(m.hops);
}

void pack_body(Packer& pk, const ReportAck& m) {
  pack_header(pk, 5, MsgType::kReportAck);
  pk.pack_uint64(m.request_id);
  pk.pack_uint32(m.accepted);
  pk.pack_uint32(m.forwarded);
  pk.pack_uint32(m.unknown);
  pk.pack_uint32(m.isolated);
}

void pack_body(Packer& pk, const AdminRequest& m) {
  pack_header(pk, 10, MsgType::kAdminRequest);
  pk.pack_uint64(m.request_id);
  pk.pack_uint8(static_cast<std::uint8_t>(m.op));
  pack_str(pk, m.actor);
  pack_str(pk, m.service.name);
  pack_str(pk, m.service.group);
  pack_str(pk, m.instance_id);
  if (m.instance)
    pack_instance(pk, *m.instance);
  else
    pk.pack_nil();
  pack_bool(pk, m.enabled);
  pk.pack_uint32(m.share_percent);
  pack_routes(pk, m.routes);
}

void pack_body(Packer& pk, const AdminReply& m) {
  pack_header(pk, 3, MsgType::kAdminReply);
  pk.pack_uint64(m.request_id);
  pack_bool(pk, m.ok);
  pack_str(pk, m.message);
}

void pack_body(Packer& pk, const ErrorReply& m) {
  pack_header(pk, 3, MsgType::kError);
  pk.pack_uint8(static_cast<std::uint8_t>(m.code));
  pack_str(pk, m.message);
  pk.pack_uint64(m.ref);
}

// ---------------------------------------------------------------- decoding

struct DecodeException {
  ErrorCode code;
  std::string what;
};

[[noreturn]] void fail(ErrorCode code, std::string what) {
  throw DecodeException{code, std::move(what)};
}

std::span<const msgpack::object> as_array(const msgpack::object& o, const char* name) {
  if (o.type != msgpack::type::ARRAY)
    fail(ErrorCode::kMalformed, std::string(name) + ": not an array");
  return {o.via.array.ptr, o.via.array.size};
}

// Reads the fields of one array in order. Missing fields are an error;
// trailing fields beyond what this version knows are ignored.
class Fields {
 public:
  Fields(const msgpack::object& o, const char* what, std::size_t at_least)
      : items_(as_array(o, what)), what_(what) {
    if (items_.size() < at_least)
      fail(ErrorCode::kMalformed, std::string(what) + ": too few fields");
  }

  const msgpack::object& next() { return items_[pos_++]; }
  // True while optional trailing fields remain (fields added in a later revision).
  bool has_more() const { return pos_ < items_.size(); }

  std::uint64_t u64(const char* name) {
    const auto& o = next();
    if (o.type != msgpack::type::POSITIVE_INTEGER) bad_type(name, "an unsigned integer");
    return o.via.u64;
  }
  std::uint32_t u32(const char* name) {
    const auto v = u64(name);
    if (v > std::numeric_limits<std::uint32_t>::max())
      fail(ErrorCode::kInvalid, field(name) + " out of range");
    return static_cast<std::uint32_t>(v);
  }
  std::uint8_t enum_u8(const char* name, std::uint8_t max, std::uint8_t min = 0) {
    const auto v = u64(name);
    if (v < min || v > max)
      fail(ErrorCode::kInvalid, field(name) + " has unknown value " + std::to_string(v));
    return static_cast<std::uint8_t>(v);
  }
  std::int64_t i64(const char* name) {
    const auto& o = next();
    if (o.type == msgpack::type::POSITIVE_INTEGER) {
      if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        fail(ErrorCode::kInvalid, field(name) + " out of range");
      return static_cast<std::int64_t>(o.via.u64);
    }
    if (o.type != msgpack::type::NEGATIVE_INTEGER) bad_type(name, "an integer");
    return o.via.i64;
  }
  bool boolean(const char* name) {
    const auto& o = next();
    if (o.type != msgpack::type::BOOLEAN) bad_type(name, "a boolean");
    return o.via.boolean;
  }
  std::string str(const char* name, std::size_t max_bytes) {
    return string_of(next(), name, max_bytes);
  }
  std::string name_str(const char* name) {
    auto s = str(name, kMaxServiceNameBytes);
    check_printable(s, name);
    return s;
  }

  std::string string_of(const msgpack::object& o, const char* name, std::size_t max_bytes) const {
    if (o.type != msgpack::type::STR) bad_type(name, "a string");
    if (o.via.str.size > max_bytes)
      fail(ErrorCode::kInvalid,
           field(name) + " longer than " + std::to_string(max_bytes) + " bytes");
    return std::string(o.via.str.ptr, o.via.str.size);
  }

  void check_printable(std::string_view s, const char* name) const {
    if (s.empty()) fail(ErrorCode::kInvalid, field(name) + " is empty");
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7f)
        fail(ErrorCode::kInvalid, field(name) + " has a control character");
  }

  [[noreturn]] void bad_type(const char* name, const char* expected) const {
    fail(ErrorCode::kMalformed, field(name) + " is not " + expected);
  }
  std::string field(const char* name) const { return std::string(what_) + "." + name; }

 private:
  std::span<const msgpack::object> items_;
  const char* what_;
  std::size_t pos_ = 0;
};

std::map<std::string, std::string> read_metadata(Fields& f) {
  const auto& o = f.next();
  if (o.type != msgpack::type::MAP) f.bad_type("metadata", "a map");
  if (o.via.map.size > kMaxMetadataEntries)
    fail(ErrorCode::kInvalid, "metadata has too many entries");
  std::map<std::string, std::string> md;
  for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
    const auto& kv = o.via.map.ptr[i];
    md.emplace(f.string_of(kv.key, "metadata key", kMaxMetadataKeyBytes),
               f.string_of(kv.val, "metadata value", kMaxMetadataValueBytes));
  }
  return md;
}

void read_instance_fields(Fields& f, Instance& in) {
  in.id = f.str("id", kMaxIdBytes);
  f.check_printable(in.id, "id");
  in.address = f.str("address", kMaxAddressBytes);
  f.check_printable(in.address, "address");
  in.weight = f.u32("weight");
  in.zone = f.str("zone", kMaxServiceNameBytes);
  in.status = static_cast<InstanceStatus>(f.enum_u8("status", kMaxInstanceStatus));
  in.metadata = read_metadata(f);
}

void read_health(Fields& f, Instance& in) {
  in.health = static_cast<Health>(f.enum_u8("health", kMaxHealth));
  in.health_reason = f.str("health_reason", kMaxReasonBytes);
}

Instance read_instance(const msgpack::object& o) {
  Fields f(o, "instance", 6);
  Instance in;
  read_instance_fields(f, in);
  if (f.has_more()) in.tier = f.u32("tier");
  if (f.has_more()) read_health(f, in);
  return in;
}

template <typename T, typename Fn>
std::vector<T> read_list(const msgpack::object& o, const char* name, Fn&& read_one) {
  auto items = as_array(o, name);
  std::vector<T> out;
  out.reserve(items.size());
  for (const auto& item : items)
    out.push_back(read_one(item));
  return out;
}

ServiceKey read_key(Fields& f) {
  ServiceKey k;
  k.name = f.name_str("service");
  k.group = f.name_str("group");
  return k;
}

std::vector<Registration> read_registrations(const msgpack::object& o, const char* name) {
  return read_list<Registration>(o, name, [](const msgpack::object& item) {
    Fields rf(item, "registration", 8);
    Registration r;
    r.service = read_key(rf);
    read_instance_fields(rf, r.instance);
    if (rf.has_more()) read_health(rf, r.instance);
    return r;
  });
}

RegistrationDelta read_delta(const msgpack::object& o) {
  Fields f(o, "delta", 4);
  RegistrationDelta d;
  d.reset = f.boolean("reset");
  d.more = f.boolean("more");
  d.upserts = read_registrations(f.next(), "delta.upserts");
  d.removed = read_list<InstanceKey>(f.next(), "delta.removed", [](const msgpack::object& item) {
    Fields kf(item, "removed", 3);
    InstanceKey k;
    k.service = read_key(kf);
    k.id = kf.str("id", kMaxIdBytes);
    kf.check_printable(k.id, "id");
    return k;
  });
  return d;
}

std::vector<RouteRuleText> read_routes(const msgpack::object& o, const char* name) {
  if (o.type == msgpack::type::ARRAY && o.via.array.size > kMaxRouteRules)
    fail(ErrorCode::kInvalid,
         std::string(name) + " holds more than " + std::to_string(kMaxRouteRules) + " rules");
  return read_list<RouteRuleText>(o, name, [](const msgpack::object& item) {
    Fields rf(item, "route", 4);
    RouteRuleText r;
    r.text = rf.str("text", kMaxRouteRuleBytes);
    const auto priority = rf.i64("priority");
    if (priority < std::numeric_limits<std::int32_t>::min() ||
        priority > std::numeric_limits<std::int32_t>::max())
      fail(ErrorCode::kInvalid, rf.field("priority") + " out of range");
    r.priority = static_cast<std::int32_t>(priority);
    r.force = rf.boolean("force");
    r.enabled = rf.boolean("enabled");
    return r;
  });
}

// A trailing nil-or-array routes field; absent reads as nil.
std::optional<std::vector<RouteRuleText>> read_optional_routes(Fields& f, const char* name) {
  if (!f.has_more()) return std::nullopt;
  const auto& o = f.next();
  if (o.type == msgpack::type::NIL) return std::nullopt;
  return read_routes(o, name);
}

UpBeat read_upbeat(Fields& f) {
  UpBeat m;
  m.node_id = f.name_str("node_id");
  m.epoch = f.u64("epoch");
  m.seq = f.u64("seq");
  m.digest = f.u64("digest");
  const auto& regs = f.next();
  if (regs.type != msgpack::type::NIL) m.registrations = read_registrations(regs, "registrations");
  m.uses = read_list<ServiceUse>(f.next(), "uses", [](const msgpack::object& o) {
    Fields uf(o, "use", 3);
    ServiceUse u;
    u.service = read_key(uf);
    u.version = uf.u64("version");
    return u;
  });
  if (f.has_more()) {
    const auto& delta = f.next();
    if (delta.type != msgpack::type::NIL) m.delta = read_delta(delta);
  }
  if (f.has_more()) m.sender_tier = f.u32("sender_tier");
  return m;
}

std::vector<std::string> read_strings(const msgpack::object& o, const char* name) {
  Fields holder(o, name, 0);
  return read_list<std::string>(
      o, name, [&](const msgpack::object& s) { return holder.string_of(s, name, kMaxIdBytes); });
}

DownBeat read_downbeat(Fields& f) {
  DownBeat m;
  m.hub_id = f.name_str("hub_id");
  m.hub_epoch = f.u64("hub_epoch");
  m.node_id = f.name_str("node_id");
  m.ack_seq = f.u64("ack_seq");
  m.send_full = f.boolean("send_full");
  m.lease_ms = f.u32("lease_ms");
  m.updates = read_list<ServiceUpdate>(f.next(), "updates", [](const msgpack::object& o) {
    Fields uf(o, "update", 7);
    ServiceUpdate u;
    u.service = read_key(uf);
    u.from_version = uf.u64("from_version");
    u.version = uf.u64("version");
    u.kind = static_cast<UpdateKind>(uf.enum_u8("kind", kMaxUpdateKind));
    u.upserts = read_list<Instance>(uf.next(), "upserts", read_instance);
    u.removed = read_strings(uf.next(), "removed");
    u.routes = read_optional_routes(uf, "update.routes");
    return u;
  });
  if (f.has_more()) m.push = f.boolean("push");
  return m;
}

Query read_query(Fields& f) {
  Query m;
  m.request_id = f.u64("request_id");
  m.node_id = f.str("node_id", kMaxIdBytes);
  m.service = read_key(f);
  return m;
}

QueryReply read_query_reply(Fields& f) {
  QueryReply m;
  m.request_id = f.u64("request_id");
  m.hub_id = f.name_str("hub_id");
  m.hub_epoch = f.u64("hub_epoch");
  m.service = read_key(f);
  m.found = f.boolean("found");
  m.version = f.u64("version");
  m.instances = read_list<Instance>(f.next(), "instances", read_instance);
  if (f.has_more()) {
    m.tier = f.u32("tier");
    m.source = static_cast<AnswerSource>(f.enum_u8("source", kMaxAnswerSource));
    m.age_ms = f.u64("age_ms");
  }
  if (f.has_more()) m.stale = f.boolean("stale");
  m.routes = read_optional_routes(f, "QueryReply.routes");
  return m;
}

Deregister read_deregister(Fields& f) {
  Deregister m;
  m.node_id = f.name_str("node_id");
  m.epoch = f.u64("epoch");
  m.seq = f.u64("seq");
  return m;
}

DeregisterAck read_deregister_ack(Fields& f) {
  DeregisterAck m;
  m.node_id = f.name_str("node_id");
  m.seq = f.u64("seq");
  m.removed = f.u32("removed");
  return m;
}

StatusReply read_status_reply(Fields& f) {
  StatusReply m;
  m.request_id = f.u64("request_id");
  m.hub_id = f.name_str("hub_id");
  m.tier = f.u32("tier");
  m.hub_epoch = f.u64("hub_epoch");
  m.uptime_ms = f.i64("uptime_ms");
  m.nodes = f.u64("nodes");
  m.services = f.u64("services");
  m.instances = f.u64("instances");
  const auto& o = f.next();
  if (o.type != msgpack::type::MAP) f.bad_type("counters", "a map");
  for (std::uint32_t i = 0; i < o.via.map.size; ++i) {
    const auto& kv = o.via.map.ptr[i];
    if (kv.val.type != msgpack::type::POSITIVE_INTEGER)
      f.bad_type("counter value", "an unsigned integer");
    m.counters.emplace_back(f.string_of(kv.key, "counter", kMaxIdBytes), kv.val.via.u64);
  }
  if (!f.has_more()) return m;
  m.zone = f.str("zone", kMaxServiceNameBytes);
  m.upstreams = read_list<UpstreamStatus>(f.next(), "upstreams", [](const msgpack::object& item) {
    Fields uf(item, "upstream", 6);
    UpstreamStatus u;
    u.endpoint = uf.str("endpoint", kMaxAddressBytes);
    u.hub_id = uf.str("hub_id", kMaxIdBytes);
    u.current = uf.boolean("current");
    u.reachable = uf.boolean("reachable");
    u.last_reply_ms = uf.i64("last_reply_ms");
    u.lease_ms = uf.u32("lease_ms");
    return u;
  });
  m.child_hubs = f.u64("child_hubs");
  m.cross_tier_entries = f.u64("cross_tier_entries");
  if (!f.has_more()) return m;
  m.isolated = f.u64("isolated");
  m.unconfirmed = f.u64("unconfirmed");
  m.eviction_protection = f.boolean("eviction_protection");
  m.notify_share_percent = f.u32("notify_share_percent");
  return m;
}

ServicesReply read_services_reply(Fields& f) {
  ServicesReply m;
  m.request_id = f.u64("request_id");
  m.services = read_list<ServiceSummary>(f.next(), "services", [](const msgpack::object& o) {
    Fields sf(o, "summary", 5);
    ServiceSummary s;
    s.service = read_key(sf);
    s.version = sf.u64("version");
    s.instances = sf.u32("instances");
    s.up = sf.u32("up");
    return s;
  });
  return m;
}

FailureReport read_failure_report(Fields& f) {
  FailureReport m;
  m.request_id = f.u64("request_id");
  m.signals = read_list<FailureSignal>(f.next(), "signals", [](const msgpack::object& o) {
    Fields sf(o, "signal", 6);
    FailureSignal s;
    s.service = read_key(sf);
    s.address = sf.str("address", kMaxAddressBytes);
    sf.check_printable(s.address, "address");
    s.kind = static_cast<FailureKind>(sf.enum_u8("kind", kMaxFailureKind));
    s.reporter = sf.str("reporter", kMaxIdBytes);
    s.count = sf.u32("count");
    return s;
  });
  m.hops = f.u32("hops");
  return m;
}

ReportAck read_report_ack(Fields& f) {
  ReportAck m;
  m.request_id = f.u64("request_id");
  m.accepted = f.u32("accepted");
  m.forwarded = f.u32("forwarded");
  m.unknown = f.u32("unknown");
  m.isolated = f.u32("isolated");
  return m;
}

AdminRequest read_admin_request(Fields& f) {
  AdminRequest m;
  m.request_id = f.u64("request_id");
  m.op = static_cast<AdminOp>(f.enum_u8("op", kMaxAdminOp, /*min=*/1));
  m.actor = f.str("actor", kMaxIdBytes);
  m.service.name = f.str("service", kMaxServiceNameBytes);
  m.service.group = f.str("group", kMaxServiceNameBytes);
  m.instance_id = f.str("instance_id", kMaxIdBytes);
  const auto& in = f.next();
  if (in.type != msgpack::type::NIL) m.instance = read_instance(in);
  m.enabled = f.boolean("enabled");
  m.share_percent = f.u32("share_percent");
  if (f.has_more()) m.routes = read_routes(f.next(), "AdminRequest.routes");
  return m;
}

AdminReply read_admin_reply(Fields& f) {
  AdminReply m;
  m.request_id = f.u64("request_id");
  m.ok = f.boolean("ok");
  m.message = f.str("message", kMaxMessageBytes);
  return m;
}

ErrorReply read_error(Fields& f) {
  ErrorReply m;
  m.code = static_cast<ErrorCode>(f.enum_u8("code", kMaxErrorCode, /*min=*/1));
  m.message = f.str("message", kMaxMessageBytes);
  m.ref = f.u64("ref");
  return m;
}

// Fields each type needs beyond [version, type].
std::size_t required_fields(MsgType t) {
  switch (t) {
    case MsgType::kUpBeat:
      return 6;
    case MsgType::kDownBeat:
      return 7;
    case MsgType::kQuery:
      return 4;
    case MsgType::kQueryReply:
      return 8;
    case MsgType::kDeregister:
      return 3;
    case MsgType::kDeregisterAck:
      return 3;
    case MsgType::kStatusRequest:
      return 1;
    case MsgType::kStatusReply:
      return 9;
    case MsgType::kServicesRequest:
      return 1;
    case MsgType::kServicesReply:
      return 2;
    case MsgType::kError:
      return 3;
    case MsgType::kBatch:
      return 1;
    case MsgType::kFailureReport:
      return 3;
    case MsgType::kReportAck:
      return 5;
    case MsgType::kAdminRequest:
      return 9;
    case MsgType::kAdminReply:
      return 3;
  }
  return 0;
}

// The id a peer can match an error against, read without trusting the shape.
std::uint64_t best_effort_ref(std::span<const msgpack::object> items, MsgType t) {
  std::size_t index = 0;
  switch (t) {
    case MsgType::kUpBeat:
      index = 4;
      break;  // seq
    case MsgType::kDeregister:
      index = 4;
      break;  // seq
    case MsgType::kQuery:
    case MsgType::kStatusRequest:
    case MsgType::kServicesRequest:
    case MsgType::kFailureReport:
    case MsgType::kAdminRequest:
      index = 2;
      break;  // request_id
    default:
      return 0;
  }
  if (items.size() > index && items[index].type == msgpack::type::POSITIVE_INTEGER)
    return items[index].via.u64;
  return 0;
}

MsgType read_type(std::span<const msgpack::object> items) {
  if (items.size() < 2) fail(ErrorCode::kMalformed, "message: fewer than 2 fields");
  if (items[0].type != msgpack::type::POSITIVE_INTEGER)
    fail(ErrorCode::kMalformed, "message: version is not an unsigned integer");
  if (items[0].via.u64 != kProtocolVersion)
    fail(ErrorCode::kUnknownVersion,
         "unsupported protocol version " + std::to_string(items[0].via.u64));
  if (items[1].type != msgpack::type::POSITIVE_INTEGER)
    fail(ErrorCode::kMalformed, "message: type is not an unsigned integer");
  const auto t = items[1].via.u64;
  if (t < 1 || t > kMaxMsgType)
    fail(ErrorCode::kUnknownType, "unknown message type " + std::to_string(t));
  return static_cast<MsgType>(t);
}

Message read_body(MsgType type, const msgpack::object& whole) {
  Fields f(whole, to_string(type), required_fields(type) + 2);
  f.next();  // version
  f.next();  // type
  switch (type) {
    case MsgType::kUpBeat:
      return read_upbeat(f);
    case MsgType::kDownBeat:
      return read_downbeat(f);
    case MsgType::kQuery:
      return read_query(f);
    case MsgType::kQueryReply:
      return read_query_reply(f);
    case MsgType::kDeregister:
      return read_deregister(f);
    case MsgType::kDeregisterAck:
      return read_deregister_ack(f);
    case MsgType::kStatusRequest:
      return StatusRequest{f.u64("request_id")};
    case MsgType::kStatusReply:
      return read_status_reply(f);
    case MsgType::kServicesRequest:
      return ServicesRequest{f.u64("request_id")};
    case MsgType::kServicesReply:
      return read_services_reply(f);
    case MsgType::kError:
      return read_error(f);
    case MsgType::kFailureReport:
      return read_failure_report(f);
    case MsgType::kReportAck:
      return read_report_ack(f);
    case MsgType::kAdminRequest:
      return read_admin_request(f);
    case MsgType::kAdminReply:
      return read_admin_reply(f);
    case MsgType::kBatch:
      break;
  }
  fail(ErrorCode::kMalformed, "a batch cannot be nested");
}

DecodedMessage decode_message(const msgpack::object& o) {
  std::span<const msgpack::object> items;
  MsgType type{};
  try {
    items = as_array(o, "message");
    type = read_type(items);
  } catch (const DecodeException& e) {
    return DecodeFailure{e.code, e.what, 0};
  }
  try {
    return read_body(type, o);
  } catch (const DecodeException& e) {
    return DecodeFailure{e.code, e.what, best_effort_ref(items, type)};
  }
}

msgpack::unpack_limit wire_limits(std::size_t frame_bytes, std::size_t max_frame_bytes) {
  // Every element takes at least one byte, so no array may claim more items
  // than the frame has bytes; the parser reserves memory per claimed item
  // before reading any, so this bound is what keeps a 35-byte frame from
  // reserving a gigabyte. Strings are copied only once all their bytes are
  // present, so they may be checked against the frame limit.
  return msgpack::unpack_limit(/*array=*/frame_bytes, /*map=*/kMaxMetadataEntries * 16,
                               /*str=*/max_frame_bytes, /*bin=*/0, /*ext=*/0, /*depth=*/8);
}

DecodedFrame single_failure(ErrorCode code, std::string what) {
  DecodedFrame frame;
  frame.items.emplace_back(DecodeFailure{code, std::move(what), 0});
  return frame;
}

}  // namespace

DecodedFrame decode_frame(std::string_view bytes, const DecodeLimits& limits) {
  if (bytes.size() > limits.max_frame_bytes)
    return single_failure(ErrorCode::kTooLarge, "frame of " + std::to_string(bytes.size()) +
                                                    " bytes exceeds the limit of " +
                                                    std::to_string(limits.max_frame_bytes));
  // One zone per thread, cleared per frame: no fresh 8 KiB chunk (and the
  // malloc_consolidate it triggers) for every frame on the hub's hot path.
  // Decoded messages own copies of their strings, so nothing outlives the zone.
  static thread_local msgpack::zone zone;
  zone.clear();
  msgpack::object root_object;
  try {
    std::size_t offset = 0;
    bool referenced = false;
    root_object = msgpack::unpack(zone, bytes.data(), bytes.size(), offset, referenced, nullptr,
                                  nullptr, wire_limits(bytes.size(), limits.max_frame_bytes));
    if (offset != bytes.size())
      return single_failure(ErrorCode::kMalformed, "trailing bytes after the message");
  } catch (const msgpack::array_size_overflow&) {
    return single_failure(ErrorCode::kMalformed, "an array claims more items than the frame holds");
  } catch (const msgpack::size_overflow& e) {
    return single_failure(ErrorCode::kTooLarge,
                          std::string("an element exceeds a limit: ") + e.what());
  } catch (const std::exception& e) {
    return single_failure(ErrorCode::kMalformed, std::string("not valid MessagePack: ") + e.what());
  }
  const msgpack::object& root = root_object;
  try {
    auto items = as_array(root, "message");
    if (read_type(items) != MsgType::kBatch) return DecodedFrame{false, {decode_message(root)}};
    if (items.size() < 3) fail(ErrorCode::kMalformed, "batch: too few fields");
    auto inner = as_array(items[2], "batch");
    if (inner.size() > kMaxBatchMessages)
      fail(ErrorCode::kTooLarge, "batch holds too many messages");
    DecodedFrame frame{true, {}};
    frame.items.reserve(inner.size());
    for (const auto& m : inner)
      frame.items.push_back(decode_message(m));
    return frame;
  } catch (const DecodeException& e) {
    return single_failure(e.code, e.what);
  }
}

void encode_into(const Message& message, Bytes& out) {
  StringSink sink{out};
  Packer pk(sink);
  std::visit([&](const auto& m) { pack_body(pk, m); }, message);
}

Bytes encode(const Message& message) {
  Bytes out;
  encode_into(message, out);
  return out;
}

Bytes encode_batch(std::span<const Message> messages) {
  Bytes out;
  StringSink sink{out};
  Packer pk(sink);
  pack_header(pk, 1, MsgType::kBatch);
  pk.pack_array(static_cast<std::uint32_t>(messages.size()));
  for (const auto& m : messages)
    encode_into(m, out);
  return out;
}

std::size_t required_field_count(MsgType type) {
  return required_fields(type);
}

ErrorReply to_error_reply(const DecodeFailure& failure) {
  return ErrorReply{failure.code, clip_message(failure.what), failure.ref};
}

}  // namespace cascade::proto
