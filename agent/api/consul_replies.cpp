#include "cascade/agent/api/consul_replies.hpp"

namespace cascade::agent::api {

namespace {

constexpr std::string_view kTextPlain = "text/plain; charset=utf-8";

}  // namespace

http::Response text_response(int status, std::string body) {
  http::Response r;
  r.status = status;
  r.body = std::move(body);
  r.content_type = std::string(kTextPlain);
  return r;
}

http::Response done() {
  return text_response(200, "");
}

void add_index_headers(http::Response& response, std::uint64_t index, bool known_leader,
                       Duration last_contact) {
  response.headers.emplace_back("X-Consul-Index", std::to_string(index));
  response.headers.emplace_back("X-Consul-KnownLeader", known_leader ? "true" : "false");
  response.headers.emplace_back("X-Consul-LastContact", std::to_string(last_contact.count()));
}

Parsed<BlockingArgs> blocking_of(const http::Request& request) {
  auto blocking = parse_blocking(request.arg("index"), request.arg("wait"));
  if (auto* args = std::get_if<BlockingArgs>(&blocking); args && args->index == 0)
    args->index.reset();
  return blocking;
}

}  // namespace cascade::agent::api
