#pragma once
// Pure rendering of hub replies for cascadectl: human tables and JSON.
//
// Every function returns the complete text including the final newline and
// touches no I/O, so tests compare strings. Human output escapes control bytes
// (a registered name cannot move the operator's cursor); JSON output replaces
// invalid UTF-8 with U+FFFD (the wire format does not promise valid UTF-8).
//
// JSON shapes (keys are part of the tool's contract; scripts read them):
//   status:   {"hub", "tier", "epoch", "uptime_ms", "nodes", "services",
//              "instances", "isolated", "unconfirmed", "eviction_protection" (bool),
//              "notify_share_percent", "counters": {name: value, ...}}
//   services: {"services": [{"service", "group", "version", "instances", "up"}]}
//   resolve:  {"service", "group", "version", "hub", "tier", "source", "age_ms",
//              "stale", "hidden_isolated", "instances": [{"id", "address", "status",
//              "weight", "zone", "tier", "health", "health_reason",
//              "metadata": {key: value, ...}}], "routes": [{"text", "priority",
//              "force", "enabled"}]}
//             (an instance's tier is 0 when it is in the answering hub's own tier;
//             "instances" holds the instances shown: without --all the isolated
//             ones are left out and counted in "hidden_isolated"; "routes" holds
//             the answering hub's routing rules for the service, null when the
//             hub did not say)
//   topology: {"hub", "tier", "zone", "children": {"agents", "hubs"},
//              "cross_tier_entries", "upstreams": [{"endpoint", "hub", "current",
//              "reachable", "last_reply_ms", "lease_ms"}]}
//   report-failure: {"service", "group", "address", "kind", "reporter", "count",
//              "accepted", "forwarded", "unknown", "isolated" (bool),
//              "isolated_instances"}
//   operator commands: {"op", "ok", "message"}
// Numbers are JSON numbers (uint64 values are printed exactly); status is the
// protocol name ("UP", "DOWN", "OUT_OF_SERVICE", "STARTING"), health "ok",
// "isolated" or "unconfirmed", kind and op their protocol names ("timeout",
// "mark_out_of_service", ...).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/printable.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::ctl {

enum class Align { kLeft, kRight };

struct Column {
  std::string heading;
  Align align = Align::kLeft;
};

// Columns separated by two spaces, widths from the widest cell (counted in
// UTF-8 code points), no trailing blanks. An empty cell prints as "-".
// `header` false leaves the heading line out.
std::string format_table(const std::vector<Column>& columns,
                         const std::vector<std::vector<std::string>>& rows, bool header = true);

// Control bytes (< 0x20 and 0x7f) as \xNN; everything else unchanged.
using cascade::printable;

// "3d 04h 05m 06s", "2h 00m 01s", "5m 00s", "42s", "850ms"; negative values as "<n>ms".
std::string format_uptime(std::int64_t uptime_ms);

std::string status_table(const proto::StatusReply& reply);
std::string status_json(const proto::StatusReply& reply);

std::string services_table(const proto::ServicesReply& reply);
std::string services_json(const proto::ServicesReply& reply);

// Whether resolve shows `instance`: isolated instances only with --all
// (`show_all`); unconfirmed ones always (marked in the HEALTH column).
bool is_shown(const proto::Instance& instance, bool show_all);

// A header line (service, group, version, hub, instance count or "not found")
// followed by the instance table ID ADDRESS STATUS WEIGHT ZONE TIER, with
// HEALTH and REASON columns when `show_all` or when a shown instance is not
// ok, a footer line counting the isolated instances left out, and the hub's
// routing rules for the service (PRIORITY FORCE ENABLED RULE) when it has any.
std::string resolve_table(const proto::QueryReply& reply, bool show_all = false);
std::string resolve_json(const proto::QueryReply& reply, bool show_all = false);

// The hub's place in the network: its tier and zone, its children (agents and
// lower-tier hubs) and its upstreams with their state.
std::string topology_table(const proto::StatusReply& reply);
std::string topology_json(const proto::StatusReply& reply);

// What the hub did with a failure report: a line naming the signal `sent`,
// then accepted / forwarded / unknown / isolated (yes or no).
std::string report_table(const proto::FailureSignal& sent, const proto::ReportAck& ack);
std::string report_json(const proto::FailureSignal& sent, const proto::ReportAck& ack);

// The hub's answer to an operator command: its message ("done" when empty).
std::string admin_table(const proto::AdminReply& reply);
std::string admin_json(proto::AdminOp op, const proto::AdminReply& reply);

}  // namespace cascade::ctl
