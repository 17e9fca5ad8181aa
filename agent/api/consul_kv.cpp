#include "cascade/agent/api/consul_kv.hpp"

#include "cascade/agent/api/consul_json.hpp"
#include "cascade/agent/api/consul_replies.hpp"
#include "cascade/agent/api/native_json.hpp"
#include "cascade/common/validate.hpp"

namespace cascade::agent::api {

namespace {

using http::PathParams;
using http::Reply;
using http::Request;
using http::ResponderPtr;
using http::Response;

constexpr std::string_view kRoot = "/v1/kv";

// A KV path: GROUP, and KEY (empty when the path names the group only).
struct KvPath {
  std::string group;
  std::string key;
  std::string consul_key(const std::string& key_of_group) const {
    return group + "/" + key_of_group;
  }
};

// The decoded request path (not the router's segments, which drop a
// trailing '/': "GROUP/a/" is a prefix other than "GROUP/a").
std::variant<KvPath, Response> kv_path_of(const Request& request) {
  std::string_view rest = request.path;
  rest.remove_prefix(std::min(rest.size(), kRoot.size()));
  if (rest.starts_with('/')) rest.remove_prefix(1);
  if (rest.empty())
    return text_response(400,
                         "cascade's KV store is its config centre: a path names a config group "
                         "first, /v1/kv/GROUP/KEY; the root of every group cannot be listed");
  const auto slash = rest.find('/');
  KvPath path{std::string(rest.substr(0, slash)),
              slash == std::string_view::npos ? "" : std::string(rest.substr(slash + 1))};
  if (auto error = proto::check_name("config group", path.group); !error.empty())
    return text_response(400, error);
  return path;
}

// What Consul's KV has and the config centre has not: refused rather than
// ignored, so that no client believes it holds a lock or won a race.
std::optional<Response> unsupported(const Request& request, const std::string& datacenter) {
  if (request.has_arg("cas"))
    return text_response(400,
                         "?cas is not supported: cascade's config centre has no "
                         "check-and-set (versions are per group, not per key)");
  for (const auto* session_arg : {"acquire", "release"})
    if (request.has_arg(session_arg))
      return text_response(400, "?" + std::string(session_arg) +
                                    " is not supported: cascade has no sessions or locks");
  if (auto flags = request.arg("flags"); flags && *flags != "0")
    return text_response(400, "?flags is not supported: cascade keeps no flags (only 0)");
  if (request.has_arg("separator"))
    return text_response(400, "?separator is not supported: ask ?keys for every key");
  if (auto dc = request.arg("dc"); dc && *dc != datacenter)
    return text_response(400, "?dc=" + std::string(*dc) +
                                  ": this agent serves the config of its "
                                  "own datacenter (" +
                                  datacenter + ") only; what upper tiers set is in it already");
  return std::nullopt;
}

enum class ReadMode { kOne, kRaw, kRecurse, kKeys };

class ConsulKv {
 public:
  ConsulKv(const Client& client, ConfigWatches& watches, HubEditor& editor)
      : client_(client),
        watches_(watches),
        editor_(editor),
        datacenter_(datacenter_of(client.options().consumer.zone)) {}

  Reply get(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto parsed = checked_path(request);
    if (auto* error = std::get_if<Response>(&parsed)) return *error;
    const auto path = std::get<KvPath>(std::move(parsed));
    auto blocking = blocking_of(request);
    if (auto* error = error_of(blocking)) return text_response(400, *error);
    const auto held = std::get<BlockingArgs>(blocking);
    const auto mode = request.has_arg("recurse") ? ReadMode::kRecurse
                      : request.has_arg("keys")  ? ReadMode::kKeys
                      : request.has_arg("raw")   ? ReadMode::kRaw
                                                 : ReadMode::kOne;
    if (path.key.empty() && (mode == ReadMode::kOne || mode == ReadMode::kRaw))
      return text_response(400, "name a key, /v1/kv/" + path.group +
                                    "/KEY, or list the group with ?recurse or ?keys");
    auto render = [this, path, mode](const ConfigSnapshot* now) {
      if (now == nullptr) return no_answer(path.group);
      auto response = read(path, mode, *now);
      add_index_headers(response, now->version, !now->stale, now->age);
      return response;
    };
    const auto variant = std::to_string(static_cast<int>(mode)) + ":" + path.key;
    watches_.watch(path.group, held.index, held.wait, variant, std::move(render), later);
    return Reply{};  // answered through `later`, perhaps already
  }

  Reply put(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto parsed = checked_path(request);
    if (auto* error = std::get_if<Response>(&parsed)) return *error;
    const auto path = std::get<KvPath>(std::move(parsed));
    if (auto error = check_key(path); !error.empty()) return text_response(400, error);
    if (request.body.size() > proto::kMaxConfigValueBytes)
      return text_response(413, "Value exceeds " + std::to_string(proto::kMaxConfigValueBytes) +
                                    " byte limit (cascade's config values)");
    editor_.edit(path.group, {{path.key, request.body}}, actor(request), answer(later));
    return Reply{};
  }

