#pragma once
// Human-readable JSON for the golden samples (the .json beside each .msgpack).
// Keys follow the field names of schemas/protocol-v1.md in wire order; enums
// are written as "name (wire value)"; integers are exact decimals (some exceed
// 2^53, so read them as 64-bit integers, not doubles). Shared by the generator
// and by the test that checks the committed .json files are current.

#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::golden {

// Minimal pretty-printing JSON writer: two-space indent, one item per line.
class JsonWriter {
 public:
  JsonWriter& begin_object() { return open('{'); }
  JsonWriter& end_object() { return close('}'); }
  JsonWriter& begin_array() { return open('['); }
  JsonWriter& end_array() { return close(']'); }

  JsonWriter& key(std::string_view k) {
    item();
    quoted(k);
    out_ += ": ";
    after_key_ = true;
    return *this;
  }
  JsonWriter& value(std::string_view s) {
    item();
    quoted(s);
    return *this;
  }
  JsonWriter& value(const char* s) { return value(std::string_view(s)); }
  JsonWriter& value(std::uint64_t v) { return raw(std::to_string(v)); }
  JsonWriter& value(std::int64_t v) { return raw(std::to_string(v)); }
  JsonWriter& value(std::uint32_t v) { return raw(std::to_string(v)); }
  JsonWriter& value(bool b) { return raw(b ? "true" : "false"); }
  JsonWriter& null() { return raw("null"); }

  template <typename T>
  JsonWriter& field(std::string_view k, const T& v) {
    key(k);
    return value(v);
  }

  std::string take() { return std::move(out_) + "\n"; }

 private:
  JsonWriter& raw(std::string_view text) {
    item();
    out_ += text;
    return *this;
  }
  JsonWriter& open(char c) {
    item();
    out_ += c;
    empty_.push_back(true);
    return *this;
  }
  JsonWriter& close(char c) {
    const bool was_empty = empty_.back();
    empty_.pop_back();
    if (!was_empty) newline();
    out_ += c;
    return *this;
  }
  // Separates this item from the previous one, unless it is the value of a key.
  void item() {
    if (after_key_) {
      after_key_ = false;
      return;
    }
    if (empty_.empty()) return;
    if (!empty_.back()) out_ += ',';
    empty_.back() = false;
    newline();
  }
  void newline() {
    out_ += '\n';
    out_.append(2 * empty_.size(), ' ');
  }
  void quoted(std::string_view s) {
    static constexpr char kHex[] = "0123456789abcdef";
    out_ += '"';
    for (const unsigned char c : s) {
      if (c == '"' || c == '\\') {
        out_ += '\\';
        out_ += static_cast<char>(c);
      } else if (c < 0x20) {
        out_ += "\\u00";
        out_ += kHex[c >> 4];
        out_ += kHex[c & 0xf];
      } else {
        out_ += static_cast<char>(c);
      }
    }
    out_ += '"';
  }

  std::string out_;
  std::vector<bool> empty_;  // per open container: nothing written in it yet
  bool after_key_ = false;
};

inline std::string enum_text(const char* name, unsigned value) {
  return std::string(name) + " (" + std::to_string(value) + ")";
}

inline const char* kind_name(proto::UpdateKind k) {
  switch (k) {
    case proto::UpdateKind::kDelta:
      return "delta";
    case proto::UpdateKind::kFull:
      return "full";
    case proto::UpdateKind::kGone:
      return "gone";
  }
  return "unknown";
}

inline void write_key(JsonWriter& w, const proto::ServiceKey& k) {
  w.field("service", k.name).field("group", k.group);
}

// Instance fields without braces: a registration carries them flat after its key.
inline void write_instance_fields(JsonWriter& w, const proto::Instance& in) {
  w.field("id", in.id).field("address", in.address).field("weight", in.weight);
  w.field("zone", in.zone);
  w.field("status", enum_text(proto::to_string(in.status), static_cast<unsigned>(in.status)));
  w.key("metadata").begin_object();
  for (const auto& [k, v] : in.metadata)
    w.field(k, v);
  w.end_object();
}

inline void write_health(JsonWriter& w, const proto::Instance& in) {
  w.field("health", enum_text(proto::to_string(in.health), static_cast<unsigned>(in.health)));
  w.field("health_reason", in.health_reason);
}

inline void write_instance(JsonWriter& w, const proto::Instance& in) {
  w.begin_object();
  write_instance_fields(w, in);
  w.field("tier", in.tier);
  write_health(w, in);
  w.end_object();
}

inline void write_instances(JsonWriter& w, std::string_view name,
                            const std::vector<proto::Instance>& list) {
  w.key(name).begin_array();
  for (const auto& in : list)
    write_instance(w, in);
  w.end_array();
}

