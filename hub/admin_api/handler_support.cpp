#include "cascade/hub/admin_api/handler_support.hpp"

#include "cascade/http/json_fields.hpp"
#include "cascade/http/query_args.hpp"

namespace cascade::hub::admin_api {

http::Response json_response(int status, const Json& json) {
  return http::Response::json(status, http::dump_json(json));
}

http::Response bad_request(const std::string& message) {
  return http::Response::error(400, "bad_request", message);
}

std::variant<proto::ServiceKey, http::Response> service_of(const http::Request& request,
                                                           const http::PathParams& params) {
  auto key = http::service_key_of(params.at("service"), request.arg("group"));
  if (auto* error = http::error_of(key)) return bad_request(*error);
  return std::get<proto::ServiceKey>(key);
}

void answer_on_owner(OwnerPort& owner, const http::ResponderPtr& later,
                     std::function<http::Response(Owner&)> answer) {
  owner.run([later, answer = std::move(answer)](Owner& hub) {
    try {
      later->respond(answer(hub));
    } catch (const std::exception& e) {
      later->respond(http::Response::error(500, "internal", e.what()));
    }
  });
}

}  // namespace cascade::hub::admin_api
