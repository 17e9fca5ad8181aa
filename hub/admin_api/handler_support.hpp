#pragma once
// What the admin API's handlers share: JSON answers, the service a path
// names, and answering from the owning thread.

#include <functional>
#include <variant>

#include "cascade/http/router.hpp"
#include "cascade/hub/admin_api/admin_json.hpp"
#include "cascade/hub/admin_api/owner_port.hpp"

namespace cascade::hub::admin_api {

http::Response json_response(int status, const Json& json);
http::Response bad_request(const std::string& message);

// The service named by the path's {service} and ?group= (default
// "default"), or the 400 that says why not.
std::variant<proto::ServiceKey, http::Response> service_of(const http::Request& request,
                                                           const http::PathParams& params);

// Runs `answer` on the owning thread and gives its response to `later`; a
// 500 when it throws, so that no request is left waiting.
void answer_on_owner(OwnerPort& owner, const http::ResponderPtr& later,
                     std::function<http::Response(Owner&)> answer);

}  // namespace cascade::hub::admin_api
