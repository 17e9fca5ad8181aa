#include "cascade/tools/ctl/render.hpp"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "cascade/common/instance_json.hpp"

namespace cascade::ctl {
namespace {

using Json = nlohmann::ordered_json;

std::size_t display_width(std::string_view text) {
  // Code points, not bytes: count every byte that is not a UTF-8 continuation.
  return static_cast<std::size_t>(std::count_if(text.begin(), text.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0U) != 0x80U;
  }));
}

std::string dump(const Json& json) {
  return json.dump(2, ' ', false, Json::error_handler_t::replace) + "\n";
}

std::string count_noun(std::size_t n, std::string_view noun) {
  return std::to_string(n) + " " + std::string(noun) + (n == 1 ? "" : "s");
}

}  // namespace

std::string format_table(const std::vector<Column>& columns,
                         const std::vector<std::vector<std::string>>& rows, bool header) {
  std::vector<std::vector<std::string>> cells;
  cells.reserve(rows.size() + 1);
  if (header) {
    std::vector<std::string> headings;
    for (const auto& column : columns)
      headings.push_back(column.heading);
    cells.push_back(std::move(headings));
  }
  for (const auto& row : rows) {
    std::vector<std::string> line;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::string cell = i < row.size() ? printable(row[i]) : std::string{};
      line.push_back(cell.empty() ? "-" : cell);
    }
    cells.push_back(std::move(line));
  }

  std::vector<std::size_t> widths(columns.size(), 0);
  for (const auto& line : cells) {
    for (std::size_t i = 0; i < columns.size(); ++i) {
      widths[i] = std::max(widths[i], display_width(line[i]));
    }
  }

  std::string out;
  for (const auto& line : cells) {
    std::string text;
    for (std::size_t i = 0; i < columns.size(); ++i) {
      const std::size_t pad = widths[i] - display_width(line[i]);
      if (i > 0) text += "  ";
      if (columns[i].align == Align::kRight) text.append(pad, ' ');
      text += line[i];
      if (columns[i].align == Align::kLeft) text.append(pad, ' ');
    }
    while (!text.empty() && text.back() == ' ')
      text.pop_back();
    out += text;
    out += '\n';
  }
  return out;
}

std::string format_uptime(std::int64_t uptime_ms) {
  if (uptime_ms < 1000) return std::to_string(uptime_ms) + "ms";
  std::int64_t s = uptime_ms / 1000;
  const std::int64_t days = s / 86400;
  s %= 86400;
  const std::int64_t hours = s / 3600;
  s %= 3600;
  const std::int64_t minutes = s / 60;
  s %= 60;
  char buf[64];
  if (days > 0) {
    std::snprintf(buf, sizeof buf, "%lldd %02lldh %02lldm %02llds", static_cast<long long>(days),
                  static_cast<long long>(hours), static_cast<long long>(minutes),
                  static_cast<long long>(s));
  } else if (hours > 0) {
    std::snprintf(buf, sizeof buf, "%lldh %02lldm %02llds", static_cast<long long>(hours),
                  static_cast<long long>(minutes), static_cast<long long>(s));
  } else if (minutes > 0) {
    std::snprintf(buf, sizeof buf, "%lldm %02llds", static_cast<long long>(minutes),
                  static_cast<long long>(s));
  } else {
    std::snprintf(buf, sizeof buf, "%llds", static_cast<long long>(s));
  }
  return buf;
}

// ------------------------------------------------------------------- status

std::string status_table(const proto::StatusReply& reply) {
  std::vector<std::vector<std::string>> summary = {
      {"hub", reply.hub_id},
      {"tier", std::to_string(reply.tier)},
      {"epoch", std::to_string(reply.hub_epoch)},
      {"uptime", format_uptime(reply.uptime_ms)},
      {"nodes", std::to_string(reply.nodes)},
      {"services", std::to_string(reply.services)},
      {"instances", std::to_string(reply.instances)},
      {"isolated", std::to_string(reply.isolated)},
      {"unconfirmed", std::to_string(reply.unconfirmed)},
      {"eviction protection", reply.eviction_protection ? "on" : "off"},
      {"notify share", std::to_string(reply.notify_share_percent) + "%"},
  };
  // "curve", "loopback" or "insecure"; hubs before protocol revision 5 say nothing.
  if (!reply.security.empty()) summary.push_back({"security", reply.security});
  std::string out = format_table({{"", Align::kLeft}, {"", Align::kLeft}}, summary, false);
  if (!reply.counters.empty()) {
    std::vector<std::vector<std::string>> counters;
    for (const auto& [name, value] : reply.counters) {
      counters.push_back({name, std::to_string(value)});
    }
    out += '\n';
    out += format_table({{"COUNTER", Align::kLeft}, {"VALUE", Align::kRight}}, counters);
  }
  return out;
}

