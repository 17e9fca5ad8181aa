#include "cascade/hub/admin_api/admin_commands.hpp"

#include <atomic>

#include "cascade/agent/routing_rule.hpp"
#include "cascade/common/admin_request.hpp"
#include "cascade/http/instance_fields.hpp"
#include "cascade/http/json_fields.hpp"
#include "cascade/http/query_args.hpp"
#include "cascade/hub/admin_api/command_submit.hpp"
#include "cascade/hub/admin_api/handler_support.hpp"
#include "cascade/hub/admin_checks.hpp"

namespace cascade::hub::admin_api {

namespace {

using cascade::admin::AdminArgs;
using http::BodyError;
using http::JsonFields;
using http::PathParams;
using http::Reply;
using http::Request;
using http::ResponderPtr;
using http::Response;
using proto::AdminOp;

Response invalid_request(const std::string& message) {
  return Response::error(400, "invalid_request", message);
}

// A refused rule set: the hub's message, and which rule (from 1) and column
// (from 1; 0 when the whole rule is at fault) for an editor to point at.
Response invalid_rules(const std::vector<proto::RouteRuleText>& rules, const std::string& why) {
  Json error = {{"code", "invalid_request"}, {"message", why}};
  for (std::size_t i = 0; i < rules.size(); ++i) {
    if (agent::route_rule_problem(rules[i].text, rules[i].force).empty()) continue;
    error["rule"] = i + 1;
    error["column"] = agent::parse_route_rule(rules[i].text).column;
    break;
  }
  return json_response(400, {{"error", std::move(error)}});
}

bool instance_present(const HubCore& core, const proto::AdminRequest& request) {
  const ServiceEntry* svc = core.registry().find(request.service);
  return svc != nullptr && svc->instances.contains(request.instance_id);
}

// As the default answer, but a refused instance operation on an instance the
// hub does not hold is a 404: the registry still shows why.
Response command_response(const HubCore& core, const proto::AdminRequest& request,
                          const proto::Message& reply) {
  const auto* answer = std::get_if<proto::AdminReply>(&reply);
  if (answer != nullptr && !answer->ok && proto::is_instance_op(request.op) &&
      !instance_present(core, request))
    return Response::error(404, "unknown_instance", answer->message);
  return default_command_answer(core, request, reply);
}

class AdminCommands {
 public:
  explicit AdminCommands(OwnerPort& owner) : commands_(owner) {}

  Reply mark_out_of_service(const Request& r, const PathParams& p, const ResponderPtr& later) {
    return instance_op(r, p, later, AdminOp::kMarkOutOfService);
  }
  Reply mark_in_service(const Request& r, const PathParams& p, const ResponderPtr& later) {
    return instance_op(r, p, later, AdminOp::kMarkInService);
  }
  Reply readmit(const Request& r, const PathParams& p, const ResponderPtr& later) {
    return instance_op(r, p, later, AdminOp::kReadmit);
  }
  Reply remove_static(const Request& r, const PathParams& p, const ResponderPtr& later) {
    return instance_op(r, p, later, AdminOp::kRemoveStatic);
  }

  // Body: {"address", "weight", "zone", "status", "metadata"} (http/instance_fields.hpp).
  Reply add_static(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto parsed = http::parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    JsonFields fields(std::get<nlohmann::json>(parsed));
    AdminArgs args{.op = AdminOp::kAddStatic};
    http::read_instance_fields(fields, args.instance);
    if (auto error = fields.finish()) return error->response();
    args.instance_id = params.at("id");
    return with_service(request, params, later, std::move(args));
  }

  // Body: {"rules": ["[PRIORITY][,force]:RULE", ...], "force": false}; [] removes every rule.
  Reply set_routes(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto parsed = http::parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    JsonFields fields(std::get<nlohmann::json>(parsed));
    const auto rules = fields.texts("rules");
    const bool force_all = fields.flag("force").value_or(false);
    if (auto error = fields.finish()) return error->response();
    if (!rules) return BodyError{"missing_field", "field 'rules' is required"}.response();
    AdminArgs args{.op = AdminOp::kSetRoutes};
    args.clear_routes = rules->empty();
    for (std::size_t i = 0; i < rules->size(); ++i) {
      auto& rule = args.routes.emplace_back();
      const auto what = "rules[" + std::to_string(i) + "]";
      if (auto e = admin::parse_rule((*rules)[i], force_all, rule, what); !e.empty())
        return BodyError{"invalid_field", e}.response();
    }
    auto dry_run = http::parse_flag(request.arg("dry_run"), "dry_run");
    if (auto* error = http::error_of(dry_run)) return bad_request(*error);
    if (std::get<bool>(dry_run)) return validate_routes(request, params, args);
    return with_service(request, params, later, std::move(args));
  }

