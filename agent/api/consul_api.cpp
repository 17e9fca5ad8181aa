#include "cascade/agent/api/consul_api.hpp"

#include <atomic>
#include <random>
#include <set>

#include "cascade/agent/api/consul_json.hpp"
#include "cascade/agent/api/consul_registration.hpp"
#include "cascade/agent/api/consul_replies.hpp"
#include "cascade/agent/api/consul_services.hpp"
#include "cascade/agent/api/deadline_timer.hpp"
#include "cascade/agent/api/native_json.hpp"
#include "cascade/agent/api/query_args.hpp"
#include "cascade/agent/api/resolve_or_watch.hpp"
#include "cascade/common/host_name.hpp"

#ifndef CASCADE_VERSION
#define CASCADE_VERSION "unknown"
#endif

namespace cascade::agent::api {

namespace {

using http::PathParams;
using http::Reply;
using http::Request;
using http::ResponderPtr;
using http::Response;

Response body_error(const BodyError& error) {
  const bool undecodable = error.code == "invalid_json";
  return text_response(400, (undecodable ? "Request decode failed: " : "") + error.message);
}

Response json_ok(const Json& json) {
  return Response::json(200, dump(json));
}

// "tcp://10.0.0.1:7400" -> "10.0.0.1:7400", as Consul names its servers.
std::string hub_address(std::string_view endpoint) {
  const auto scheme = endpoint.find("://");
  return std::string(scheme == std::string_view::npos ? endpoint : endpoint.substr(scheme + 3));
}

AgentIdentity identity_of(const Client& client) {
  const auto& consumer = client.options().consumer;
  return {client.node_id(), consumer.zone, consumer.host.empty() ? host_name() : consumer.host};
}

Parsed<ConsulFilter> filter_of(const Request& request) {
  if (request.has_arg("filter"))
    return std::string(
        "cascade does not evaluate filter expressions (?filter=): ask without it and filter the "
        "answer");
  ConsulFilter filter;
  auto passing = parse_flag(request.arg("passing"), "passing");
  if (auto* error = error_of(passing)) return *error;
  filter.passing = std::get<bool>(passing);
  if (auto tag = request.arg("tag")) filter.tag = std::string(*tag);
  if (auto dc = request.arg("dc")) filter.datacenter = std::string(*dc);
  return filter;
}

// Every change of the catalog (of any service the agent holds, or of a
// registration made here) wakes the blocking catalog listings; they hold this
// key in a WatchBoard of their own. No hub's key: service names are not empty.
const proto::ServiceKey kCatalogKey{"", "consul catalog"};

class ConsulApi {
 public:
  ConsulApi(Client& client, WatchBoard& watches, const Clock& clock, RegistrationJournal* journal)
      : client_(client),
        watches_(watches),
        clock_(clock),
        journal_(journal),
        catalog_watches_(catalog_source(), clock, std::random_device{}()),
        services_(sink(), identity_of(client)),
        timer_(
            clock, [this] { return services_.next_deadline(); },
            [this](MonoTime now) { services_.on_timer(now); }) {}

  void on_change(const Resolution&) { catalog_changed(); }

  Reply register_service(const Request& request, const PathParams&, const ResponderPtr&) {
    auto parsed = consul_service_from_json(request.body, services_.agent());
    if (auto* error = std::get_if<BodyError>(&parsed)) return body_error(*error);
    auto service = std::get<ConsulService>(std::move(parsed));
    const auto id = service.id;
    if (auto error = services_.put(std::move(service), clock_.now()))
      return text_response(400, *error);
    // After put(): replacing a service deregisters the old one, which forgets its entry.
    if (journal_)
      journal_->put(
          {RegistrationJournal::consul_key(id), "PUT", "/v1/agent/service/register", request.body});
    timer_.poke();
    return done();
  }

  Reply deregister_service(const Request&, const PathParams& params, const ResponderPtr&) {
    const auto& key = params.at("id");
    const auto local = local_registrations();
    auto it = local.find(key);
    if (it == local.end())
      return text_response(404, "Unknown service ID \"" + key +
                                    "\". Ensure that the service ID is passed, not the service "
                                    "name.");
    const auto& r = it->second;
    if (!(registered_here(r) && services_.remove(r.instance.id))) {
      client_.deregister_instance(r.service, r.instance.id);
      catalog_changed();
    }
    timer_.poke();
    return done();
  }

