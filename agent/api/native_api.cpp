#include "cascade/agent/api/native_api.hpp"

#include "cascade/agent/api/native_json.hpp"
#include "cascade/agent/api/query_args.hpp"
#include "cascade/agent/api/resolve_or_watch.hpp"
#include "cascade/agent/picker.hpp"

namespace cascade::agent::api {

namespace {

using http::PathParams;
using http::Reply;
using http::Request;
using http::ResponderPtr;
using http::Response;

Response bad_request(const std::string& message) {
  return Response::error(400, "bad_request", message);
}

Response ok(const Json& json) {
  return Response::json(200, dump(json));
}

// The service named by the path and ?group=, or the 400 that says why not.
std::variant<proto::ServiceKey, Response> service_of(const Request& request,
                                                     const PathParams& params) {
  auto key = service_key_of(params.at("service"), request.arg("group"));
  if (auto* error = error_of(key)) return bad_request(*error);
  return std::get<proto::ServiceKey>(key);
}

// True when the hub said it knows no such service: it answered, with nothing.
bool unknown_service(const Resolution& r) {
  return r.version == 0 && r.instances.empty() && r.source == Source::kHub;
}

class NativeApi {
 public:
  NativeApi(Client& client, WatchBoard& watches, RegistrationJournal* journal)
      : client_(client), watches_(watches), journal_(journal) {}

  Reply status(const Request&, const PathParams&, const ResponderPtr&) {
    return ok(status_json(client_.status(), client_.options(), client_.registrations(),
                          client_.cached_services()));
  }

  Reply instances(const Request&, const PathParams&, const ResponderPtr&) {
    Json list = Json::array();
    for (const auto& r : client_.registrations())
      list.push_back(registration_json(r));
    return ok(list);
  }