inline void write_strings(JsonWriter& w, std::string_view name,
                          const std::vector<std::string>& list) {
  w.key(name).begin_array();
  for (const auto& s : list)
    w.value(s);
  w.end_array();
}

inline void write_registrations(JsonWriter& w, std::string_view name,
                                const std::vector<proto::Registration>& regs) {
  w.key(name).begin_array();
  for (const auto& r : regs) {
    w.begin_object();
    write_key(w, r.service);
    write_instance_fields(w, r.instance);
    write_health(w, r.instance);
    w.end_object();
  }
  w.end_array();
}

inline void write_delta(JsonWriter& w, const proto::RegistrationDelta& d) {
  w.begin_object().field("reset", d.reset).field("more", d.more);
  write_registrations(w, "upserts", d.upserts);
  w.key("removed").begin_array();
  for (const auto& k : d.removed) {
    w.begin_object();
    write_key(w, k.service);
    w.field("id", k.id).end_object();
  }
  w.end_array().end_object();
}

inline void write_routes(JsonWriter& w, std::string_view name,
                         const std::vector<proto::RouteRuleText>& routes) {
  w.key(name).begin_array();
  for (const auto& r : routes) {
    w.begin_object().field("text", r.text);
    w.field("priority", static_cast<std::int64_t>(r.priority));
    w.field("force", r.force).field("enabled", r.enabled).end_object();
  }
  w.end_array();
}

// null when absent ("unchanged" / "not said").
inline void write_optional_routes(JsonWriter& w, std::string_view name,
                                  const std::optional<std::vector<proto::RouteRuleText>>& routes) {
  if (routes)
    write_routes(w, name, *routes);
  else
    w.key(name).null();
}

// Bytes (a MessagePack bin, revision 6) as hex and as text with every byte
// outside printable ASCII shown as '.'; an absent optional value as null.
inline void write_bytes(JsonWriter& w, std::string_view name, std::string_view bytes) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex, ascii;
  for (const unsigned char c : bytes) {
    hex += kHex[c >> 4];
    hex += kHex[c & 0xf];
    ascii += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.';
  }
  w.key(name).begin_object().field("bin_hex", hex).field("ascii", ascii).end_object();
}

inline void write_optional_bytes(JsonWriter& w, std::string_view name,
                                 const std::optional<std::string>& bytes) {
  if (bytes)
    write_bytes(w, name, *bytes);
  else
    w.key(name).null();
}

inline const char* view_name(proto::ConfigView v) {
  switch (v) {
    case proto::ConfigView::kGet:
      return "get";
    case proto::ConfigView::kList:
      return "list";
    case proto::ConfigView::kHistory:
      return "history";
  }
  return "unknown";
}

// A config entry is flat on the wire: key, value, then its origin's fields.
inline void write_config_entries(JsonWriter& w, std::string_view name,
                                 const std::vector<proto::ConfigEntry>& entries) {
  w.key(name).begin_array();
  for (const auto& e : entries) {
    w.begin_object().field("key", e.key);
    write_bytes(w, "value", e.value);
    w.field("tier", e.origin.tier).field("hub", e.origin.hub);
    w.field("version", e.origin.version).end_object();
  }
  w.end_array();
}

inline void write_fields(JsonWriter& w, const proto::UpBeat& m) {
  w.field("node_id", m.node_id).field("epoch", m.epoch).field("seq", m.seq);
  w.field("digest", m.digest);
  if (!m.registrations)
    w.key("registrations").null();
  else
    write_registrations(w, "registrations", *m.registrations);
  w.key("uses").begin_array();
  for (const auto& u : m.uses) {
    w.begin_object();
    write_key(w, u.service);
    w.field("version", u.version).end_object();
  }
  w.end_array();
  w.key("delta");
  if (m.delta)
    write_delta(w, *m.delta);
  else
    w.null();
  w.field("sender_tier", m.sender_tier).field("on_behalf_of", m.on_behalf_of);
  w.key("configs").begin_array();
  for (const auto& c : m.configs)
    w.begin_object().field("group", c.group).field("version", c.version).end_object();
  w.end_array();
}

