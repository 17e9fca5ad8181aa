#include "tools/ctl/commands.hpp"

#include "tools/ctl/render.hpp"

namespace cascade::ctl {
namespace {

constexpr std::string_view kProgram = "cascadectl: ";

proto::MsgType expected_reply(Command command) {
  switch (command) {
    case Command::kStatus:
    case Command::kTopology:
      return proto::MsgType::kStatusReply;
    case Command::kServices:
      return proto::MsgType::kServicesReply;
    case Command::kResolve:
      return proto::MsgType::kQueryReply;
  }
  return proto::MsgType::kError;
}

std::string render_ok(const CommandSpec& spec, const proto::Message& reply) {
  const bool json = spec.format == OutputFormat::kJson;
  switch (spec.command) {
    case Command::kStatus: {
      const auto& r = std::get<proto::StatusReply>(reply);
      return json ? status_json(r) : status_table(r);
    }
    case Command::kServices: {
      const auto& r = std::get<proto::ServicesReply>(reply);
      return json ? services_json(r) : services_table(r);
    }
    case Command::kResolve: {
      const auto& r = std::get<proto::QueryReply>(reply);
      return json ? resolve_json(r) : resolve_table(r);
    }
    case Command::kTopology: {
      const auto& r = std::get<proto::StatusReply>(reply);
      return json ? topology_json(r) : topology_table(r);
    }
  }
  return {};
}

}  // namespace

proto::Message make_request(const CommandSpec& spec) {
  switch (spec.command) {
    case Command::kStatus:
    case Command::kTopology:
      return proto::StatusRequest{spec.request_id};
    case Command::kServices:
      return proto::ServicesRequest{spec.request_id};
    case Command::kResolve:
      return proto::Query{spec.request_id, "", spec.service};
  }
  return proto::StatusRequest{spec.request_id};
}

ExitCode exit_code_for(Command command, const proto::Message& reply) {
  if (proto::type_of(reply) != expected_reply(command)) return ExitCode::kHubError;
  if (command == Command::kResolve) {
    const auto& r = std::get<proto::QueryReply>(reply);
    return r.found && !r.instances.empty() ? ExitCode::kOk : ExitCode::kNotFound;
  }
  return ExitCode::kOk;
}

CommandResult render_result(const CommandSpec& spec, const std::optional<proto::Message>& reply,
                            std::string_view failure) {
  CommandResult result;
  if (!reply) {
    result.code = ExitCode::kUnreachable;
    result.err = std::string(kProgram) + "hub unreachable: " + std::string(failure) + "\n";
    return result;
  }
  result.code = exit_code_for(spec.command, *reply);
  if (const auto* error = std::get_if<proto::ErrorReply>(&*reply)) {
    result.err = std::string(kProgram) + "hub error " + proto::to_string(error->code) + ": " +
                 printable(error->message) + "\n";
  } else if (proto::type_of(*reply) != expected_reply(spec.command)) {
    result.err = std::string(kProgram) + "unexpected " + proto::to_string(proto::type_of(*reply)) +
                 " in reply to " + proto::to_string(proto::type_of(make_request(spec))) + "\n";
  } else {
    result.out = render_ok(spec, *reply);
  }
  return result;
}

CommandResult run_command(Requester& hub, const CommandSpec& spec) {
  const auto reply = hub.request(make_request(spec), spec.timeout);
  return render_result(spec, reply, reply ? std::string{} : hub.failure());
}

}  // namespace cascade::ctl
