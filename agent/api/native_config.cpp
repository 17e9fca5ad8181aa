#include "cascade/agent/api/native_config.hpp"

#include "cascade/agent/api/native_json.hpp"
#include "cascade/agent/api/query_args.hpp"
#include "cascade/common/config_json.hpp"
#include "cascade/common/validate.hpp"

namespace cascade::agent::api {

namespace {

using http::PathParams;
using http::Reply;
using http::Request;
using http::ResponderPtr;
using http::Response;

// Versions are 64-bit ((epoch << 40) | counter): a string, which a
// JavaScript client reads without rounding.
Json group_fields(const ConfigSnapshot& s) {
  return {{"group", s.group},
          {"version", std::to_string(s.version)},
          {"gone", s.gone},
          {"stale", s.stale},
          {"age_ms", s.age.count()}};
}

Response with_index(Json json, std::uint64_t version) {
  auto response = Response::json(200, dump(json));
  response.headers.emplace_back("X-Cascade-Index", std::to_string(version));
  return response;
}

// Entries as every JSON interface shows them (common/config_json.hpp).
Response group_response(const ConfigSnapshot& s) {
  auto json = group_fields(s);
  auto entries = Json::array();
  for (const auto& [key, entry] : s.values)
    entries.push_back(config_entry_json(entry));
  json["entries"] = std::move(entries);
  return with_index(std::move(json), s.version);
}

Response key_response(const ConfigSnapshot& s, const std::string& key) {
  auto it = s.values.find(key);
  if (it == s.values.end()) {
    // With the index, so that a watch can wait for the key to appear.
    auto response = Response::error(404, "unknown_key",
                                    "config group " + s.group + " holds no key '" + key + "'" +
                                        (s.gone ? " (no tier has the group)" : ""));
    response.headers.emplace_back("X-Cascade-Index", std::to_string(s.version));
    return response;
  }
  auto json = group_fields(s);
  json["entry"] = config_entry_json(it->second);
  return with_index(std::move(json), s.version);
}

class NativeConfig {
 public:
  NativeConfig(ConfigWatches& watches, Duration query_timeout)
      : watches_(watches), query_timeout_(query_timeout) {}

  Reply group(const Request& request, const PathParams& params, const ResponderPtr& later) {
    return read(request, params.at("group"), std::nullopt, later);
  }

  Reply key(const Request& request, const PathParams& params, const ResponderPtr& later) {
    return read(request, params.at("group"), params.at("key"), later);
  }

 private:
  Reply read(const Request& request, const std::string& group,
             const std::optional<std::string>& key, const ResponderPtr& later) {
    if (auto error = proto::check_name("config group", group); !error.empty())
      return Response::error(400, "bad_request", error);
    auto blocking = parse_blocking(request.arg("index"), request.arg("wait"));
    if (auto* error = error_of(blocking)) return Response::error(400, "bad_request", *error);
    const auto [index, wait] = std::get<BlockingArgs>(blocking);
    auto render = [this, group, key](const ConfigSnapshot* now) {
      if (now == nullptr) return no_answer(group);
      return key ? key_response(*now, *key) : group_response(*now);
    };
    watches_.watch(group, index, wait, key ? "native-key:" + *key : "native-group",
                   std::move(render), later);
    return Reply{};  // answered through `later`, perhaps already
  }

  Response no_answer(const std::string& group) const {
    return Response::error(504, "no_answer",
                           "no hub answered for config group " + group + " within " +
                               std::to_string(query_timeout_.count()) +
                               " ms and this agent holds nothing of it; ask again");
  }

  ConfigWatches& watches_;
  Duration query_timeout_;
};

}  // namespace

void add_native_config_routes(http::Router& router, ConfigWatches& watches,
                              Duration query_timeout) {
  auto api = std::make_shared<NativeConfig>(watches, query_timeout);
  router.add("GET", "/api/v1/config/{group}", api, &NativeConfig::group);
  router.add("GET", "/api/v1/config/{group}/{key*}", api, &NativeConfig::key);
}

}  // namespace cascade::agent::api