inline void write_fields(JsonWriter& w, const proto::DownBeat& m) {
  w.field("hub_id", m.hub_id).field("hub_epoch", m.hub_epoch).field("node_id", m.node_id);
  w.field("ack_seq", m.ack_seq).field("send_full", m.send_full).field("lease_ms", m.lease_ms);
  w.key("updates").begin_array();
  for (const auto& u : m.updates) {
    w.begin_object();
    write_key(w, u.service);
    w.field("from_version", u.from_version).field("version", u.version);
    w.field("kind", enum_text(kind_name(u.kind), static_cast<unsigned>(u.kind)));
    write_instances(w, "upserts", u.upserts);
    write_strings(w, "removed", u.removed);
    write_optional_routes(w, "routes", u.routes);
    w.field("more", u.more).end_object();
  }
  w.end_array();
  w.field("push", m.push).key("stale").begin_array();
  for (const auto& s : m.stale) {
    w.begin_object();
    write_key(w, s.service);
    w.field("age_ms", s.age_ms).end_object();
  }
  w.end_array().key("config_updates").begin_array();
  for (const auto& u : m.config_updates) {
    w.begin_object().field("group", u.group);
    w.field("from_version", u.from_version).field("version", u.version);
    w.field("kind", enum_text(kind_name(u.kind), static_cast<unsigned>(u.kind)));
    write_config_entries(w, "upserts", u.upserts);
    write_strings(w, "removed", u.removed);
    w.field("more", u.more).end_object();
  }
  w.end_array().key("stale_configs").begin_array();
  for (const auto& s : m.stale_configs)
    w.begin_object().field("group", s.group).field("age_ms", s.age_ms).end_object();
  w.end_array();
  w.field("send_configs", m.send_configs).field("interval_ms", m.interval_ms);
}

inline void write_fields(JsonWriter& w, const proto::Query& m) {
  w.field("request_id", m.request_id).field("node_id", m.node_id);
  write_key(w, m.service);
  w.field("on_behalf_of", m.on_behalf_of);
}

inline void write_fields(JsonWriter& w, const proto::QueryReply& m) {
  w.field("request_id", m.request_id).field("hub_id", m.hub_id).field("hub_epoch", m.hub_epoch);
  write_key(w, m.service);
  w.field("found", m.found).field("version", m.version);
  write_instances(w, "instances", m.instances);
  w.field("tier", m.tier)
      .field("source", enum_text(proto::to_string(m.source), static_cast<unsigned>(m.source)))
      .field("age_ms", m.age_ms)
      .field("stale", m.stale);
  write_optional_routes(w, "routes", m.routes);
  w.field("more", m.more);
}

inline void write_fields(JsonWriter& w, const proto::Deregister& m) {
  w.field("node_id", m.node_id).field("epoch", m.epoch).field("seq", m.seq);
  w.field("on_behalf_of", m.on_behalf_of);
}

inline void write_fields(JsonWriter& w, const proto::DeregisterAck& m) {
  w.field("node_id", m.node_id).field("seq", m.seq).field("removed", m.removed);
}

inline void write_fields(JsonWriter& w, const proto::StatusRequest& m) {
  w.field("request_id", m.request_id);
}

inline void write_fields(JsonWriter& w, const proto::StatusReply& m) {
  w.field("request_id", m.request_id).field("hub_id", m.hub_id).field("tier", m.tier);
  w.field("hub_epoch", m.hub_epoch).field("uptime_ms", m.uptime_ms).field("nodes", m.nodes);
  w.field("services", m.services).field("instances", m.instances);
  w.key("counters").begin_object();
  for (const auto& [name, value] : m.counters)
    w.field(name, value);
  w.end_object();
  w.field("zone", m.zone).key("upstreams").begin_array();
  for (const auto& u : m.upstreams) {
    w.begin_object().field("endpoint", u.endpoint).field("hub_id", u.hub_id);
    w.field("current", u.current).field("reachable", u.reachable);
    w.field("last_reply_ms", u.last_reply_ms).field("lease_ms", u.lease_ms).end_object();
  }
  w.end_array();
  w.field("child_hubs", m.child_hubs).field("cross_tier_entries", m.cross_tier_entries);
  w.field("isolated", m.isolated).field("unconfirmed", m.unconfirmed);
  w.field("eviction_protection", m.eviction_protection);
  w.field("notify_share_percent", m.notify_share_percent).field("security", m.security);
}

inline void write_fields(JsonWriter& w, const proto::ServicesRequest& m) {
  w.field("request_id", m.request_id);
}

inline void write_fields(JsonWriter& w, const proto::ServicesReply& m) {
  w.field("request_id", m.request_id).key("services").begin_array();
  for (const auto& s : m.services) {
    w.begin_object();
    write_key(w, s.service);
    w.field("version", s.version).field("instances", s.instances).field("up", s.up);
    w.end_object();
  }
  w.end_array();
}

inline void write_fields(JsonWriter& w, const proto::ErrorReply& m) {
  w.field("code", enum_text(proto::to_string(m.code), static_cast<unsigned>(m.code)));
  w.field("message", m.message).field("ref", m.ref).field("retry_after_ms", m.retry_after_ms);
}

