#pragma once
// cascade-hub's HTTP admin API (`--http`, schemas/hub-http-api.md): the read
// endpoints and cascadectl's operator commands as JSON under /api/v1/, on
// cascade's HTTP server (http/server.hpp), with one loop thread.
//
// Who may do what: peers outside loopback and --http-allow are not accepted
// at all. Operator commands always need a bearer token from
// --http-token-file (without the file they are refused, 403); reads need one
// from peers other than loopback ones. The token file is re-read by
// reload_tokens() (the hub calls it on SIGHUP and reload-keys).
//
// Lifetime: construct before the hub's run() and destroy after it returned:
// tasks this API handed the owning thread must not outlive it, and requests
// still waiting are answered 503 by the destructor.

#include <filesystem>
#include <memory>

#include "cascade/http/api_options.hpp"
#include "cascade/http/router.hpp"
#include "cascade/http/server.hpp"
#include "cascade/hub/admin_api/admin_json.hpp"
#include "cascade/hub/admin_api/owner_port.hpp"
#include "cascade/hub/audit_reader.hpp"

namespace cascade::hub::admin_api {

class AdminHttp {
 public:
  // Listening when constructed. `store_file`: the hub's SQLite file, whose
  // audit log is read through a connection of this API's own. Throws
  // std::runtime_error when the token file is unusable or the address cannot
  // be bound, StoreError when the file cannot be read.
  AdminHttp(const http::ApiOptions& options, OwnerPort& owner,
            const std::filesystem::path& store_file);
  ~AdminHttp();
  AdminHttp(const AdminHttp&) = delete;
  AdminHttp& operator=(const AdminHttp&) = delete;

  struct ReloadOutcome {
    bool ok = false;
    std::string message;
  };
  // Re-reads the token file; a bad one keeps the tokens in use (logged).
  // Any thread.
  ReloadOutcome reload_tokens();

  const SocketAddress& address() const { return server_->local_address(); }
  const http::ServerCounters& counters() const { return server_->counters(); }

 private:
  Json counters_json() const;

  std::string token_file_;
  std::shared_ptr<http::RequestTokens> tokens_;  // null without a token file
  AuditReader audit_;
  http::Router router_;
  std::unique_ptr<http::Server> server_;  // last: stops first
};

}  // namespace cascade::hub::admin_api