  Reply register_instance(const Request& request, const PathParams&, const ResponderPtr&) {
    auto parsed = registration_from_json(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    const auto& registration = std::get<proto::Registration>(parsed);
    // On disk before it is applied and acknowledged (a StoreError is a 500).
    if (journal_)
      journal_->put({journal_key(registration.service, registration.instance.id), "PUT",
                     "/api/v1/instances", request.body});
    client_.register_instance(registration);
    return ok({{"registered", registration_json(registration)}});
  }

  Reply deregister_instance(const Request& request, const PathParams& params, const ResponderPtr&) {
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    const auto& service = std::get<proto::ServiceKey>(key);
    const auto& id = params.at("id");
    const auto registered = client_.registrations();
    const bool known = std::any_of(registered.begin(), registered.end(), [&](const auto& r) {
      return r.service == service && r.instance.id == id;
    });
    if (!known)
      return Response::error(404, "not_registered",
                             "no instance '" + id + "' of " + service.name + "@" + service.group +
                                 " is registered at this agent");
    client_.deregister_instance(service, id);
    if (journal_) journal_->remove(journal_key(service, id));
    return ok(
        {{"deregistered", {{"service", service.name}, {"group", service.group}, {"id", id}}}});
  }

  Reply resolve(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    auto blocking = parse_blocking(request.arg("index"), request.arg("wait"));
    if (auto* error = error_of(blocking)) return bad_request(*error);
    const auto service = std::get<proto::ServiceKey>(key);
    const auto [held, wait] = std::get<BlockingArgs>(blocking);
    resolve_or_watch(
        client_, watches_, service, held, wait, "native",
        [service](const Resolution* r) { return native_resolution_response(r, service); }, later);
    return Reply{};  // answered through `later`, perhaps already
  }

  Reply pick(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    const auto service = std::get<proto::ServiceKey>(key);
    // The operator's degrade switch comes first, as in Client::call(): the
    // application fails fast (or runs its fallback) without a pick.
    if (client_.degraded(service.name))
      return Response::error(503, "degraded",
                             service.name + " is switched off by an operator (config key degrade." +
                                 service.name + "): fail fast or use a fallback");
    auto policy = client_.policy_for(service);
    if (auto name = request.arg("policy")) {
      const auto parsed = parse_lb_policy(*name);
      if (!parsed)
        return bad_request("policy must be one of " + std::string(lb_policy_names()) + " (got '" +
                           std::string(*name) + "')");
      policy = *parsed;
    }
    auto pick = std::make_shared<PickRequest>();
    pick->method = std::string(request.arg("method").value_or(""));
    if (auto hash = request.arg("hash_key")) pick->hash_key = std::hash<std::string_view>{}(*hash);
    if (auto exclude = request.arg("exclude"))
      for (const auto part : http::split_nonempty(*exclude, ','))
        pick->exclude.emplace_back(part);
    client_.resolve_async(service,
                          [this, service, policy, pick, later](std::optional<Resolution> now) {
                            later->respond(picked(service, policy, *pick, now));
                          });
    return Reply{};
  }

  Reply report_failure(const Request& request, const PathParams& params, const ResponderPtr&) {
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    auto parsed = parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return error->response();
    JsonFields fields(std::get<nlohmann::json>(parsed));
    const auto address = fields.text("address", true);
    const auto kind_text = fields.text("kind").value_or("system");
    const auto kind = proto::parse_failure_kind(kind_text);
    if (!kind)
      fields.fail("kind", "must be timeout, refused, reset, system, business or breaker_open");
    if (auto error = fields.finish()) return error->response();
    client_.report_failure(std::get<proto::ServiceKey>(key), *address, *kind);
    return Response::json(202, dump({{"reported", {{"address", *address}, {"kind", kind_text}}}}));
  }

 private:
  struct PickRequest {
    std::string method;
    std::uint64_t hash_key = 0;
    std::vector<std::string> exclude;
  };

  Response picked(const proto::ServiceKey& service, LbPolicy policy, const PickRequest& request,
                  const std::optional<Resolution>& now) {
    if (!now || unknown_service(*now))
      return native_resolution_response(now ? &*now : nullptr, service);
    PickContext ctx;
    ctx.hash_key = request.hash_key;
    ctx.exclude = &request.exclude;
    ctx.method = request.method;
    const auto chosen = client_.pick_cached(service, policy, ctx);
    if (!chosen)
      return Response::error(503, "no_instance",
                             "no instance of " + service.name + "@" + service.group +
                                 " can take a call (none UP, or all isolated, excluded or "
                                 "routed away)");
    return ok({{"service", service.name},
               {"group", service.group},
               {"policy", to_string(policy)},
               {"version", now->version},
               {"stale", now->stale},
               {"instance", instance_json(*chosen)}});
  }

  static std::string journal_key(const proto::ServiceKey& service, const std::string& id) {
    return RegistrationJournal::native_key(service.name, service.group, id);
  }

  Client& client_;
  WatchBoard& watches_;
  RegistrationJournal* journal_;  // null without --data
};

}  // namespace

http::Response native_resolution_response(const Resolution* r, const proto::ServiceKey& service) {
  const auto name = service.name + "@" + service.group;
  if (r == nullptr)
    return Response::error(503, "no_hub",
                           "no hub answered for " + name + " and nothing is cached for it");
  if (unknown_service(*r))
    return Response::error(404, "unknown_service", "the hubs know no service " + name);
  auto response = ok(resolution_json(*r));
  response.headers.emplace_back("X-Cascade-Index", std::to_string(r->version));
  return response;
}

void add_native_routes(http::Router& router, Client& client, WatchBoard& watches,
                       RegistrationJournal* journal) {
  auto api = std::make_shared<NativeApi>(client, watches, journal);
  router.add("GET", "/api/v1/status", api, &NativeApi::status);
  router.add("GET", "/api/v1/instances", api, &NativeApi::instances);
  router.add("PUT", "/api/v1/instances", api, &NativeApi::register_instance);
  router.add("POST", "/api/v1/instances", api, &NativeApi::register_instance);
  router.add("DELETE", "/api/v1/instances/{service}/{id}", api, &NativeApi::deregister_instance);
  router.add("GET", "/api/v1/services/{service}", api, &NativeApi::resolve);
  router.add("GET", "/api/v1/services/{service}/pick", api, &NativeApi::pick);
  router.add("POST", "/api/v1/services/{service}/failures", api, &NativeApi::report_failure);
}

}  // namespace cascade::agent::api