std::string status_json(const proto::StatusReply& reply) {
  Json counters = Json::object();
  for (const auto& [name, value] : reply.counters)
    counters[name] = value;
  Json json = {
      {"hub", reply.hub_id},
      {"tier", reply.tier},
      {"epoch", reply.hub_epoch},
      {"uptime_ms", reply.uptime_ms},
      {"nodes", reply.nodes},
      {"services", reply.services},
      {"instances", reply.instances},
      {"isolated", reply.isolated},
      {"unconfirmed", reply.unconfirmed},
      {"eviction_protection", reply.eviction_protection},
      {"notify_share_percent", reply.notify_share_percent},
      {"counters", std::move(counters)},
  };
  if (!reply.security.empty()) json["security"] = reply.security;
  return dump(json);
}

// ----------------------------------------------------------------- services

std::string services_table(const proto::ServicesReply& reply) {
  std::vector<std::vector<std::string>> rows;
  rows.reserve(reply.services.size());
  for (const auto& s : reply.services) {
    rows.push_back({s.service.name, s.service.group, std::to_string(s.version),
                    std::to_string(s.instances), std::to_string(s.up)});
  }
  return format_table({{"SERVICE", Align::kLeft},
                       {"GROUP", Align::kLeft},
                       {"VERSION", Align::kRight},
                       {"INSTANCES", Align::kRight},
                       {"UP", Align::kRight}},
                      rows);
}

std::string services_json(const proto::ServicesReply& reply) {
  Json list = Json::array();
  for (const auto& s : reply.services) {
    list.push_back({
        {"service", s.service.name},
        {"group", s.service.group},
        {"version", s.version},
        {"instances", s.instances},
        {"up", s.up},
    });
  }
  return dump(Json{{"services", std::move(list)}});
}

// ------------------------------------------------------------------ resolve

namespace {

// "tier 2, from cache, 850 ms old": where the list came from and how fresh it is.
std::string provenance(const proto::QueryReply& reply) {
  return "tier " + std::to_string(reply.tier) + ", " + proto::to_string(reply.source) + ", " +
         std::to_string(reply.age_ms) + " ms old" +
         (reply.stale ? ", STALE: upper tier unreachable" : "");
}

// "local" for the answering hub's own tier, else the tier that holds the instance.
std::string tier_cell(std::uint32_t tier) {
  return tier == 0 ? "local" : std::to_string(tier);
}

// Isolated instances `reply` holds that resolve leaves out.
std::size_t hidden_count(const proto::QueryReply& reply, bool show_all) {
  return static_cast<std::size_t>(
      std::count_if(reply.instances.begin(), reply.instances.end(),
                    [show_all](const proto::Instance& in) { return !is_shown(in, show_all); }));
}

}  // namespace

bool is_shown(const proto::Instance& instance, bool show_all) {
  return show_all || instance.health != proto::Health::kIsolated;
}

std::string resolve_table(const proto::QueryReply& reply, bool show_all) {
  std::string out =
      printable(reply.service.name) + " (group " + printable(reply.service.group) + ") ";
  if (reply.found) {
    out += "version " + std::to_string(reply.version) + " at hub " + printable(reply.hub_id) +
           " (" + provenance(reply) + "): " + count_noun(reply.instances.size(), "instance") + "\n";
  } else {
    out += "not found at hub " + printable(reply.hub_id) + "\n";
  }
  // The health columns appear when asked for, or when a shown instance needs
  // its mark (an unconfirmed one); a healthy list keeps the narrow table.
  bool health_columns = show_all;
  std::vector<std::vector<std::string>> rows;
  rows.reserve(reply.instances.size());
  for (const auto& in : reply.instances) {
    if (!is_shown(in, show_all)) continue;
    if (in.health != proto::Health::kOk) health_columns = true;
    rows.push_back({in.id, in.address, proto::to_string(in.status), std::to_string(in.weight),
                    in.zone, tier_cell(in.tier), proto::to_string(in.health), in.health_reason});
  }
  std::vector<Column> columns = {{"ID", Align::kLeft},     {"ADDRESS", Align::kLeft},
                                 {"STATUS", Align::kLeft}, {"WEIGHT", Align::kRight},
                                 {"ZONE", Align::kLeft},   {"TIER", Align::kLeft}};
  if (health_columns) {
    columns.push_back({"HEALTH", Align::kLeft});
    columns.push_back({"REASON", Align::kLeft});
  }
  out += format_table(columns, rows);
  if (const std::size_t hidden = hidden_count(reply, show_all); hidden > 0) {
    out += count_noun(hidden, "isolated instance") + " hidden (resolve --all shows " +
           (hidden == 1 ? "it" : "them") + ")\n";
  }
  if (reply.routes && !reply.routes->empty()) {
    // The hub's rules, as its consumers evaluate them: higher priority first.
    std::vector<std::vector<std::string>> rules;
    for (const auto& rule : *reply.routes) {
      rules.push_back({std::to_string(rule.priority), rule.force ? "yes" : "no",
                       rule.enabled ? "yes" : "no", printable(rule.text)});
    }
    out += "\n" + count_noun(reply.routes->size(), "routing rule") + " at hub " +
           printable(reply.hub_id) + ":\n";
    out += format_table({{"PRIORITY", Align::kRight},
                         {"FORCE", Align::kLeft},
                         {"ENABLED", Align::kLeft},
                         {"RULE", Align::kLeft}},
                        rules);
  }
  return out;
}

