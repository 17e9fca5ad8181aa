#pragma once
// cascade-agent's HTTP API: the native JSON API (agent/api/native_api.hpp)
// and the Consul-compatible subset (agent/api/consul_api.hpp) on one port,
// with the watches both park on, and the config centre's reads (parked on
// ConfigWatches) and writes (sent to the hub by the HubEditor).
//
// Lifetime: construct after the Client, and destroy only after
// Client::shutdown() returned (its I/O thread, which delivers changes and
// answers lookups to the API, has stopped by then). Destruction answers
// requests still parked with 503 and stops the server.

#include <filesystem>
#include <functional>
#include <memory>

#include "cascade/agent/api/config_watches.hpp"
#include "cascade/agent/api/hub_editor.hpp"
#include "cascade/agent/api/registration_journal.hpp"
#include "cascade/agent/api/watch_board.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/agent/local_interfaces.hpp"
#include "cascade/http/router.hpp"
#include "cascade/http/server.hpp"

namespace cascade::agent::api {

class LocalApi {
 public:
  // Listening when constructed. Listens to the Client's config changes
  // (Client::on_any_config_change) until destroyed. With `data_dir` (--data), what applications
  // register is kept there (agent/api/registration_journal.hpp) and what an
  // earlier run kept is registered again first, before the server listens.
  // Throws std::runtime_error when the token file is unusable or the address
  // cannot be bound, StoreError when the data directory is unusable.
  LocalApi(Client& client, const HttpApiOptions& options,
           const std::optional<std::filesystem::path>& data_dir = std::nullopt);
  ~LocalApi();

  // Give every change of the Client's cache here (Client::on_change).
  void on_change(const Resolution& resolution) {
    watches_.on_change(resolution);
    consul_changes_(resolution);
  }
  const SocketAddress& address() const { return server_->local_address(); }
  const http::ServerCounters& counters() const { return server_->counters(); }
  const HubEditorCounters& edit_counters() const { return editor_.counters(); }

 private:
  void restore();

  Client& client_;
  SystemClock clock_;
  std::unique_ptr<RegistrationJournal> journal_;  // null without a data directory
  WatchBoard watches_;
  ConfigWatches config_watches_;
  HubEditor editor_;  // the KV store's writes (agent/api/consul_kv.hpp)
  http::Router router_;
  std::function<void(const Resolution&)> consul_changes_;  // agent/api/consul_api.hpp
  std::unique_ptr<http::Server> server_;                   // last: stops first
};

}  // namespace cascade::agent::api
