#include "cascade/hub/admin_api/config_routes.hpp"

#include "cascade/common/config_json.hpp"
#include "cascade/http/json_fields.hpp"
#include "cascade/hub/admin_api/command_submit.hpp"
#include "cascade/hub/admin_api/handler_support.hpp"

namespace cascade::hub::admin_api {

namespace {

using http::BodyError;
using http::JsonFields;
using http::PathParams;
using http::Reply;
using http::Request;
using http::ResponderPtr;
using http::Response;

// {"value": TEXT} or {"value_hex": HEX}: the bytes to set, or the 400.
std::variant<std::string, Response> value_of(const Request& request) {
  auto parsed = http::parse_object(request.body);
  if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
  JsonFields fields(std::get<nlohmann::json>(parsed));
  auto text = fields.text("value");
  const auto hex = fields.text("value_hex");
  if (text && hex) fields.fail("value_hex", "give either value or value_hex, not both");
  if (hex && !(text = bytes_of_hex(*hex)))
    fields.fail("value_hex", "is not an even number of hex digits");
  if (auto error = fields.finish()) return error->response();
  if (!text)
    return BodyError{"missing_field", "field 'value' (or 'value_hex') is required"}.response();
  return std::move(*text);
}

// {"op", "ok", "message", "group", "version"}: the group's served version
// after the change, read on the owning thread right after it.
Response config_answer(const HubCore& core, const proto::AdminRequest& request,
                       const proto::Message& reply) {
  auto response = default_command_answer(core, request, reply);
  if (response.status != 200) return response;
  const auto* served = core.config_centre().groups().served(request.config_group);
  return json_response(200, {{"op", proto::to_string(request.op)},
                             {"ok", true},
                             {"message", std::get<proto::AdminReply>(reply).message},
                             {"group", request.config_group},
                             {"version", served ? served->version : 0}});
}

class ConfigRoutes {
 public:
  explicit ConfigRoutes(OwnerPort& owner) : owner_(owner), commands_(owner) {}

  Reply list(const Request&, const PathParams&, const ResponderPtr& later) {
    return read({0, proto::ConfigView::kList, "", ""}, later);
  }
  Reply group(const Request&, const PathParams& params, const ResponderPtr& later) {
    return read({0, proto::ConfigView::kGet, params.at("group"), ""}, later);
  }
  Reply key(const Request&, const PathParams& params, const ResponderPtr& later) {
    return read({0, proto::ConfigView::kGet, params.at("group"), params.at("key")}, later);
  }
  Reply history(const Request&, const PathParams& params, const ResponderPtr& later) {
    return read({0, proto::ConfigView::kHistory, params.at("group"), ""}, later);
  }

  Reply set_key(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto value = value_of(request);
    if (auto* error = std::get_if<Response>(&value)) return *error;
    return edit(request, params.at("group"),
                {{params.at("key"), std::move(std::get<std::string>(value))}}, later);
  }
  Reply remove_key(const Request& request, const PathParams& params, const ResponderPtr& later) {
    return edit(request, params.at("group"), {{params.at("key"), std::nullopt}}, later);
  }

  Reply edit_keys(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto parsed = http::parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    JsonFields fields(std::get<nlohmann::json>(parsed));
    const auto set = fields.text_map("set");
    const auto remove = fields.texts("remove");
    if (auto error = fields.finish()) return error->response();
    std::vector<proto::ConfigEdit> edits;
    for (const auto& [key, value] : set.value_or(std::map<std::string, std::string>{}))
      edits.push_back({key, value});
    for (const auto& key : remove.value_or(std::vector<std::string>{}))
      edits.push_back({key, std::nullopt});
    return edit(request, params.at("group"), std::move(edits), later);
  }

  Reply rollback(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto parsed = http::parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    JsonFields fields(std::get<nlohmann::json>(parsed));
    const auto version =
        fields.number("version", std::numeric_limits<std::uint64_t>::max(), /*required=*/true);
    if (auto error = fields.finish()) return error->response();
    proto::AdminRequest command;
    command.op = proto::AdminOp::kConfigRollback;
    command.config_group = params.at("group");
    command.config_version = *version;
    return commands_.submit(request, std::move(command), later, config_answer);
  }

 private:
  Reply read(proto::ConfigRequest ask, const ResponderPtr& later) {
    answer_on_owner(owner_, later, [ask = std::move(ask)](Owner& hub) {
      auto reply = hub.core().config_view(ask);
      if (!reply.ok) return Response::error(404, "not_found", reply.message);
      return json_response(200, config_reply_json(ask.view, reply));
    });
    return Reply{};
  }

  Reply edit(const Request& request, const std::string& group, std::vector<proto::ConfigEdit> edits,
             const ResponderPtr& later) {
    proto::AdminRequest command;
    command.op = proto::AdminOp::kConfigEdit;
    command.config_group = group;
    command.config_edits = std::move(edits);
    return commands_.submit(request, std::move(command), later, config_answer);
  }

  OwnerPort& owner_;
  CommandSubmitter commands_;
};

}  // namespace

void add_config_routes(http::Router& router, OwnerPort& owner) {
  auto api = std::make_shared<ConfigRoutes>(owner);
  router.add("GET", "/api/v1/config", api, &ConfigRoutes::list);
  router.add("GET", "/api/v1/config/{group}", api, &ConfigRoutes::group);
  router.add("GET", "/api/v1/config/{group}/history", api, &ConfigRoutes::history);
  router.add("GET", "/api/v1/config/{group}/keys/{key}", api, &ConfigRoutes::key);
  router.add("PUT", "/api/v1/config/{group}/keys/{key}", api, &ConfigRoutes::set_key);
  router.add("DELETE", "/api/v1/config/{group}/keys/{key}", api, &ConfigRoutes::remove_key);
  router.add("POST", "/api/v1/config/{group}/edit", api, &ConfigRoutes::edit_keys);
  router.add("POST", "/api/v1/config/{group}/rollback", api, &ConfigRoutes::rollback);
}

}  // namespace cascade::hub::admin_api
