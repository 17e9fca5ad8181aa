#include "cascade/hub/admin_api/admin_reads.hpp"

#include "cascade/http/query_args.hpp"
#include "cascade/hub/admin_api/handler_support.hpp"

namespace cascade::hub::admin_api {

namespace {

using http::PathParams;
using http::Reply;
using http::Request;
using http::ResponderPtr;
using http::Response;

class AdminReads {
 public:
  AdminReads(OwnerPort& owner, AuditReader& audit, std::function<Json()> server_counters,
             ReadLimits limits)
      : owner_(owner),
        audit_(audit),
        server_counters_(std::move(server_counters)),
        limits_(limits) {}

  Reply status(const Request&, const PathParams&, const ResponderPtr& later) {
    answer_on_owner(owner_, later, [http = server_counters_()](Owner& hub) {
      auto json = status_json(hub.status(), hub.core());
      json["http"] = http;
      return json_response(200, json);
    });
    return Reply{};
  }

  Reply switches(const Request&, const PathParams&, const ResponderPtr& later) {
    answer_on_owner(owner_, later,
                    [](Owner& hub) { return json_response(200, switches_json(hub.core())); });
    return Reply{};
  }

  Reply services(const Request&, const PathParams&, const ResponderPtr& later) {
    answer_on_owner(owner_, later,
                    [](Owner& hub) { return json_response(200, services_json(hub.core())); });
    return Reply{};
  }

  Reply service(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    auto all = http::parse_flag(request.arg("all"), "all");
    if (auto* error = http::error_of(all)) return bad_request(*error);
    answer_on_owner(
        owner_, later,
        [service = std::get<proto::ServiceKey>(key), all = std::get<bool>(all)](Owner& hub) {
          auto json = service_json(hub.core(), hub.now(), service, all);
          if (!json)
            return Response::error(
                404, "unknown_service",
                "this hub knows no service " + service.name + " in group " + service.group);
          return json_response(200, *json);
        });
    return Reply{};
  }

  Reply routes(const Request& request, const PathParams& params, const ResponderPtr& later) {
    auto key = service_of(request, params);
    if (auto* error = std::get_if<Response>(&key)) return *error;
    answer_on_owner(owner_, later, [service = std::get<proto::ServiceKey>(key)](Owner& hub) {
      return json_response(200, routes_json(hub.core(), service));
    });
    return Reply{};
  }

  Reply topology(const Request&, const PathParams&, const ResponderPtr& later) {
    answer_on_owner(owner_, later, [](Owner& hub) {
      return json_response(200, topology_json(hub.status(), hub.core(), hub.now()));
    });
    return Reply{};
  }

  Reply isolated(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto limit = list_limit(request);
    if (auto* error = http::error_of(limit)) return bad_request(*error);
    answer_on_owner(owner_, later, [limit = std::get<std::uint64_t>(limit)](Owner& hub) {
      return json_response(200, isolated_json(hub.core().isolated_instances(hub.now(), limit)));
    });
    return Reply{};
  }

  Reply unconfirmed(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto limit = list_limit(request);
    if (auto* error = http::error_of(limit)) return bad_request(*error);
    answer_on_owner(owner_, later, [limit = std::get<std::uint64_t>(limit)](Owner& hub) {
      return json_response(200,
                           unconfirmed_json(hub.core().unconfirmed_instances(hub.now(), limit)));
    });
    return Reply{};
  }

  // On this thread: a page is one indexed query on the reader's own
  // connection, and the owning thread is not involved.
  Reply audit(const Request& request, const PathParams&, const ResponderPtr&) {
    auto limit =
        http::parse_count(request.arg("limit"), "limit", limits_.audit_default, limits_.audit_max);
    if (auto* error = http::error_of(limit)) return bad_request(*error);
    std::optional<std::int64_t> before;
    if (auto text = request.arg("before")) {
      const auto id = http::parse_u64(*text);
      if (!id || *id > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        return bad_request("before must be a record id (got '" + std::string(*text) + "')");
      before = static_cast<std::int64_t>(*id);
    }
    const auto count = std::get<std::uint64_t>(limit);
    try {
      return json_response(200, audit_json(audit_.page(before, count), count));
    } catch (const StoreError& e) {
      return Response::error(503, "store_unavailable",
                             std::string("cannot read the audit log: ") + e.what());
    }
  }

 private:
  http::Parsed<std::uint64_t> list_limit(const Request& request) const {
    return http::parse_count(request.arg("limit"), "limit", limits_.list_default, limits_.list_max);
  }

  OwnerPort& owner_;
  AuditReader& audit_;
  std::function<Json()> server_counters_;
  ReadLimits limits_;
};

}  // namespace

void add_read_routes(http::Router& router, OwnerPort& owner, AuditReader& audit,
                     std::function<Json()> server_counters, ReadLimits limits) {
  auto api = std::make_shared<AdminReads>(owner, audit, std::move(server_counters), limits);
  router.add("GET", "/api/v1/status", api, &AdminReads::status);
  router.add("GET", "/api/v1/switches", api, &AdminReads::switches);
  router.add("GET", "/api/v1/services", api, &AdminReads::services);
  router.add("GET", "/api/v1/services/{service}", api, &AdminReads::service);
  router.add("GET", "/api/v1/services/{service}/routes", api, &AdminReads::routes);
  router.add("GET", "/api/v1/topology", api, &AdminReads::topology);
  router.add("GET", "/api/v1/isolated", api, &AdminReads::isolated);
  router.add("GET", "/api/v1/unconfirmed", api, &AdminReads::unconfirmed);
  router.add("GET", "/api/v1/audit", api, &AdminReads::audit);
}

}  // namespace cascade::hub::admin_api
