#pragma once
// cascadectl's commands without the command line: build the request, ask the
// hub, turn the reply into output text and an exit code.
//
// Exit codes (part of the tool's contract, printed by --help):
//   0  ok (resolve: the service is known and has at least one instance)
//   1  resolve: the service is unknown to the hub or has no instances; the
//      (empty) result is still printed
//   2  usage error: bad flags, missing command, malformed --hub endpoint
//   3  hub unreachable: no reply within --timeout-ms
//   4  the hub answered with an ErrorReply (printed to stderr), or with a reply
//      of the wrong type

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/clock.hpp"
#include "common/protocol.hpp"
#include "tools/ctl/hub_client.hpp"

namespace cascade::ctl {

enum class ExitCode : int {
  kOk = 0,
  kNotFound = 1,
  kUsage = 2,
  kUnreachable = 3,
  kHubError = 4,
};

enum class Command { kStatus, kServices, kResolve, kTopology };
enum class OutputFormat { kTable, kJson };

inline constexpr Duration kDefaultTimeout{2000};

struct CommandSpec {
  Command command = Command::kStatus;
  proto::ServiceKey service;  // resolve only
  OutputFormat format = OutputFormat::kTable;
  Duration timeout = kDefaultTimeout;
  std::uint64_t request_id = 1;  // non-zero: 0 means "unknown" in an ErrorReply
};

struct CommandResult {
  ExitCode code = ExitCode::kOk;
  std::string out;  // for stdout
  std::string err;  // for stderr, complete lines
};

// The request message for `spec` (StatusRequest, ServicesRequest or Query).
proto::Message make_request(const CommandSpec& spec);

// The exit code for a reply to `command`: the mapping in the file comment.
ExitCode exit_code_for(Command command, const proto::Message& reply);

// Output and exit code for `reply` (nullopt: nothing came back in time;
// `failure` says why). Pure: no I/O.
CommandResult render_result(const CommandSpec& spec, const std::optional<proto::Message>& reply,
                            std::string_view failure);

// make_request, hub.request, render_result.
CommandResult run_command(Requester& hub, const CommandSpec& spec);

}  // namespace cascade::ctl