  Reply pass(const Request& r, const PathParams& p, const ResponderPtr&) {
    return report(p.at("id"), CheckStatus::kPassing, note_of(r));
  }
  Reply warn(const Request& r, const PathParams& p, const ResponderPtr&) {
    return report(p.at("id"), CheckStatus::kWarning, note_of(r));
  }
  Reply fail(const Request& r, const PathParams& p, const ResponderPtr&) {
    return report(p.at("id"), CheckStatus::kCritical, note_of(r));
  }

  Reply update_check(const Request& request, const PathParams& params, const ResponderPtr&) {
    auto parsed = parse_object(request.body);
    if (auto* error = std::get_if<BodyError>(&parsed)) return body_error(*error);
    JsonFields fields(std::get<nlohmann::json>(parsed), KeyMatch::kFolded);
    const auto status_text = fields.text("Status").value_or("");
    auto output = fields.text("Output").value_or("");
    if (auto error = fields.finish()) return body_error(*error);
    const auto status = parse_check_status(status_text);
    if (!status)
      return text_response(
          400, "Invalid check status: '" + status_text + "' (passing, warning or critical)");
    return report(params.at("id"), *status, std::move(output));
  }

  Reply agent_services(const Request&, const PathParams&, const ResponderPtr&) {
    Json map = Json::object();
    for (const auto& [key, r] : local_registrations()) {
      const auto in = consul_instance(r.service.name, r.instance);
      const auto ours = registered_here(r);
      map[key] = agent_service_json(in, ours ? ours->service.passing_weight : r.instance.weight,
                                    ours ? ours->service.warning_weight : r.instance.weight);
    }
    return json_ok(map);
  }

  Reply agent_checks(const Request&, const PathParams&, const ResponderPtr&) {
    Json map = Json::object();
    for (const auto& entry : services_.checks())
      map[entry.check.spec.id] =
          agent_check_json(entry.check, services_.agent().node, entry.service, entry.tags);
    return json_ok(map);
  }

  Reply agent_self(const Request&, const PathParams&, const ResponderPtr&) {
    const auto status = client_.status();
    const auto& agent = services_.agent();
    const auto dc = datacenter_of(agent.zone);
    const Json config = {{"Datacenter", dc},          {"PrimaryDatacenter", dc},
                         {"NodeName", agent.node},    {"NodeID", agent.node},
                         {"Server", false},           {"Revision", ""},
                         {"Version", CASCADE_VERSION}};
    const Json member = {{"Name", agent.node},
                         {"Addr", agent.host},
                         {"Port", 0},
                         {"Tags", {{"dc", dc}, {"role", "node"}, {"build", CASCADE_VERSION}}},
                         {"Status", 1}};  // alive
    const Json cascade = {{"hub", leader()},
                          {"hub_id", status.hub_id},
                          {"state", status.hub_reachable ? "connected" : "hub_unreachable"},
                          {"registered", std::to_string(client_.registrations().size())},
                          {"cached_services", std::to_string(status.cached_services)}};
    return json_ok({{"Config", config},
                    {"Member", member},
                    {"Meta", Json::object()},
                    {"Stats", {{"cascade", cascade}}}});
  }

  Reply status_leader(const Request&, const PathParams&, const ResponderPtr&) {
    return json_ok(Json(leader()));
  }

  Reply status_peers(const Request&, const PathParams&, const ResponderPtr&) {
    Json peers = Json::array();
    for (const auto& hub : client_.options().hubs)
      peers.push_back(hub_address(hub));
    return json_ok(peers);
  }

  Reply health_service(const Request& r, const PathParams& p, const ResponderPtr& later) {
    return listing(r, p, later, "consul-health", &health_json);
  }

  Reply catalog_service(const Request& r, const PathParams& p, const ResponderPtr& later) {
    return listing(r, p, later, "consul-catalog", &catalog_service_json);
  }

