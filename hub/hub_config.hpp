#pragma once
// The hub's configuration: every option of `cascade-hub` (flags or the TOML
// file given with --config) as one typed struct with units in the names.

#include <spdlog/common.h>

#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/log_event.hpp"
#include "cascade/common/options.hpp"
#include "cascade/http/api_options.hpp"
#include "cascade/hub/connection_monitor.hpp"
#include "cascade/hub/curve_gate.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/inbound_queue.hpp"
#include "cascade/hub/probe_runner.hpp"
#include "cascade/hub/proxy_server.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/metrics/endpoint_options.hpp"

namespace cascade::hub {

struct HubConfig {
  std::string id = "hub-1";
  std::uint32_t tier = 1;
  std::string listen = "tcp://127.0.0.1:7400";
  std::filesystem::path data_dir = "./cascade-hub-data";
  Duration beat_interval{2000};
  Duration lease{0};            // 0 = three beat intervals
  Duration flush_interval{20};  // write-behind period for registry changes
  // A service without instances or rules that nobody follows is forgotten
  // (its entry and its row) after this grace (HubCoreConfig::empty_service_ttl).
  Duration empty_service_ttl{30'000};
  std::size_t max_frame_bytes = 4 * 1024 * 1024;
  bool fsync_each_batch = false;  // SQLite synchronous=FULL: survives power loss, slower
  // SQLite's page cache, MiB (SqliteHubStore). Counted in the hub's RSS; the
  // kernel's page cache holds the rest of the file.
  std::size_t store_cache_mib = SqliteHubStore::kDefaultCacheMib;
  spdlog::level::level_enum log_level = spdlog::level::info;
  LogFormat log_format = LogFormat::kText;  // --log-format text|json

  std::string zone;  // datacenter or zone label

  // Prometheus metrics at http://HOST:PORT/metrics (hub/hub_metrics.hpp),
  // for a hub and for a proxy.
  metrics::EndpointOptions metrics;

  // The HTTP admin API (hub/admin_api/admin_http.hpp): --http, --http-allow,
  // --http-token-file, as on the agent. For operators and a console, not
  // for applications: one loop thread, a few connections.
  http::ApiOptions http{.max_connections = 256, .threads = 1};

  // The listening socket (hub/connection_monitor.hpp, hub/connection_guard.hpp):
  // listen backlog, handshake timeout, connection limit, idle timeout. The
  // option parser sets the idle timeout to five leases unless told otherwise.
  ListenConfig connections;

  // CurveZMQ on the listening socket and the upstream ones, and who may
  // connect (hub/curve_gate.hpp). No keys: plain text, on loopback only
  // unless `insecure`.
  SecurityConfig security;

  // Upper tier: a hub with upstreams beats its tier's aggregate there and
  // forwards what its tier lacks (hub/uplink.hpp). A proxy forwards to the first.
  std::vector<std::string> upstreams;
  UplinkMode upstream_mode = UplinkMode::kFailover;
  // How often this hub beats upstream; 0 = half the beat interval, so a change
  // crossing datacenters waits at most half an interval at each hub on its way.
  Duration uplink_interval{0};
  Duration cache_ttl{0};  // 0 = half the lease the upstream grants
  Duration negative_ttl{1000};
  Duration max_stale{std::chrono::minutes(5)};
  std::uint32_t min_local_up = 1;

  // Fast fail, pushes and eviction protection (hub/isolation.hpp,
  // hub/push_gate.hpp, hub/eviction_guard.hpp); defaults documented there.
  IsolationPolicy isolation;
  PushConfig push;
  EvictionGuardConfig eviction;
  // Overload: intervals and leases granted longer while the serving thread
  // falls behind (hub/load_governor.hpp); --max-interval-stretch.
  LoadGovernorConfig governor;
  // ... and frames shed, answered busy, past a bound on their wait in the
  // hub's queue (hub/inbound_queue.hpp); --shed-after-ms.
  InboundLimits inbound;
  // Crashed or unreachable: held agents' addresses probed (hub/liveness_probes.hpp).
  LivenessProbeConfig probes;
  ProbeRunnerConfig probe_runner;

  // Cascading proxy role: no registry, forwards agents' messages upstream in
  // batches (hub/proxy_server.hpp).
  bool proxy = false;
  Duration proxy_max_delay{20};
  std::size_t proxy_max_batch = 256;

  Duration effective_lease() const { return lease.count() > 0 ? lease : beat_interval * 3; }
  // Also paces the upstream connections' heartbeats and reconnects
  // (common/link_timing.hpp), for the uplink and for a proxy.
  Duration effective_uplink_interval() const {
    return uplink_interval.count() > 0 ? uplink_interval : beat_interval / 2;
  }
  HubCoreConfig core_config() const;
  ProxyServerConfig proxy_config() const;
};

using ParsedHubOptions = ParsedOptions<HubConfig>;

ParsedHubOptions parse_hub_options(int argc, const char* const* argv);

}  // namespace cascade::hub
