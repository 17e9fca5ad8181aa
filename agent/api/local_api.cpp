#include "cascade/agent/api/local_api.hpp"

#include <random>
#include <stdexcept>

#include "cascade/agent/api/consul_api.hpp"
#include "cascade/agent/api/native_api.hpp"

namespace cascade::agent::api {

namespace {

WatchSource source_of(Client& client) {
  return {[&client](const proto::ServiceKey& s) { return client.cached_version(s); },
          [&client](const proto::ServiceKey& s) { return client.cached(s); }};
}

http::ServerConfig server_config(const HttpApiOptions& options) {
  http::ServerConfig config;
  config.listen = *options.listen;
  config.allow = options.allow;
  config.max_connections = options.max_connections;
  config.max_body_bytes = options.max_body_bytes;
  config.threads = options.threads;
  config.name = "http";
  if (!options.token_file.empty()) {
    auto tokens = http::BearerTokens::load(options.token_file);
    if (auto* error = std::get_if<std::string>(&tokens)) throw std::runtime_error(*error);
    config.tokens = std::get<http::BearerTokens>(std::move(tokens));
  }
  return config;
}

}  // namespace

LocalApi::LocalApi(Client& client, const HttpApiOptions& options)
    : watches_(source_of(client), clock_, std::random_device{}()) {
  add_native_routes(router_, client, watches_);
  consul_changes_ = add_consul_routes(router_, client, watches_, clock_);
  server_ = std::make_unique<http::Server>(server_config(options), router_);
}

LocalApi::~LocalApi() = default;

}  // namespace cascade::agent::api