inline void write_fields(JsonWriter& w, const proto::FailureReport& m) {
  w.field("request_id", m.request_id).key("signals").begin_array();
  for (const auto& s : m.signals) {
    w.begin_object();
    write_key(w, s.service);
    w.field("address", s.address);
    w.field("kind", enum_text(proto::to_string(s.kind), static_cast<unsigned>(s.kind)));
    w.field("reporter", s.reporter).field("count", s.count).end_object();
  }
  w.end_array();
  w.field("hops", m.hops).field("on_behalf_of", m.on_behalf_of);
}

inline void write_fields(JsonWriter& w, const proto::ReportAck& m) {
  w.field("request_id", m.request_id).field("accepted", m.accepted);
  w.field("forwarded", m.forwarded).field("unknown", m.unknown).field("isolated", m.isolated);
}

inline void write_fields(JsonWriter& w, const proto::AdminRequest& m) {
  w.field("request_id", m.request_id);
  w.field("op", enum_text(proto::to_string(m.op), static_cast<unsigned>(m.op)));
  w.field("actor", m.actor);
  write_key(w, m.service);
  w.field("instance_id", m.instance_id).key("instance");
  if (m.instance)
    write_instance(w, *m.instance);
  else
    w.null();
  w.field("enabled", m.enabled).field("share_percent", m.share_percent);
  write_routes(w, "routes", m.routes);
  w.field("config_group", m.config_group).key("config_edits").begin_array();
  for (const auto& e : m.config_edits) {
    w.begin_object().field("key", e.key);
    write_optional_bytes(w, "value", e.value);
    w.end_object();
  }
  w.end_array().field("config_version", m.config_version);
}

inline void write_fields(JsonWriter& w, const proto::AdminReply& m) {
  w.field("request_id", m.request_id).field("ok", m.ok).field("message", m.message);
}

inline void write_fields(JsonWriter& w, const proto::ConfigRequest& m) {
  w.field("request_id", m.request_id);
  w.field("view", enum_text(view_name(m.view), static_cast<unsigned>(m.view)));
  w.field("group", m.group).field("key", m.key);
}

inline void write_fields(JsonWriter& w, const proto::ConfigReply& m) {
  w.field("request_id", m.request_id).field("ok", m.ok).field("message", m.message);
  w.field("group", m.group).field("version", m.version);
  write_config_entries(w, "entries", m.entries);
  w.key("groups").begin_array();
  for (const auto& g : m.groups) {
    w.begin_object().field("group", g.group).field("version", g.version);
    w.field("keys", g.keys).field("own_keys", g.own_keys).field("bytes", g.bytes);
    w.field("followers", g.followers).end_object();
  }
  w.end_array().key("history").begin_array();
  for (const auto& c : m.history) {
    w.begin_object().field("version", c.version).field("key", c.key);
    write_optional_bytes(w, "old_value", c.old_value);
    write_optional_bytes(w, "new_value", c.new_value);
    w.field("author", c.author).field("wall_ms", c.wall_ms).end_object();
  }
  w.end_array().field("more", m.more);
}

inline void write_header(JsonWriter& w, proto::MsgType type) {
  w.field("protocol_version", proto::kProtocolVersion);
  w.field("type", enum_text(proto::to_string(type), static_cast<unsigned>(type)));
}

inline void write_message(JsonWriter& w, const proto::Message& m) {
  w.begin_object();
  write_header(w, proto::type_of(m));
  std::visit([&](const auto& body) { write_fields(w, body); }, m);
  w.end_object();
}

inline void write_file_header(JsonWriter& w, std::string_view stem, std::string_view note,
                              std::size_t size) {
  w.begin_object().field("file", std::string(stem) + ".msgpack").field("note", note);
  w.field("size_bytes", static_cast<std::uint64_t>(size)).key("message");
}

// The .json for a single-message sample whose encoding is `size` bytes long.
inline std::string sample_json(std::string_view stem, std::string_view note,
                               const proto::Message& m, std::size_t size) {
  JsonWriter w;
  write_file_header(w, stem, note, size);
  write_message(w, m);
  return w.end_object().take();
}

// The .json for a batch frame.
inline std::string batch_json(std::string_view stem, std::string_view note,
                              std::span<const proto::Message> messages, std::size_t size) {
  JsonWriter w;
  write_file_header(w, stem, note, size);
  w.begin_object();
  write_header(w, proto::MsgType::kBatch);
  w.key("messages").begin_array();
  for (const auto& m : messages)
    write_message(w, m);
  w.end_array().end_object();
  return w.end_object().take();
}

}  // namespace cascade::golden