  Reply catalog_services(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto blocking = blocking_of(request);
    if (auto* error = error_of(blocking)) return text_response(400, *error);
    const auto held = std::get<BlockingArgs>(blocking);
    std::optional<std::string> dc;
    if (auto arg = request.arg("dc")) dc = std::string(*arg);
    auto render = [this, dc](const Resolution* now) {
      return catalog_listing(now ? now->version : catalog_index_.load(), dc);
    };
    if (!held.index) return render(nullptr);
    catalog_watches_.watch(kCatalogKey, *held.index, held.wait, "catalog:" + dc.value_or(""),
                           render, later);
    return Reply{};
  }

 private:
  using Lister = Json (*)(const Resolution&, const ConsulFilter&);

  RegistrationSink sink() {
    return {[this](proto::Registration r) {
              client_.register_instance(std::move(r));
              catalog_changed();
            },
            [this](const proto::ServiceKey& service, const std::string& id) {
              client_.deregister_instance(service, id);
              if (journal_) journal_->remove(RegistrationJournal::consul_key(id));
              catalog_changed();
            }};
  }

  WatchSource catalog_source() {
    return {[this](const proto::ServiceKey&) { return std::optional(catalog_index_.load()); },
            [this](const proto::ServiceKey&) { return std::optional(catalog_at(catalog_index_)); }};
  }

  // The catalog as its WatchBoard sees it: a version, no instances.
  static Resolution catalog_at(std::uint64_t index) {
    Resolution catalog;
    catalog.service = kCatalogKey;
    catalog.version = index;
    return catalog;
  }

  void catalog_changed() { catalog_watches_.on_change(catalog_at(++catalog_index_)); }

  static std::string note_of(const Request& request) {
    return std::string(request.arg("note").value_or(""));
  }

  Response report(const std::string& check_id, CheckStatus status, std::string output) {
    if (!services_.report(check_id, status, std::move(output), clock_.now()))
      return text_response(404, "Unknown check ID \"" + check_id + "\"");
    timer_.poke();
    return done();
  }

  // The ConsulService behind a registration, when it was registered through this API.
  std::optional<ConsulServices::Entry> registered_here(const proto::Registration& r) const {
    auto entry = services_.find(r.instance.id);
    if (entry && entry->service.name == r.service.name) return entry;
    return std::nullopt;
  }

  // This agent's registrations in group "default" (Consul has no groups), by
  // the id Consul clients name them with: the instance id, or "ID@NAME" for
  // an id that a Consul-registered service or an earlier service already has.
  std::map<std::string, proto::Registration> local_registrations() const {
    auto registrations = client_.registrations();
    std::stable_partition(registrations.begin(), registrations.end(),
                          [this](const auto& r) { return registered_here(r).has_value(); });
    std::map<std::string, proto::Registration> by_key;
    for (auto& r : registrations) {
      if (r.service.group != proto::kDefaultGroup) continue;
      auto key = r.instance.id;
      if (by_key.contains(key)) key += "@" + r.service.name;
      by_key.emplace(std::move(key), std::move(r));
    }
    return by_key;
  }

  std::string leader() const {
    const auto status = client_.status();
    const auto& hubs = client_.options().hubs;
    if (!status.hub_reachable || status.current_hub >= hubs.size()) return "";
    return hub_address(hubs[status.current_hub]);
  }

  Reply listing(const Request& request, const PathParams& params, const ResponderPtr& later,
                std::string variant, Lister list) {
    auto key = service_key_of(params.at("service"), std::nullopt);
    if (auto* error = error_of(key)) return text_response(400, *error);
    auto filter = filter_of(request);
    if (auto* error = error_of(filter)) return text_response(400, *error);
    auto blocking = blocking_of(request);
    if (auto* error = error_of(blocking)) return text_response(400, *error);
    const auto service = std::get<proto::ServiceKey>(key);
    const auto chosen = std::get<ConsulFilter>(filter);
    const auto held = std::get<BlockingArgs>(blocking);
    // Watches of one service with one variant share a rendering: the variant names the filter.
    for (const auto& part : {std::string(chosen.passing ? "passing" : ""), chosen.tag.value_or(""),
                             chosen.datacenter.value_or("")})
      variant.append(1, '\0').append(part);
    auto render = [service, chosen, list](const Resolution* now) {
      if (now == nullptr)
        return text_response(500, "No known hub: no hub answered for " + service.name +
                                      " and nothing is cached for it");
      auto response = json_ok(list(*now, chosen));
      add_index_headers(response, consul_index(now->version), !now->stale, now->age);
      return response;
    };
    const auto version = held.index ? std::optional(version_of_index(*held.index)) : std::nullopt;
    resolve_or_watch(client_, watches_, service, version, held.wait, std::move(variant),
                     std::move(render), later);
    return Reply{};  // answered through `later`, perhaps already
  }