std::string resolve_json(const proto::QueryReply& reply, bool show_all) {
  Json instances = Json::array();
  for (const auto& in : reply.instances)
    if (is_shown(in, show_all)) instances.push_back(instance_json(in));
  Json json = {
      {"service", reply.service.name},
      {"group", reply.service.group},
      {"version", reply.version},
      {"hub", reply.hub_id},
      {"tier", reply.tier},
      {"source", proto::to_string(reply.source)},
      {"age_ms", reply.age_ms},
      {"stale", reply.stale},
      {"hidden_isolated", hidden_count(reply, show_all)},
      {"instances", std::move(instances)},
  };
  json["routes"] = routes_json(reply.routes);  // null: the hub did not say (an older revision)
  return dump(json);
}

// ----------------------------------------------------------------- topology

std::string topology_table(const proto::StatusReply& reply) {
  const auto agents = reply.nodes - std::min(reply.nodes, reply.child_hubs);
  std::vector<std::vector<std::string>> summary = {
      {"hub", reply.hub_id},
      {"tier", std::to_string(reply.tier)},
      {"zone", reply.zone},
      {"children", count_noun(agents, "agent") + ", " + count_noun(reply.child_hubs, "hub") +
                       " of lower tiers"},
      {"upstreams",
       reply.upstreams.empty() ? "none (top tier)" : std::to_string(reply.upstreams.size())},
      {"cross-tier", count_noun(reply.cross_tier_entries, "cached service")},
  };
  std::string out = format_table({{"", Align::kLeft}, {"", Align::kLeft}}, summary, false);
  if (reply.upstreams.empty()) return out;
  std::vector<std::vector<std::string>> rows;
  for (const auto& u : reply.upstreams) {
    const std::string state = !u.current ? "standby" : u.reachable ? "up" : "unreachable";
    const std::string last =
        u.last_reply_ms < 0 ? "never" : std::to_string(u.last_reply_ms) + " ms ago";
    rows.push_back({u.endpoint, u.hub_id, state, last,
                    u.lease_ms == 0 ? "" : std::to_string(u.lease_ms) + " ms"});
  }
  out += '\n';
  out += format_table({{"UPSTREAM", Align::kLeft},
                       {"HUB", Align::kLeft},
                       {"STATE", Align::kLeft},
                       {"LAST REPLY", Align::kLeft},
                       {"LEASE", Align::kRight}},
                      rows);
  return out;
}

std::string topology_json(const proto::StatusReply& reply) {
  Json upstreams = Json::array();
  for (const auto& u : reply.upstreams) {
    upstreams.push_back({{"endpoint", u.endpoint},
                         {"hub", u.hub_id},
                         {"current", u.current},
                         {"reachable", u.reachable},
                         {"last_reply_ms", u.last_reply_ms},
                         {"lease_ms", u.lease_ms}});
  }
  const auto agents = reply.nodes - std::min(reply.nodes, reply.child_hubs);
  Json json = {
      {"hub", reply.hub_id},
      {"tier", reply.tier},
      {"zone", reply.zone},
      {"children", {{"agents", agents}, {"hubs", reply.child_hubs}}},
      {"cross_tier_entries", reply.cross_tier_entries},
      {"upstreams", std::move(upstreams)},
  };
  return dump(json);
}

// ------------------------------------------------------------ report-failure

std::string report_table(const proto::FailureSignal& sent, const proto::ReportAck& ack) {
  std::string out =
      "reported " + count_noun(sent.count, std::string(proto::to_string(sent.kind)) + " failure") +
      " of " + printable(sent.service.name) + " (group " + printable(sent.service.group) + ") at " +
      printable(sent.address) + " as " + printable(sent.reporter) + "\n";
  const std::string isolated =
      ack.isolated == 0 ? "no" : "yes (" + count_noun(ack.isolated, "instance") + ")";
  out += format_table({{"", Align::kLeft}, {"", Align::kLeft}},
                      {{"accepted", std::to_string(ack.accepted)},
                       {"forwarded", std::to_string(ack.forwarded)},
                       {"unknown", std::to_string(ack.unknown)},
                       {"isolated", isolated}},
                      false);
  return out;
}

std::string report_json(const proto::FailureSignal& sent, const proto::ReportAck& ack) {
  Json json = {
      {"service", sent.service.name},
      {"group", sent.service.group},
      {"address", sent.address},
      {"kind", proto::to_string(sent.kind)},
      {"reporter", sent.reporter},
      {"count", sent.count},
      {"accepted", ack.accepted},
      {"forwarded", ack.forwarded},
      {"unknown", ack.unknown},
      {"isolated", ack.isolated > 0},
      {"isolated_instances", ack.isolated},
  };
  return dump(json);
}

// ---------------------------------------------------------- operator commands

std::string admin_table(const proto::AdminReply& reply) {
  return (reply.message.empty() ? std::string("done") : printable(reply.message)) + "\n";
}

std::string admin_json(proto::AdminOp op, const proto::AdminReply& reply) {
  return dump(Json{{"op", proto::to_string(op)}, {"ok", reply.ok}, {"message", reply.message}});
}

}  // namespace cascade::ctl