  Reply clear_routes(const Request& request, const PathParams& params, const ResponderPtr& later) {
    return with_service(request, params, later,
                        AdminArgs{.op = AdminOp::kSetRoutes, .clear_routes = true});
  }

  // Body: {"enabled": true}.
  Reply eviction_protection(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto parsed = http::parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    JsonFields fields(std::get<nlohmann::json>(parsed));
    const auto enabled = fields.flag("enabled");
    if (auto error = fields.finish()) return error->response();
    if (!enabled) return BodyError{"missing_field", "field 'enabled' is required"}.response();
    return submit(request, {}, later,
                  AdminArgs{.op = AdminOp::kEvictionProtection, .enabled = *enabled});
  }

  // Body: {"enabled": true, "share_percent": 10}; the share only with enabled.
  Reply notify_switch(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto parsed = http::parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    JsonFields fields(std::get<nlohmann::json>(parsed));
    const auto enabled = fields.flag("enabled");
    const auto share = fields.number("share_percent", 100);
    if (share && enabled == false)
      fields.fail("share_percent", "applies only with \"enabled\": true");
    if (auto error = fields.finish()) return error->response();
    if (!enabled) return BodyError{"missing_field", "field 'enabled' is required"}.response();
    AdminArgs args{.op = AdminOp::kNotifySwitch, .enabled = *enabled};
    if (*enabled)
      args.share_percent =
          share ? static_cast<std::uint32_t>(*share) : admin::kDefaultNotifySharePercent;
    return submit(request, {}, later, std::move(args));
  }

  Reply reload_keys(const Request& request, const PathParams&, const ResponderPtr& later) {
    return submit(request, {}, later, AdminArgs{.op = AdminOp::kReloadKeys});
  }

 private:
  Reply instance_op(const Request& request, const PathParams& params, const ResponderPtr& later,
                    AdminOp op) {
    AdminArgs args{.op = op};
    args.instance_id = params.at("id");
    return with_service(request, params, later, std::move(args));
  }

  Reply with_service(const Request& request, const PathParams& params, const ResponderPtr& later,
                     AdminArgs args) {
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    return submit(request, std::get<proto::ServiceKey>(key), later, std::move(args));
  }

  // ?dry_run=1: what PUT would refuse, or the rules as agents will read them.
  // Nothing reaches the owning thread: the checks need no state.
  Reply validate_routes(const Request& request, const PathParams& params, AdminArgs args) {
    if (auto refused = CommandSubmitter::refuse_operator(request)) return *refused;
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    const auto& service = std::get<proto::ServiceKey>(key);
    args.actor = CommandSubmitter::actor_of(request);
    const auto command = admin::make_admin_request(service, args, 0);
    if (auto why = check_admin_request(command); !why.empty())
      return invalid_rules(command.routes, why);
    return json_response(200, parsed_rules_json(service, command.routes));
  }

  Reply submit(const Request& request, const proto::ServiceKey& service, const ResponderPtr& later,
               AdminArgs args) {
    auto command = admin::make_admin_request(service, args, 0);
    return commands_.submit(request, std::move(command), later, command_response,
                            [&](const std::string& why) {
                              if (args.op == AdminOp::kSetRoutes)
                                return invalid_rules(args.routes, why);
                              return invalid_request(why);
                            });
  }

  CommandSubmitter commands_;
};

}  // namespace

void add_command_routes(http::Router& router, OwnerPort& owner) {
  auto api = std::make_shared<AdminCommands>(owner);
  const std::string instance = "/api/v1/services/{service}/instances/{id}";
  router.add("POST", instance + "/out-of-service", api, &AdminCommands::mark_out_of_service);
  router.add("DELETE", instance + "/out-of-service", api, &AdminCommands::mark_in_service);
  router.add("POST", instance + "/readmit", api, &AdminCommands::readmit);
  router.add("PUT", "/api/v1/services/{service}/static/{id}", api, &AdminCommands::add_static);
  router.add("DELETE", "/api/v1/services/{service}/static/{id}", api,
             &AdminCommands::remove_static);
  router.add("PUT", "/api/v1/services/{service}/routes", api, &AdminCommands::set_routes);
  router.add("DELETE", "/api/v1/services/{service}/routes", api, &AdminCommands::clear_routes);
  router.add("PUT", "/api/v1/switches/eviction-protection", api,
             &AdminCommands::eviction_protection);
  router.add("PUT", "/api/v1/switches/notify", api, &AdminCommands::notify_switch);
  router.add("POST", "/api/v1/reload-keys", api, &AdminCommands::reload_keys);
}

}  // namespace cascade::hub::admin_api
