#include "cascade/common/admin_request.hpp"

#include <charconv>
#include <limits>

#include "cascade/common/printable.hpp"

namespace cascade::admin {

proto::AdminRequest make_admin_request(const proto::ServiceKey& service, const AdminArgs& args,
                                       std::uint64_t request_id) {
  proto::AdminRequest r;
  r.request_id = request_id;
  r.op = args.op;
  r.actor = args.actor;
  if (proto::is_instance_op(args.op)) {
    r.service = service;
    r.instance_id = args.instance_id;
  } else if (args.op == proto::AdminOp::kSetRoutes) {
    r.service = service;
    r.routes = args.routes;
  } else {
    r.service = proto::ServiceKey{"", ""};  // "empty otherwise" (protocol 3.15)
    r.enabled = args.enabled;
  }
  if (args.op == proto::AdminOp::kAddStatic) {
    r.instance = args.instance;
    r.instance->id = args.instance_id;
  }
  if (args.op == proto::AdminOp::kNotifySwitch) r.share_percent = args.share_percent;
  if (args.op == proto::AdminOp::kConfigEdit || args.op == proto::AdminOp::kConfigRollback) {
    r.config_group = args.config_group;
    r.config_edits = args.config_edits;
    r.config_version = args.config_version;
  }
  return r;
}

std::string parse_rule(std::string_view arg, bool force_all, proto::RouteRuleText& out,
                       std::string_view what) {
  out = proto::RouteRuleText{};
  out.force = force_all;
  std::string_view text = arg;
  const auto quoted = std::string(what) + " '" + printable(arg) + "'";
  if (const auto colon = arg.find(':'); colon != std::string_view::npos) {
    std::string_view prefix = arg.substr(0, colon);
    bool force = false;
    if (prefix == "force") {
      force = true;
      prefix = {};
    } else if (prefix.ends_with(",force")) {
      force = true;
      prefix.remove_suffix(6);
    }
    std::int64_t priority = 0;
    bool is_prefix = force && prefix.empty();
    if (!prefix.empty()) {
      const auto [end, ec] =
          std::from_chars(prefix.data(), prefix.data() + prefix.size(), priority);
      is_prefix = ec == std::errc{} && end == prefix.data() + prefix.size();
      if (ec == std::errc::result_out_of_range ||
          (is_prefix && (priority < std::numeric_limits<std::int32_t>::min() ||
                         priority > std::numeric_limits<std::int32_t>::max())))
        return quoted + ": priority out of range (a 32-bit integer)";
    }
    if (is_prefix) {
      out.priority = static_cast<std::int32_t>(priority);
      out.force = out.force || force;
      text = arg.substr(colon + 1);
    }
  }
  if (text.find_first_not_of(" \t") == std::string_view::npos) return quoted + " has no rule text";
  out.text = std::string(text);
  return {};
}

std::string rule_argument(const proto::RouteRuleText& rule) {
  std::string prefix;
  if (rule.priority != 0) prefix = std::to_string(rule.priority);
  if (rule.force) prefix += prefix.empty() ? "force" : ",force";
  if (!prefix.empty()) return prefix + ":" + rule.text;
  // A text whose own first ':' follows what reads as a prefix gets an
  // explicit "0:" so that it is read back whole.
  proto::RouteRuleText back;
  if (parse_rule(rule.text, false, back).empty() && back.text == rule.text) return rule.text;
  return "0:" + rule.text;
}

}  // namespace cascade::admin
