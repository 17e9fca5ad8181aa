#include "cascade/agent/api/local_api.hpp"

#include <spdlog/spdlog.h>

#include <random>
#include <stdexcept>

#include "cascade/agent/api/consul_api.hpp"
#include "cascade/agent/api/consul_kv.hpp"
#include "cascade/agent/api/native_api.hpp"
#include "cascade/agent/api/native_config.hpp"

namespace cascade::agent::api {

namespace {

// A config edit is answered after the hub committed it to disk: it may take
// longer than a lookup.
constexpr Duration kEditTimeout{5000};

WatchSource source_of(Client& client) {
  return {[&client](const proto::ServiceKey& s) { return client.cached_version(s); },
          [&client](const proto::ServiceKey& s) { return client.cached(s); }};
}

http::ServerConfig server_config(const HttpApiOptions& options) {
  auto config = http::server_config(options, "http");
  if (!options.token_file.empty()) {
    auto tokens = http::BearerTokens::load(options.token_file);
    if (auto* error = std::get_if<std::string>(&tokens)) throw std::runtime_error(*error);
    // Every request of the agent's API needs one.
    config.tokens =
        std::make_shared<http::RequestTokens>(std::get<http::BearerTokens>(std::move(tokens)));
  }
  return config;
}

}  // namespace

LocalApi::LocalApi(Client& client, const HttpApiOptions& options,
                   const std::optional<std::filesystem::path>& data_dir)
    : client_(client),
      journal_(data_dir ? RegistrationJournal::open(*data_dir) : nullptr),
      watches_(source_of(client), clock_, std::random_device{}()),
      config_watches_(client, clock_, std::random_device{}(), client.options().query_timeout),
      editor_(client, kEditTimeout) {
  add_native_routes(router_, client, watches_, journal_.get());
  add_native_config_routes(router_, config_watches_, client.options().query_timeout);
  consul_changes_ = add_consul_routes(router_, client, watches_, clock_, journal_.get());
  add_consul_kv_routes(router_, client, config_watches_, editor_);
  restore();
  server_ = std::make_unique<http::Server>(server_config(options), router_);
  client.on_any_config_change(
      [this](const ConfigSnapshot& snapshot) { config_watches_.on_change(snapshot); });
}

// Each kept registration through its own route again, as its application
// sent it. One the API refuses now (a rule that changed) is logged and
// forgotten: its application would be refused the same if it asked again.
void LocalApi::restore() {
  if (!journal_) return;
  for (const auto& entry : journal_->entries()) {
    http::Request request;
    request.method = entry.method;
    request.path = entry.path;
    request.body = entry.body;
    const auto reply = router_.handle(request, nullptr);
    const int status = reply ? reply->status : 500;
    if (status < 300) {
      spdlog::info("restored registration {}", entry.key);
      continue;
    }
    spdlog::warn("kept registration {} refused now ({}), forgotten: {}", entry.key, status,
                 reply ? reply->body : std::string("no answer"));
    if (status < 500) journal_->remove(entry.key);
  }
}

LocalApi::~LocalApi() {
  client_.on_any_config_change(nullptr);
}

}  // namespace cascade::agent::api
