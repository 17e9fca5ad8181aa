#pragma once
// cascadectl's commands without the command line: build the request, ask the
// hub, turn the reply into output text and an exit code.
//
// Exit codes (part of the tool's contract, printed by --help):
//   0  ok: resolve shows at least one instance; report-failure was accepted or
//      forwarded by the hub; an operator command was done (AdminReply.ok)
//   1  resolve: the service is unknown to the hub, has no instances, or every
//      instance is isolated and hidden; report-failure: the hub knows no such
//      address (the result is still printed); config get: no such group or key
//   2  usage error: bad flags, missing command, malformed --hub endpoint, a bad
//      argument value (empty id, bad kind, bad on/off, bad metadata, ...)
//   3  hub unreachable: no reply within --timeout-ms
//   4  the hub answered with an ErrorReply (printed to stderr), refused an
//      operator command (AdminReply not ok), or sent a reply of the wrong type
//   5  unauthenticated: the hub refused this tool's key (the Curve handshake,
//      or an ErrorReply unauthenticated: the key was removed since)
//   6  forbidden: the hub knows the key but its role or scope does not allow
//      the command (ErrorReply forbidden)

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/admin_request.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/tools/ctl/hub_client.hpp"

namespace cascade::ctl {

enum class ExitCode : int {
  kOk = 0,
  kNotFound = 1,
  kUsage = 2,
  kUnreachable = 3,
  kHubError = 4,
  kUnauthenticated = 5,
  kForbidden = 6,
};

enum class Command {
  kStatus,
  kServices,
  kResolve,
  kTopology,
  kReportFailure,  // a FailureReport with one signal, answered by a ReportAck
  kAdmin,          // an operator command (AdminArgs::op), answered by an AdminReply
  kConfig,         // config get / list / history: a ConfigRequest, answered by a ConfigReply
};
enum class OutputFormat { kTable, kJson };

inline constexpr Duration kDefaultTimeout{2000};

// The operator commands' arguments and rule prefixes, shared with the hub's
// HTTP admin API (common/admin_request.hpp).
using admin::AdminArgs;
using admin::kDefaultNotifySharePercent;
using admin::parse_rule;

// report-failure: the one signal sent (its service is CommandSpec::service).
struct FailureArgs {
  std::string address;  // the provider address the calls went to
  proto::FailureKind kind = proto::FailureKind::kTimeout;
  std::string reporter;     // node id of the caller; default_reporter() unless given
  std::uint32_t count = 1;  // failures folded into the signal, >= 1
};

// config get / list / history: what to read.
struct ConfigArgs {
  proto::ConfigView view = proto::ConfigView::kGet;
  std::string group;  // get, history
  std::string key;    // get: one key only (empty: the whole group)
};

struct CommandSpec {
  Command command = Command::kStatus;
  proto::ServiceKey service;  // resolve, report-failure, instance operations
  bool show_all = false;      // resolve: also the isolated instances
  FailureArgs failure{};      // report-failure only
  AdminArgs admin{};          // kAdmin only
  ConfigArgs config{};        // kConfig only
  OutputFormat format = OutputFormat::kTable;
  Duration timeout = kDefaultTimeout;
  std::uint64_t request_id = 1;  // non-zero: 0 means "unknown" in an ErrorReply
};

struct CommandResult {
  ExitCode code = ExitCode::kOk;
  std::string out;  // for stdout
  std::string err;  // for stderr, complete lines
};

// The node id cascadectl reports failures as: "cascadectl@<host>".
std::string default_reporter(std::string_view host);

// Who an operator command is recorded as: "<user>@<host>" ("unknown" for an
// empty user).
std::string default_actor(std::string_view user, std::string_view host);

// Reads `--metadata` entries "key=value" (the value may be empty and may hold
// '='; the key may not be empty or repeat) into `out`.
// @return "" when every entry is usable, else what is wrong with the first bad one.
std::string parse_metadata(const std::vector<std::string>& entries,
                           std::map<std::string, std::string>& out);

// "" when `spec` can be sent, else a usage error for the operator: an empty or
// overlong id or name, a control character, a count of 0, a share outside
// 1..100, an add-static instance the hub would refuse. Checks only the
// commands that change the hub's state (report-failure and the operator
// commands); the read-only ones are left to the hub.
std::string check_spec(const CommandSpec& spec);

// The request message for `spec` (StatusRequest, ServicesRequest, Query,
// FailureReport or AdminRequest).
proto::Message make_request(const CommandSpec& spec);

// The exit code for a reply to `spec`: the mapping in the file comment.
ExitCode exit_code_for(const CommandSpec& spec, const proto::Message& reply);

// Output and exit code for `reply` (nullopt: nothing came back in time;
// `failure` says why). Pure: no I/O.
CommandResult render_result(const CommandSpec& spec, const std::optional<proto::Message>& reply,
                            std::string_view failure);

// make_request, hub.request, render_result.
CommandResult run_command(Requester& hub, const CommandSpec& spec);

}  // namespace cascade::ctl
