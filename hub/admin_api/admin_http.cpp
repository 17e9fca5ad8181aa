#include "cascade/hub/admin_api/admin_http.hpp"

#include <spdlog/spdlog.h>

#include <stdexcept>

#include "cascade/http/host_header.hpp"
#include "cascade/hub/admin_api/admin_commands.hpp"
#include "cascade/hub/admin_api/admin_reads.hpp"
#include "cascade/hub/admin_api/config_routes.hpp"
#include "cascade/hub/admin_api/console_routes.hpp"

namespace cascade::hub::admin_api {

namespace {

// Operator commands always. Reads from loopback peers that addressed the hub
// by a loopback name are as open as cascadectl's on a hub without keys; from
// other hosts, or under another name (a page that rebound its DNS name to
// 127.0.0.1: http/host_header.hpp), they need a token too. The console's
// files hold no state, and a browser loads them without a token.
bool needs_token(const http::Request& request) {
  if (request.method != "GET") return true;
  if (is_console_path(request.path)) return false;
  return !(request.peer.is_loopback() && http::host_names_loopback(request.header("host")));
}

std::shared_ptr<http::RequestTokens> load_tokens(const std::string& file) {
  if (file.empty()) return nullptr;
  auto tokens = http::BearerTokens::load(file);
  if (auto* error = std::get_if<std::string>(&tokens)) throw std::runtime_error(*error);
  return std::make_shared<http::RequestTokens>(std::get<http::BearerTokens>(std::move(tokens)),
                                               needs_token);
}

}  // namespace

AdminHttp::AdminHttp(const http::ApiOptions& options, OwnerPort& owner,
                     const std::filesystem::path& store_file)
    : token_file_(options.token_file), tokens_(load_tokens(token_file_)), audit_(store_file) {
  add_read_routes(router_, owner, audit_, [this] { return counters_json(); });
  add_command_routes(router_, owner);
  add_config_routes(router_, owner);
  add_console_routes(router_);
  auto config = http::server_config(options, "http");
  config.tokens = tokens_;
  server_ = std::make_unique<http::Server>(std::move(config), router_);
  if (!tokens_)
    spdlog::warn(
        "admin API: no --http-token-file: operator commands are refused, reads are "
        "open to loopback peers only");
}

AdminHttp::~AdminHttp() = default;

AdminHttp::ReloadOutcome AdminHttp::reload_tokens() {
  if (!tokens_) return {true, "no HTTP token file to reload"};
  if (auto error = tokens_->reload(token_file_); !error.empty()) {
    spdlog::error("HTTP tokens not reloaded, keeping the {} in use: {}", tokens_->size(), error);
    return {false, "kept the HTTP tokens in use: " + error};
  }
  auto message = fmt::format("reloaded {} HTTP tokens from {}", tokens_->size(), token_file_);
  spdlog::info("{}", message);
  return {true, std::move(message)};
}

Json AdminHttp::counters_json() const {
  const auto& c = server_->counters();
  return {{"requests", c.requests.load()},           {"responses_2xx", c.responses_2xx.load()},
          {"responses_4xx", c.responses_4xx.load()}, {"responses_5xx", c.responses_5xx.load()},
          {"unauthorized", c.unauthorized.load()},   {"peers_refused", c.peers_refused.load()},
          {"bad_requests", c.bad_requests.load()},   {"connections", c.connections.load()}};
}

}  // namespace cascade::hub::admin_api
