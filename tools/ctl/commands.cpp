#include "cascade/tools/ctl/commands.hpp"

#include <algorithm>

#include "cascade/common/validate.hpp"
#include "cascade/tools/ctl/render.hpp"
#include "cascade/tools/ctl/render_config.hpp"

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
    case Command::kReportFailure:
      return proto::MsgType::kReportAck;
    case Command::kAdmin:
      return proto::MsgType::kAdminReply;
    case Command::kConfig:
      return proto::MsgType::kConfigReply;
  }
  return proto::MsgType::kError;
}

proto::FailureSignal signal_of(const CommandSpec& spec) {
  return proto::FailureSignal{spec.service, spec.failure.address, spec.failure.kind,
                              spec.failure.reporter, spec.failure.count};
}

// A free-form id (reporter, actor): non-empty, at most kMaxIdBytes, printable.
std::string check_id(std::string_view what, std::string_view value) {
  if (value.empty()) return std::string(what) + " is empty";
  if (value.size() > proto::kMaxIdBytes)
    return std::string(what) + " is longer than " + std::to_string(proto::kMaxIdBytes) + " bytes";
  if (std::any_of(value.begin(), value.end(), [](char c) {
        const auto byte = static_cast<unsigned char>(c);
        return byte < 0x20U || byte == 0x7FU;
      })) {
    return std::string(what) + " has a control character";
  }
  return {};
}

std::string check_report(const CommandSpec& spec) {
  if (auto e = proto::check_service_key(spec.service); !e.empty()) return e;
  // The address rules are the registration's: reuse them on a stand-in instance.
  proto::Registration stand_in{spec.service, {}};
  stand_in.instance.id = "x";
  stand_in.instance.address = spec.failure.address;
  if (auto e = proto::check_registration(stand_in); !e.empty()) return e;
  if (auto e = check_id("--reporter", spec.failure.reporter); !e.empty()) return e;
  if (spec.failure.count == 0) return "--count must be at least 1";
  return {};
}

// The bounds the wire sets; the hub checks the rest (its limits per group).
std::string check_config_edit(const AdminArgs& admin) {
  if (auto e = proto::check_name("group", admin.config_group); !e.empty()) return e;
  for (const auto& edit : admin.config_edits) {
    if (auto e = check_id("key", edit.key); !e.empty()) return e;
    if (edit.value && edit.value->size() > proto::kMaxConfigValueBytes)
      return "the value of " + printable(edit.key) + " takes " +
             std::to_string(edit.value->size()) + " bytes; at most " +
             std::to_string(proto::kMaxConfigValueBytes);
  }
  return {};
}

std::string check_admin(const CommandSpec& spec) {
  const AdminArgs& admin = spec.admin;
  if (auto e = check_id("--actor", admin.actor); !e.empty()) return e;
  if (proto::is_instance_op(admin.op)) {
    if (auto e = proto::check_service_key(spec.service); !e.empty()) return e;
    if (auto e = check_id("instance id", admin.instance_id); !e.empty()) return e;
  }
  if (admin.op == proto::AdminOp::kAddStatic) {
    proto::Registration r{spec.service, admin.instance};
    r.instance.id = admin.instance_id;
    if (auto e = proto::check_registration(r); !e.empty()) return e;
  }
  if (admin.op == proto::AdminOp::kSetRoutes) {
    if (auto e = proto::check_service_key(spec.service); !e.empty()) return e;
    if (admin.clear_routes && !admin.routes.empty()) return "--clear and --rule exclude each other";
    if (!admin.clear_routes && admin.routes.empty())
      return "set-routes needs at least one --rule (or --clear to remove every rule)";
    if (admin.routes.size() > proto::kMaxRouteRules)
      return std::to_string(admin.routes.size()) + " rules; at most " +
             std::to_string(proto::kMaxRouteRules) + " per service";
    for (const auto& rule : admin.routes) {
      if (rule.text.size() > proto::kMaxRouteRuleBytes)
        return "--rule is longer than " + std::to_string(proto::kMaxRouteRuleBytes) + " bytes";
    }
  }
  if (admin.op == proto::AdminOp::kConfigEdit || admin.op == proto::AdminOp::kConfigRollback)
    return check_config_edit(admin);
  if (admin.op == proto::AdminOp::kNotifySwitch &&
      (admin.share_percent < 1 || admin.share_percent > 100)) {
    return "--share must be a percentage from 1 to 100 (got " +
           std::to_string(admin.share_percent) + ")";
  }
  return {};
}