  // GET /v1/catalog/services: the services of this agent's registrations and
  // cache (peeked: listing them does not keep them in use), with their tags.
  Response catalog_listing(std::uint64_t index, const std::optional<std::string>& dc) const {
    ConsulFilter filter;
    filter.datacenter = dc;
    std::map<std::string, std::set<std::string>> tags;
    auto add = [&](const std::string& name, const proto::Instance& instance) {
      const auto in = consul_instance(name, instance);
      if (filter.admits(in)) tags[name].insert(in.tags.begin(), in.tags.end());
    };
    for (const auto& r : client_.registrations())
      if (r.service.group == proto::kDefaultGroup) add(r.service.name, r.instance);
    for (const auto& service : client_.cached_services()) {
      if (service.group != proto::kDefaultGroup) continue;
      if (const auto held = client_.peek(service))
        for (const auto& instance : held->instances)
          add(service.name, instance);
    }
    Json json = Json::object();
    for (const auto& [name, set] : tags)
      json[name] = std::vector<std::string>(set.begin(), set.end());
    auto response = json_ok(json);
    const auto status = client_.status();
    add_index_headers(response, index, status.hub_reachable,
                      status.last_reply_age.value_or(Duration{0}));
    return response;
  }

  Client& client_;
  WatchBoard& watches_;
  const Clock& clock_;
  RegistrationJournal* journal_;  // null without --data
  std::atomic<std::uint64_t> catalog_index_{1};
  WatchBoard catalog_watches_;
  ConsulServices services_;
  DeadlineTimer timer_;  // last: its thread calls services_
};

}  // namespace

std::function<void(const Resolution&)> add_consul_routes(http::Router& router, Client& client,
                                                         WatchBoard& watches, const Clock& clock,
                                                         RegistrationJournal* journal) {
  auto api = std::make_shared<ConsulApi>(client, watches, clock, journal);
  router.add("PUT", "/v1/agent/service/register", api, &ConsulApi::register_service);
  for (const auto* method : {"PUT", "GET"}) {  // GET: python-consul 0.7.1
    router.add(method, "/v1/agent/service/deregister/{id*}", api, &ConsulApi::deregister_service);
    router.add(method, "/v1/agent/check/pass/{id*}", api, &ConsulApi::pass);
    router.add(method, "/v1/agent/check/warn/{id*}", api, &ConsulApi::warn);
    router.add(method, "/v1/agent/check/fail/{id*}", api, &ConsulApi::fail);
  }
  router.add("PUT", "/v1/agent/check/update/{id*}", api, &ConsulApi::update_check);
  router.add("GET", "/v1/agent/services", api, &ConsulApi::agent_services);
  router.add("GET", "/v1/agent/checks", api, &ConsulApi::agent_checks);
  router.add("GET", "/v1/agent/self", api, &ConsulApi::agent_self);
  router.add("GET", "/v1/health/service/{service}", api, &ConsulApi::health_service);
  router.add("GET", "/v1/catalog/service/{service}", api, &ConsulApi::catalog_service);
  router.add("GET", "/v1/catalog/services", api, &ConsulApi::catalog_services);
  router.add("GET", "/v1/status/leader", api, &ConsulApi::status_leader);
  router.add("GET", "/v1/status/peers", api, &ConsulApi::status_peers);
  return [api](const Resolution& resolution) { api->on_change(resolution); };
}

}  // namespace cascade::agent::api
