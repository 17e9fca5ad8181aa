// Fuzz target: what the agent's HTTP API reads from a request, before any
// handler acts on it (agent/api/, http/router.cpp): JSON bodies, query
// arguments, paths.
// Properties: nothing throws; a body either becomes a registration a hub
// would accept, or a 400 with a known code; a registration written back as
// JSON reads back the same; every path gets a route's answer or a 404/405
// with a JSON error. Seeds: tests/fuzz/corpus/http_request/.

#include <set>
#include <string>
#include <string_view>

#include "cascade/agent/api/native_json.hpp"
#include "cascade/agent/api/query_args.hpp"
#include "cascade/common/validate.hpp"
#include "cascade/http/router.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

void check_registration_body(std::string_view body) {
  static const std::set<std::string> kCodes = {"invalid_json", "missing_field", "invalid_field",
                                               "unknown_field"};
  const auto parsed = agent::api::registration_from_json(body);
  if (const auto* error = std::get_if<agent::api::BodyError>(&parsed)) {
    CASCADE_FUZZ_CHECK(kCodes.contains(error->code), error->code);
    CASCADE_FUZZ_CHECK(!error->message.empty());
    return;
  }
  const auto& registration = std::get<proto::Registration>(parsed);
  CASCADE_FUZZ_CHECK(proto::check_registration(registration).empty());
  const auto again = agent::api::registration_from_json(
      agent::api::dump(agent::api::registration_json(registration)));
  const auto* round_trip = std::get_if<proto::Registration>(&again);
  CASCADE_FUZZ_CHECK(round_trip != nullptr && *round_trip == registration,
                     "a registration does not read back from its own JSON");
}

void check_arguments(std::string_view text) {
  const auto wait = agent::api::parse_wait(text);
  if (const auto* waited = std::get_if<Duration>(&wait))
    CASCADE_FUZZ_CHECK(waited->count() >= 0 && *waited <= Duration{600'000});
  (void)agent::api::parse_index(text);
  (void)agent::api::parse_flag(text, "flag");
  (void)agent::api::service_key_of(text, text);
}

void check_route(std::string_view path) {
  static http::Router router = [] {
    http::Router r;
    auto answer = [](const http::Request&, const http::PathParams& params,
                     const http::ResponderPtr&) {
      return http::Response::json(200, std::to_string(params.size()));
    };
    r.add("GET", "/api/v1/services/{service}", answer);
    r.add("GET", "/api/v1/services/{service}/pick", answer);
    r.add("PUT", "/v1/kv/{key*}", answer);
    return r;
  }();
  for (const char* method : {"GET", "PUT"}) {
    http::Request request;
    request.method = method;
    request.path = std::string(path);
    const auto reply = router.handle(request, nullptr);
    CASCADE_FUZZ_CHECK(reply.has_value());
    CASCADE_FUZZ_CHECK(reply->status == 200 || reply->status == 404 || reply->status == 405,
                       std::to_string(reply->status));
    if (reply->status != 200)
      CASCADE_FUZZ_CHECK(reply->body.find("\"code\"") != std::string::npos, reply->body);
  }
}

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  cascade::fuzz::check_registration_body(input);
  cascade::fuzz::check_arguments(input);
  cascade::fuzz::check_route(input);
  return 0;
}