// True when resolve would show at least one instance of `reply`.
bool shows_an_instance(const proto::QueryReply& reply, bool show_all) {
  return reply.found &&
         std::any_of(reply.instances.begin(), reply.instances.end(),
                     [show_all](const proto::Instance& in) { return is_shown(in, show_all); });
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
      return json ? resolve_json(r, spec.show_all) : resolve_table(r, spec.show_all);
    }
    case Command::kTopology: {
      const auto& r = std::get<proto::StatusReply>(reply);
      return json ? topology_json(r) : topology_table(r);
    }
    case Command::kReportFailure: {
      const auto& r = std::get<proto::ReportAck>(reply);
      return json ? report_json(signal_of(spec), r) : report_table(signal_of(spec), r);
    }
    case Command::kAdmin: {
      const auto& r = std::get<proto::AdminReply>(reply);
      if (json) return admin_json(spec.admin.op, r);
      return r.ok ? admin_table(r) : std::string{};  // a refusal goes to stderr only
    }
    case Command::kConfig: {
      const auto& r = std::get<proto::ConfigReply>(reply);
      if (!r.ok) return {};  // "no such group" goes to stderr
      return json ? config_json(spec.config.view, r)
                  : config_table(spec.config.view, r, !spec.config.key.empty());
    }
  }
  return {};
}

}  // namespace

std::string default_reporter(std::string_view host) {
  return "cascadectl@" + std::string(host);
}

std::string default_actor(std::string_view user, std::string_view host) {
  return (user.empty() ? std::string("unknown") : std::string(user)) + "@" + std::string(host);
}

std::string parse_metadata(const std::vector<std::string>& entries,
                           std::map<std::string, std::string>& out) {
  for (const auto& entry : entries) {
    const auto eq = entry.find('=');
    if (eq == std::string::npos) {
      return "--metadata '" + printable(entry) + "' is not key=value";
    }
    if (eq == 0) return "--metadata '" + printable(entry) + "' has an empty key";
    const std::string key = entry.substr(0, eq);
    if (!out.emplace(key, entry.substr(eq + 1)).second) {
      return "--metadata key '" + printable(key) + "' is given twice";
    }
  }
  return {};
}

std::string check_spec(const CommandSpec& spec) {
  switch (spec.command) {
    case Command::kReportFailure:
      return check_report(spec);
    case Command::kAdmin:
      return check_admin(spec);
    case Command::kConfig:
      if (spec.config.view != proto::ConfigView::kList)
        return proto::check_name("group", spec.config.group);
      return {};
    case Command::kStatus:
    case Command::kServices:
    case Command::kResolve:
    case Command::kTopology:
      return {};
  }
  return {};
}

proto::Message make_request(const CommandSpec& spec) {
  switch (spec.command) {
    case Command::kStatus:
    case Command::kTopology:
      return proto::StatusRequest{spec.request_id};
    case Command::kServices:
      return proto::ServicesRequest{spec.request_id};
    case Command::kResolve:
      return proto::Query{spec.request_id, "", spec.service};
    case Command::kReportFailure:
      // A non-zero request_id asks the hub for a ReportAck.
      return proto::FailureReport{spec.request_id, {signal_of(spec)}, 0};
    case Command::kAdmin:
      return admin::make_admin_request(spec.service, spec.admin, spec.request_id);
    case Command::kConfig:
      return proto::ConfigRequest{spec.request_id, spec.config.view, spec.config.group,
                                  spec.config.key};
  }
  return proto::StatusRequest{spec.request_id};
}

