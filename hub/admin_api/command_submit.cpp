#include "cascade/hub/admin_api/command_submit.hpp"

#include "cascade/hub/admin_api/handler_support.hpp"
#include "cascade/hub/admin_checks.hpp"

namespace cascade::hub::admin_api {

namespace {

constexpr std::string_view kActorPrefix = "http:";

http::Response not_committed() {
  return http::Response::error(
      503, "not_committed",
      "the hub could not write the change to its store (its log says why); it is applied in "
      "memory and the hub retries the write, but it is not durable yet: check GET /api/v1/audit "
      "before repeating it");
}

}  // namespace

std::optional<http::Response> CommandSubmitter::refuse_operator(const http::Request& request) {
  if (!request.token_name.empty()) return std::nullopt;
  return http::Response::error(403, "no_tokens",
                               "operator commands need a bearer token, and this hub has none: "
                               "start cascade-hub with --http-token-file FILE (lines 'NAME "
                               "TOKEN')");
}

std::string CommandSubmitter::actor_of(const http::Request& request) {
  return std::string(kActorPrefix) + request.token_name;
}

http::Reply CommandSubmitter::submit(
    const http::Request& request, proto::AdminRequest command, const http::ResponderPtr& later,
    const CommandAnswer& answer,
    const std::function<http::Response(const std::string& why)>& invalid) {
  if (auto refused = refuse_operator(request)) return *refused;
  command.actor = actor_of(request);
  command.request_id = next_request_id();
  if (auto why = check_admin_request(command); !why.empty())
    return invalid ? invalid(why) : http::Response::error(400, "invalid_request", why);
  owner_.run([command = std::move(command), peer = request.peer.host(), later, answer](Owner& hub) {
    // Given once the commit was tried, which is after this task returns.
    auto response = std::make_shared<http::Response>();
    const auto reply = hub.command(command, peer, [response, later](bool committed) {
      later->respond(committed ? std::move(*response) : not_committed());
    });
    *response = answer(hub.core(), command, reply);
  });
  return http::Reply{};
}

http::Response default_command_answer(const HubCore&, const proto::AdminRequest& request,
                                      const proto::Message& reply) {
  if (const auto* error = std::get_if<proto::ErrorReply>(&reply)) {
    const bool refused = error->code == proto::ErrorCode::kForbidden ||
                         error->code == proto::ErrorCode::kUnauthenticated;
    return http::Response::error(refused ? 403 : 500, proto::to_string(error->code),
                                 error->message);
  }
  const auto& answer = std::get<proto::AdminReply>(reply);
  if (answer.ok)
    return json_response(
        200, {{"op", proto::to_string(request.op)}, {"ok", true}, {"message", answer.message}});
  return http::Response::error(409, "refused", answer.message);
}

}  // namespace cascade::hub::admin_api