  Reply remove(const Request& request, const PathParams&, const ResponderPtr& later) {
    auto parsed = checked_path(request);
    if (auto* error = std::get_if<Response>(&parsed)) return *error;
    const auto path = std::get<KvPath>(std::move(parsed));
    if (!request.has_arg("recurse")) {
      if (auto error = check_key(path); !error.empty()) return text_response(400, error);
      editor_.edit(path.group, {{path.key, std::nullopt}}, actor(request), answer(later));
      return Reply{};
    }
    // The keys under the prefix are the ones this agent holds: the group is
    // followed first when it is not (parked meanwhile).
    watches_.when_held(path.group,
                       [this, path, later, who = actor(request)](const ConfigSnapshot* now) {
                         if (now == nullptr) return later->respond(no_answer(path.group));
                         std::vector<proto::ConfigEdit> removals;
                         for (const auto& [key, entry] : now->values)
                           if (key.starts_with(path.key)) removals.push_back({key, std::nullopt});
                         if (removals.empty()) return later->respond(Response::json(200, "true"));
                         editor_.edit(path.group, std::move(removals), who, answer(later));
                       });
    return Reply{};
  }

 private:
  std::variant<KvPath, Response> checked_path(const Request& request) const {
    if (auto refusal = unsupported(request, datacenter_)) return *refusal;
    return kv_path_of(request);
  }

  static std::string check_key(const KvPath& path) {
    if (path.key.empty()) return "name a key: /v1/kv/" + path.group + "/KEY";
    if (path.key.size() > proto::kMaxConfigKeyBytes)
      return "a config key is at most " + std::to_string(proto::kMaxConfigKeyBytes) +
             " bytes (got " + std::to_string(path.key.size()) + ")";
    return proto::check_name("config key", path.key);
  }

  static Response read(const KvPath& path, ReadMode mode, const ConfigSnapshot& now) {
    if (mode == ReadMode::kOne || mode == ReadMode::kRaw) {
      auto it = now.values.find(path.key);
      if (it == now.values.end()) return text_response(404, "");
      if (mode == ReadMode::kOne)
        return Response::json(
            200, dump(Json::array({kv_entry_json(path.consul_key(it->first), it->second.value,
                                                 it->second.origin.version)})));
      Response raw;
      raw.body = it->second.value;
      raw.content_type = "application/octet-stream";
      return raw;
    }
    auto list = Json::array();
    for (auto it = now.values.lower_bound(path.key);
         it != now.values.end() && it->first.starts_with(path.key); ++it) {
      if (mode == ReadMode::kKeys)
        list.push_back(path.consul_key(it->first));
      else
        list.push_back(
            kv_entry_json(path.consul_key(it->first), it->second.value, it->second.origin.version));
    }
    if (list.empty()) return text_response(404, "");
    return Response::json(200, dump(list));
  }

  static std::function<void(const EditOutcome&)> answer(const ResponderPtr& later) {
    return [later](const EditOutcome& outcome) {
      using Result = EditOutcome::Result;
      switch (outcome.result) {
        case Result::kApplied:
          return later->respond(Response::json(200, "true"));
        case Result::kRefused:
          return later->respond(text_response(400, "the hub refused the edit: " + outcome.message));
        case Result::kForbidden:
          return later->respond(text_response(
              403, "the hub refused this agent's key for a config edit: " + outcome.message));
        case Result::kUnanswered:
          return later->respond(text_response(504, "no answer from the hub: " + outcome.message));
        case Result::kOverflow:
          return later->respond(text_response(503, outcome.message + "; try again"));
      }
    };
  }

  // Who edits, for the hub's audit log: this API at this agent, and the
  // name of the token the request carried, if any.
  std::string actor(const Request& request) const {
    auto who = "consul-kv@" + client_.node_id();
    if (!request.token_name.empty()) who = request.token_name + " via " + who;
    return who.substr(0, proto::kMaxIdBytes);
  }

  Response no_answer(const std::string& group) const {
    return text_response(504, "no hub answered for config group " + group + " within " +
                                  std::to_string(client_.options().query_timeout.count()) +
                                  " ms and this agent holds nothing of it; ask again");
  }

  const Client& client_;
  ConfigWatches& watches_;
  HubEditor& editor_;
  const std::string datacenter_;
};

}  // namespace

void add_consul_kv_routes(http::Router& router, const Client& client, ConfigWatches& watches,
                          HubEditor& editor) {
  auto api = std::make_shared<ConsulKv>(client, watches, editor);
  // "/v1/kv" itself: the router's {path*} needs a segment; answered 400 by kv_path_of.
  for (const auto* pattern : {"/v1/kv", "/v1/kv/{path*}"}) {
    router.add("GET", pattern, api, &ConsulKv::get);
    router.add("PUT", pattern, api, &ConsulKv::put);
    router.add("DELETE", pattern, api, &ConsulKv::remove);
  }
}

}  // namespace cascade::agent::api
