#pragma once
// The operator commands as every operator interface builds them: cascadectl's
// subcommands and the hub's HTTP admin API turn their arguments into these
// AdminArgs, and make_admin_request() into the one AdminRequest the hub
// handles (HubCore::handle: validation, role, audit), so a command means the
// same whichever way it arrives.

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::admin {

// notify-switch on without a share: push isolations to a tenth of a
// service's consumers per flush (the rest learn at their next beat).
inline constexpr std::uint32_t kDefaultNotifySharePercent = 10;

// The arguments of one operator command (AdminArgs::op).
struct AdminArgs {
  proto::AdminOp op = proto::AdminOp::kMarkOutOfService;
  std::string actor{};                // who asks, for the hub's audit log
  std::string instance_id{};          // instance operations only
  proto::Instance instance{};         // add-static only (its id is set from instance_id)
  bool enabled = false;               // eviction-protection, notify-switch
  std::uint32_t share_percent = 100;  // notify-switch, 1..100
  // set-routes: the service's new complete rule set (empty: --clear).
  std::vector<proto::RouteRuleText> routes{};
  bool clear_routes = false;  // set-routes --clear: removing every rule is meant, not forgotten
  // config set / rm / rollback: the group, the keys set (value) or removed
  // (nullopt), applied together; the version a rollback goes back to.
  std::string config_group{};
  std::vector<proto::ConfigEdit> config_edits{};
  std::uint64_t config_version = 0;
};

// The request for `args`; `service` is what instance operations and
// set-routes name (the others carry an empty key, protocol section 3.15).
proto::AdminRequest make_admin_request(const proto::ServiceKey& service, const AdminArgs& args,
                                       std::uint64_t request_id);

// Reads one rule argument, "[PREFIX:]TEXT", into `out`. The optional PREFIX
// before the first ':' is a priority ("10", "-5"), "force", or both
// ("10,force"); anything else before a ':' is part of the rule text (rule
// keys are never numbers or "force"). `force_all` forces every rule. The text
// itself is checked by the hub, with the agents' parser. `what` names the
// argument in messages ("--rule", "rules[2]").
// @return "" when usable, else what is wrong.
std::string parse_rule(std::string_view arg, bool force_all, proto::RouteRuleText& out,
                       std::string_view what = "--rule");

// The argument parse_rule() reads back as `rule` (its `enabled` aside):
// "TEXT", "10:TEXT", "force:TEXT" or "10,force:TEXT".
std::string rule_argument(const proto::RouteRuleText& rule);

}  // namespace cascade::admin