ExitCode exit_code_for(const CommandSpec& spec, const proto::Message& reply) {
  if (const auto* error = std::get_if<proto::ErrorReply>(&reply)) {
    if (error->code == proto::ErrorCode::kUnauthenticated) return ExitCode::kUnauthenticated;
    if (error->code == proto::ErrorCode::kForbidden) return ExitCode::kForbidden;
  }
  if (proto::type_of(reply) != expected_reply(spec.command)) return ExitCode::kHubError;
  switch (spec.command) {
    case Command::kResolve:
      return shows_an_instance(std::get<proto::QueryReply>(reply), spec.show_all)
                 ? ExitCode::kOk
                 : ExitCode::kNotFound;
    case Command::kReportFailure: {
      const auto& ack = std::get<proto::ReportAck>(reply);
      return ack.accepted + ack.forwarded > 0 ? ExitCode::kOk : ExitCode::kNotFound;
    }
    case Command::kAdmin:
      return std::get<proto::AdminReply>(reply).ok ? ExitCode::kOk : ExitCode::kHubError;
    case Command::kConfig:
      return std::get<proto::ConfigReply>(reply).ok ? ExitCode::kOk : ExitCode::kNotFound;
    case Command::kStatus:
    case Command::kServices:
    case Command::kTopology:
      return ExitCode::kOk;
  }
  return ExitCode::kOk;
}

namespace {

// The line for an ErrorReply that refuses this tool's key, "" for any other.
std::string key_refusal(const CommandSpec& spec, const proto::ErrorReply& error) {
  if (error.code == proto::ErrorCode::kUnauthenticated)
    return std::string(kProgram) +
           "the hub refused this key (unauthenticated): " + printable(error.message) + "\n";
  if (error.code == proto::ErrorCode::kForbidden)
    return std::string(kProgram) + "this key may not " +
           proto::to_string(proto::type_of(make_request(spec))) +
           " at this hub (forbidden): " + printable(error.message) + "\n";
  return {};
}

}  // namespace

CommandResult render_result(const CommandSpec& spec, const std::optional<proto::Message>& reply,
                            std::string_view failure) {
  CommandResult result;
  if (!reply) {
    result.code = ExitCode::kUnreachable;
    result.err = std::string(kProgram) + "hub unreachable: " + std::string(failure) + "\n";
    return result;
  }
  result.code = exit_code_for(spec, *reply);
  if (const auto* error = std::get_if<proto::ErrorReply>(&*reply)) {
    result.err = key_refusal(spec, *error);
    if (result.err.empty())
      result.err = std::string(kProgram) + "hub error " + proto::to_string(error->code) + ": " +
                   printable(error->message) + "\n";
  } else if (proto::type_of(*reply) != expected_reply(spec.command)) {
    result.err = std::string(kProgram) + "unexpected " + proto::to_string(proto::type_of(*reply)) +
                 " in reply to " + proto::to_string(proto::type_of(make_request(spec))) + "\n";
  } else {
    result.out = render_ok(spec, *reply);
    if (const auto* admin = std::get_if<proto::AdminReply>(&*reply); admin && !admin->ok) {
      result.err = std::string(kProgram) + "hub refused " + proto::to_string(spec.admin.op) + ": " +
                   printable(admin->message) + "\n";
    }
    if (const auto* config = std::get_if<proto::ConfigReply>(&*reply); config && !config->ok)
      result.err = std::string(kProgram) + printable(config->message) + "\n";
  }
  return result;
}

CommandResult run_command(Requester& hub, const CommandSpec& spec) {
  const auto reply = hub.request(make_request(spec), spec.timeout);
  if (!reply && hub.key_refused()) {
    // Not a silent hub: its ZAP handler said no to our key at the handshake.
    return {ExitCode::kUnauthenticated, "",
            std::string(kProgram) + "the hub refused this key (unauthenticated): " + hub.failure() +
                "\n"};
  }
  return render_result(spec, reply, reply ? std::string{} : hub.failure());
}

}  // namespace cascade::ctl
