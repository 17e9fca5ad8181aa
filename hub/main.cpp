// cascade-hub: parses options, opens the store, binds, serves until SIGTERM/SIGINT;
// SIGHUP reloads the authorised keys (and the HTTP admin API's tokens).
#include <atomic>
#include <csignal>
#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "cascade/common/log.hpp"
#include "cascade/common/process_signals.hpp"
#include "cascade/hub/admin_api/server_owner.hpp"
#include "cascade/hub/hub_server.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/metrics/http_endpoint.hpp"
#include "cascade/metrics/http_server_families.hpp"
#include "cascade/metrics/process_metrics.hpp"

namespace {

// Serves on the calling thread until SIGTERM or SIGINT; SIGHUP reloads.
template <typename Server>
void serve_until_stopped(const cascade::BlockedSignals& signals, Server& server) {
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  const cascade::SignalFlags flags(signals, SIGHUP, stop, reload);
  server.run(stop, &reload);
}

// Tools and tests read the bound endpoint from here when the port was `*`.
void write_endpoint_file(const std::filesystem::path& dir, const std::string& endpoint) {
  std::ofstream out(dir / "hub.endpoint", std::ios::trunc);
  out << endpoint << "\n";
}

// --metrics: the server's families and the process's, served on their own
// thread until destroyed (before the server: declare it after).
struct MetricsService {
  std::unique_ptr<cascade::metrics::Registry> registry;
  std::unique_ptr<cascade::metrics::HttpEndpoint> endpoint;
};

// Throws std::runtime_error when the address cannot be listened on. With
// `admin_http`, its counters are served too (it must outlive the service).
template <typename Server>
MetricsService serve_metrics(const cascade::hub::HubConfig& config, Server& server,
                             const cascade::http::ServerCounters* admin_http = nullptr) {
  using namespace cascade;
  MetricsService service;
  if (!config.metrics.listen) return service;
  service.registry = std::make_unique<metrics::Registry>();
  server.enable_metrics(*service.registry);
  if (admin_http) {
    auto read = std::make_unique<metrics::ReadAtScrape>();
    metrics::add_http_server_families(*read, *admin_http, "cascade_hub_http");
    service.registry->add(std::move(read));
  }
  service.registry->add(std::make_unique<metrics::ProcessMetrics>());
  service.endpoint = std::make_unique<metrics::HttpEndpoint>(config.metrics, *service.registry);
  // Tools and tests read the bound address from here when the port was 0.
  std::cout << "metrics listening on " << service.endpoint->address().to_string() << std::endl;
  return service;
}

int serve_proxy(const cascade::hub::HubConfig& config, const cascade::BlockedSignals& signals) {
  using namespace cascade;
  SystemClock clock;
  zmq::context_t context(1);
  hub::ProxyServer proxy(config.proxy_config(), clock, context);
  std::string endpoint;
  try {
    endpoint = proxy.bind();
  } catch (const zmq::error_t& e) {
    spdlog::critical("cannot listen on {} / reach {}: {}", config.listen, config.upstreams.front(),
                     e.what());
    return 1;
  }
  spdlog::info("proxy listening on {}", endpoint);
  const auto metrics = serve_metrics(config, proxy);
  serve_until_stopped(signals, proxy);
  return 0;
}

int serve(const cascade::hub::HubConfig& config, const cascade::BlockedSignals& signals) {
  using namespace cascade;
  if (config.proxy) return serve_proxy(config, signals);
  std::unique_ptr<hub::SqliteHubStore> store;
  try {
    store = hub::SqliteHubStore::open(
        config.data_dir,
        config.fsync_each_batch ? sqlite::Synchronous::kFull : sqlite::Synchronous::kNormal,
        config.store_cache_mib);
  } catch (const std::exception& e) {
    spdlog::critical("cannot use data directory: {}", e.what());
    return 1;
  }
  SystemClock clock;
  zmq::context_t context(1);
  hub::HubServer server(config, clock, *store, context);
  std::string endpoint;
  try {
    endpoint = server.bind();
  } catch (const zmq::error_t& e) {
    spdlog::critical("cannot listen on {}: {}", config.listen, e.what());
    return 1;
  }
  write_endpoint_file(config.data_dir, endpoint);
  spdlog::info("listening on {}", endpoint);
  // Destroyed before the server, after run() returned (declared after it).
  std::optional<hub::admin_api::AdminService> admin;
  if (config.http.listen) {
    try {
      admin.emplace(server, config.http, store->file());
    } catch (const std::exception& e) {
      spdlog::critical("cannot serve the HTTP admin API: {}", e.what());
      return 1;
    }
    // Tools and tests read the bound address from here when the port was 0.
    std::cout << "http listening on " << admin->http().address().to_string() << std::endl;
  }
  // After the admin API, whose counters it reads: destroyed before it.
  const auto metrics = serve_metrics(config, server, admin ? &admin->http().counters() : nullptr);
  serve_until_stopped(signals, server);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  auto parsed = cascade::hub::parse_hub_options(argc, argv);
  if (!parsed.config) {
    std::fputs(parsed.message.c_str(), parsed.exit_code == 0 ? stdout : stderr);
    std::fputs("\n", parsed.exit_code == 0 ? stdout : stderr);
    return parsed.exit_code;
  }
  // Before any thread starts: see common/process_signals.hpp.
  const cascade::BlockedSignals signals({SIGTERM, SIGINT, SIGHUP});
  cascade::init_logging("hub", parsed.config->log_level, parsed.config->log_format);
  try {
    return serve(*parsed.config, signals);
  } catch (const std::exception& e) {
    spdlog::critical("fatal: {}", e.what());
    return 1;
  }
}
