// Command line and TOML config of cascade-hub. CLI11 lives in this file only:
// its header costs seconds per translation unit.
#include <algorithm>

#include "cascade/common/cli.hpp"
#include "cascade/common/host_name.hpp"
#include "cascade/common/log.hpp"
#include "cascade/hub/hub_config.hpp"

namespace cascade::hub {

HubCoreConfig HubConfig::core_config() const {
  HubCoreConfig c;
  c.hub_id = id;
  c.tier = tier;
  c.lease = effective_lease();
  c.beat_interval = beat_interval;
  c.governor = governor;
  c.zone = zone;
  c.min_local_up = min_local_up;
  c.isolation = isolation;
  // With keys, reports are signed by their key: one key alone must not
  // isolate by volume either (docs/security.md).
  if (security.has_keys())
    c.isolation.min_reporters_for_volume = std::max(c.isolation.min_reporters_for_volume, 2u);
  c.push = push;
  c.eviction = eviction;
  c.probes = probes;
  c.empty_service_ttl = empty_service_ttl;
  if (!upstreams.empty()) {
    UplinkConfig up;
    up.endpoints = upstreams;
    up.mode = upstream_mode;
    up.beat_interval = effective_uplink_interval();
    up.cache_ttl = cache_ttl;
    up.negative_ttl = negative_ttl;
    up.max_stale = max_stale;
    c.uplink = up;
  }
  return c;
}

ProxyServerConfig HubConfig::proxy_config() const {
  ProxyServerConfig c;
  c.listen = listen;
  c.upstream = upstreams.empty() ? std::string() : upstreams.front();
  c.core.max_batch = proxy_max_batch;
  c.core.max_delay = proxy_max_delay;
  c.max_frame_bytes = max_frame_bytes;
  c.link = LinkTiming::for_beat_interval(effective_uplink_interval());
  c.connections = connections;
  c.security = security;
  return c;
}

namespace {

struct RawOptions {
  std::int64_t beat_interval_ms = 2000;
  std::int64_t lease_ms = 0;
  std::int64_t flush_interval_ms = 20;
  std::int64_t empty_service_ttl_ms = 30'000;
  std::int64_t shed_after_ms = 20;
  std::string log_level = "info";
  std::string log_format = "text";
  std::string data_dir;
  std::int64_t proxy_max_delay_ms = 20;
  std::string upstream_mode = "failover";
  std::int64_t cache_ttl_ms = 0;
  std::int64_t uplink_interval_ms = 0;
  std::int64_t negative_ttl_ms = 1000;
  std::int64_t max_stale_ms = 300'000;
  std::int64_t isolation_window_ms = 10'000;
  std::int64_t isolation_base_ms = 10'000;
  std::int64_t isolation_max_ms = 300'000;
  std::int64_t push_delay_ms = 5;
  std::int64_t push_repeat_gap_ms = 100;
  std::string eviction_protection = "on";
  std::string probe_held = "on";
  std::int64_t probe_timeout_ms = 1000;
  bool no_isolation = false;
  std::uint32_t notify_share_percent = 10;
  std::int64_t eviction_window_ms = 60'000;
  std::int64_t eviction_max_hold_ms = 600'000;
  std::int64_t handshake_timeout_ms = 5000;
  std::int64_t idle_timeout_ms = -1;       // -1: five leases
  std::string metrics;                     // --metrics HOST:PORT
  std::vector<std::string> metrics_allow;  // --metrics-allow CIDR
  std::string http;                        // --http HOST:PORT
  std::vector<std::string> http_allow;     // --http-allow CIDR
};

constexpr int kIdleTimeoutLeases = 5;

// The listening socket's options, after the lease is known.
std::string validate_connections(HubConfig& c, const RawOptions& raw) {
  auto& conn = c.connections;
  if (conn.backlog < 1 || conn.backlog > 1'048'576)
    return "--listen-backlog must be between 1 and 1048576 (the kernel caps it at "
           "net.core.somaxconn)";
  if (raw.handshake_timeout_ms < 100 || raw.handshake_timeout_ms > 600'000)
    return "--handshake-timeout-ms must be between 100 and 600000 milliseconds";
  conn.handshake_timeout = Duration{raw.handshake_timeout_ms};
  if (raw.idle_timeout_ms == -1)
    conn.guard.idle_timeout = c.effective_lease() * kIdleTimeoutLeases;
  else if (raw.idle_timeout_ms == 0 || (raw.idle_timeout_ms >= c.effective_lease().count() &&
                                        raw.idle_timeout_ms <= 86'400'000))
    conn.guard.idle_timeout = Duration{raw.idle_timeout_ms};
  else
    return "--idle-timeout-ms must be 0 (never) or between one lease (" +
           std::to_string(c.effective_lease().count()) + " ms) and 86400000";
  return check_connection_guard_config(conn.guard);
}

// The millisecond options of the fast-fail and protection features, checked
// by the components' own validators after conversion.
std::string validate_protection(HubConfig& c, const RawOptions& raw) {
  if (raw.eviction_protection != "on" && raw.eviction_protection != "off")
    return "--eviction-protection must be 'on' or 'off'";
  for (auto ms : {raw.isolation_window_ms, raw.isolation_base_ms, raw.isolation_max_ms,
                  raw.eviction_window_ms, raw.eviction_max_hold_ms})
    if (ms < 1 || ms > 86'400'000)
      return "isolation and eviction durations must be between 1 and 86400000 milliseconds";
  c.isolation.window = Duration{raw.isolation_window_ms};
  c.isolation.base_isolation = Duration{raw.isolation_base_ms};
  c.isolation.max_isolation = Duration{raw.isolation_max_ms};
  c.push.delay = Duration{raw.push_delay_ms};
  c.push.repeat_gap = Duration{raw.push_repeat_gap_ms};
  c.push.share_percent = raw.notify_share_percent;
  c.isolation.enabled = !raw.no_isolation;
  c.eviction.enabled = raw.eviction_protection == "on";
  c.eviction.window = Duration{raw.eviction_window_ms};
  c.eviction.max_hold = Duration{raw.eviction_max_hold_ms};
  if (raw.probe_held != "on" && raw.probe_held != "off")
    return "--probe-held must be 'on' or 'off'";
  if (raw.probe_timeout_ms < 10 || raw.probe_timeout_ms > 60'000)
    return "--probe-timeout-ms must be between 10 and 60000 milliseconds";
  c.probes.enabled = raw.probe_held == "on";
  c.probe_runner.timeout = Duration{raw.probe_timeout_ms};
  if (auto error = check_isolation_policy(c.isolation); !error.empty()) return error;
  if (auto error = check_push_config(c.push); !error.empty()) return error;
  if (auto error = check_eviction_guard_config(c.eviction); !error.empty())
    return "eviction protection: " + error;
  return {};
}

std::string validate_tiers(const HubConfig& c, const RawOptions& raw) {
  for (const auto& up : c.upstreams)
    if (auto error = check_endpoint("--upstream", up); !error.empty()) return error;
  if (c.proxy) {
    if (c.upstreams.empty()) return "--proxy needs --upstream, the hub to forward to";
    if (c.upstreams.size() > 1) return "--proxy forwards to one --upstream (put a hub behind it)";
    return check_proxy_config(c.proxy_config().core);
  }
  if (raw.upstream_mode != "failover" && raw.upstream_mode != "all")
    return "--upstream-mode must be 'failover' or 'all'";
  if (raw.uplink_interval_ms != 0 &&
      (raw.uplink_interval_ms < 10 || raw.uplink_interval_ms > 3'600'000))
    return "--uplink-interval-ms must be 0 (half the beat interval) or 10..3600000 milliseconds";
  if (raw.cache_ttl_ms < 0 || raw.cache_ttl_ms > 3'600'000)
    return "--cache-ttl-ms must be between 0 (half the upstream's lease) and 3600000";
  if (raw.negative_ttl_ms < 0 || raw.negative_ttl_ms > 600'000)
    return "--negative-ttl-ms must be between 0 and 600000 milliseconds";
  if (raw.max_stale_ms < 0 || raw.max_stale_ms > 86'400'000)
    return "--max-stale-ms must be between 0 and 86400000 milliseconds";
  if (!c.upstreams.empty() && c.tier >= 16) return "--tier 16 is the top: it cannot have upstreams";
  return {};
}

std::string validate(HubConfig& c, const RawOptions& raw) {
  if (c.id.empty() || c.id.size() > 255) return "--id must be 1..255 characters";
  if (c.tier < 1 || c.tier > 16) return "--tier must be between 1 and 16";
  if (auto error = check_endpoint("--listen", c.listen); !error.empty()) return error;
  if (raw.beat_interval_ms < 10 || raw.beat_interval_ms > 3'600'000)
    return "--beat-interval-ms must be between 10 and 3600000 milliseconds";
  if (raw.lease_ms != 0 && raw.lease_ms < raw.beat_interval_ms)
    return "--lease-ms must be at least one beat interval (" +
           std::to_string(raw.beat_interval_ms) + " ms)";
  if (raw.flush_interval_ms < 1 || raw.flush_interval_ms > 10'000)
    return "--flush-interval-ms must be between 1 and 10000 milliseconds";
  // At least a second: a consumer's first beat after its lookup finds the entry.
  if (raw.empty_service_ttl_ms < 1000 || raw.empty_service_ttl_ms > 86'400'000)
    return "--empty-service-ttl-ms must be between 1000 and 86400000 milliseconds";
  if (c.max_frame_bytes < 1024) return "--max-frame-bytes must be at least 1024";
  if (c.store_cache_mib < 1 || c.store_cache_mib > 65'536)
    return "--store-cache-mib must be between 1 and 65536 MiB";
  if (c.governor.max_stretch < 1 || c.governor.max_stretch > 64)
    return "--max-interval-stretch must be between 1 (never slow the fleet down) and 64";
  if (raw.shed_after_ms < 0 || raw.shed_after_ms > 10'000)
    return "--shed-after-ms must be between 0 (never shed) and 10000 milliseconds";
  if (auto error = validate_protection(c, raw); !error.empty()) return error;
  if (auto error = validate_connections(c, raw); !error.empty()) return error;
  if (auto error = validate_tiers(c, raw); !error.empty()) return error;
  // Last: what is wrong with a value is said before how to secure it.
  return check_security_config(c.security, c.listen, c.upstreams);
}

void add_isolation_options(CLI::App& app, HubConfig& c, RawOptions& raw) {
  app.add_option("--isolation-min-reporters", c.isolation.min_reporters,
                 "Isolate an instance once this many distinct callers reported it failing ...")
      ->capture_default_str();
  app.add_option("--isolation-min-reports", c.isolation.min_reports,
                 "... or once this many failures were reported, within the window")
      ->capture_default_str();
  app.add_option("--isolation-window-ms", raw.isolation_window_ms,
                 "Window over which failure reports count, in milliseconds")
      ->capture_default_str();
  app.add_option("--isolation-base-ms", raw.isolation_base_ms,
                 "First isolation time, in milliseconds (doubles on repeats while on probation)")
      ->capture_default_str();
  app.add_option("--isolation-max-ms", raw.isolation_max_ms,
                 "Longest isolation time, in milliseconds")
      ->capture_default_str();
  app.add_option("--isolation-max-share", c.isolation.max_isolated_share,
                 "Never isolate more than this share of a service's UP instances (0..1)")
      ->capture_default_str();
  app.add_flag("--isolation-readmit-on-restart", c.isolation.readmit_on_restart,
               "Readmit an isolated instance as soon as its agent restarts (new epoch)");
  app.add_flag("--no-isolation", raw.no_isolation, "Count failure reports but never isolate");
}

void add_protection_options(CLI::App& app, HubConfig& c, RawOptions& raw) {
  add_isolation_options(app, c, raw);
  app.add_option("--push-delay-ms", raw.push_delay_ms,
                 "Changes are pushed to consumers after this coalescing delay, in milliseconds")
      ->capture_default_str();
  app.add_option("--push-repeat-gap-ms", raw.push_repeat_gap_ms,
                 "A service (config group) that keeps changing is pushed at most once per gap, "
                 "in milliseconds (0..10000)")
      ->capture_default_str();
  app.add_option("--push-max-per-second", c.push.max_per_second,
                 "At most this many pushes per second; the other consumers learn at their beat")
      ->capture_default_str();
  app.add_flag("--notify-switch", c.push.notify_switch,
               "Push only --notify-share-percent of a service's consumers per flush (storms)");
  app.add_option("--notify-share-percent", raw.notify_share_percent,
                 "With --notify-switch: share of consumers pushed to per flush (1..100)")
      ->capture_default_str();
  app.add_option("--eviction-protection", raw.eviction_protection,
                 "'on': hold back mass expiry (shares per window, partitions of a source)")
      ->capture_default_str();
  app.add_option("--eviction-window-ms", raw.eviction_window_ms,
                 "Window over which expiries count against the shares, in milliseconds")
      ->capture_default_str();
  app.add_option("--eviction-max-share", c.eviction.max_service_share,
                 "Most of a service expired by missed leases per window (0..1)")
      ->capture_default_str();
  app.add_option("--eviction-max-registry-share", c.eviction.max_registry_share,
                 "Most of the whole registry expired by missed leases per window (0..1)")
      ->capture_default_str();
  app.add_option("--eviction-max-hold-ms", raw.eviction_max_hold_ms,
                 "Longest an instance is held unconfirmed, in milliseconds (never stuck)")
      ->capture_default_str();
  app.add_option("--probe-held", raw.probe_held,
                 "'on': probe the addresses of held agents with a TCP connect every lease; an "
                 "agent whose every address refuses is gone, not cut off, and expires at once")
      ->capture_default_str();
  app.add_option("--probe-timeout-ms", raw.probe_timeout_ms,
                 "A probe with no answer within this many milliseconds tells nothing (held)")
      ->capture_default_str();
}

void add_connection_options(CLI::App& app, HubConfig& c, RawOptions& raw) {
  app.add_option("--listen-backlog", c.connections.backlog,
                 "TCP listen queue of --listen, in connections (a whole fleet reconnects at "
                 "once after a restart; the kernel caps it at net.core.somaxconn)")
      ->capture_default_str();
  app.add_option("--handshake-timeout-ms", raw.handshake_timeout_ms,
                 "Close a connection that has not finished the ZeroMQ handshake after this "
                 "long, in milliseconds")
      ->capture_default_str();
  app.add_option("--max-connections", c.connections.guard.max_connections,
                 "Close new connections beyond this many open ones (0: as many as the "
                 "open-file limit allows)")
      ->capture_default_str();
  app.add_option("--idle-timeout-ms", raw.idle_timeout_ms,
                 "Close a connection that sent no valid message for this long, in milliseconds "
                 "(default: five leases; 0: never). Lower-tier hubs and proxies are exempt");
}

void add_security_options(CLI::App& app, SecurityConfig& security) {
  app.add_option("--secret-key", security.secret_key,
                 "This hub's CurveZMQ secret key file (NAME.key from cascadectl keygen, mode "
                 "0600): every connection is encrypted and authenticated. Needs "
                 "--authorized-keys");
  app.add_option("--authorized-keys", security.authorized_keys,
                 "Who may connect, one line per key: PUBLIC_KEY NAME ROLE [register=GLOB,...] "
                 "[query=GLOB,...]. Reloaded on SIGHUP and by cascadectl reload-keys");
  app.add_option("--upstream-public-key", security.upstream_public_keys,
                 "Public key file (NAME.pub) of the hubs given with --upstream (and of a "
                 "proxy's upstream hub), or ENDPOINT=FILE for one --upstream whose key differs "
                 "(repeatable)");
  app.add_flag("--insecure", security.insecure,
               "Allow plain text (no keys) on an endpoint other hosts can reach; without it "
               "a non-loopback --listen or --upstream needs keys");
}

}  // namespace

ParsedHubOptions parse_hub_options(int argc, const char* const* argv) {
  HubConfig c;
  RawOptions raw;
  CLI::App app{
      "cascade-hub: a tier of the cascade service registry.\n"
      "Agents beat to it; it owns their leases and answers queries."};
  add_config_file_option(app, "lease-ms = 6000");
  c.id = host_name();
  app.add_option("--id", c.id, "This hub's id, unique in the network (default: this host's name)");
  app.add_option("--tier", c.tier,
                 "Tier of this hub: 1 for a datacenter hub (L1), 2 and up above it")
      ->capture_default_str();
  app.add_option("--listen", c.listen,
                 "ZeroMQ endpoint to bind (tcp://HOST:PORT; port * = any free port)")
      ->capture_default_str();
  app.add_option("--data", raw.data_dir, "Directory for the SQLite state (hub.db) and hub.endpoint")
      ->default_str(c.data_dir.string());
  app.add_option("--beat-interval-ms", raw.beat_interval_ms,
                 "Beat interval agents are expected to keep, in milliseconds")
      ->capture_default_str();
  app.add_option("--lease-ms", raw.lease_ms,
                 "Lease of an agent in milliseconds (default: 3 beat intervals)");
  app.add_option("--flush-interval-ms", raw.flush_interval_ms,
                 "Write-behind period for registry changes, in milliseconds")
      ->capture_default_str();
  app.add_option("--empty-service-ttl-ms", raw.empty_service_ttl_ms,
                 "A service without instances or routing rules that no consumer follows is "
                 "forgotten after this long, in milliseconds (1000..86400000)")
      ->capture_default_str();
  app.add_option("--max-frame-bytes", c.max_frame_bytes, "Largest accepted message frame, in bytes")
      ->capture_default_str();
  app.add_option("--store-cache-mib", c.store_cache_mib,
                 "SQLite page cache for hub.db, in MiB (1..65536): counted in the hub's memory; "
                 "at 1M instances 8 MiB registers as fast as 64 (docs/benchmarks.md)")
      ->capture_default_str();
  app.add_option("--max-interval-stretch", c.governor.max_stretch,
                 "While its serving thread falls behind, the hub grants intervals and leases up "
                 "to this many times longer, doubling as needed (1..64; 1: never)")
      ->capture_default_str();
  app.add_option("--shed-after-ms", raw.shed_after_ms,
                 "Once the hub's queue has stood longer than this for 50 ms (64 frames or more), "
                 "a frame that waited longer is answered busy, unread, so the rest are served "
                 "within it (0..10000 milliseconds; 0: never)")
      ->capture_default_str();
  app.add_flag(
      "--fsync", c.fsync_each_batch,
      "Fsync every batch (SQLite synchronous=FULL): survives power loss, not just crashes");
  app.add_flag(
      "--proxy", c.proxy,
      "Run as a cascading proxy: no registry, forward agents' messages upstream in batches");
  app.add_option("--zone", c.zone, "Datacenter or zone label of this hub (shown in status)");
  app.add_option("--upstream", c.upstreams,
                 "Hub of the tier above (repeatable): beat this tier's aggregate there and "
                 "forward what this tier lacks; with --proxy, the hub to forward to");
  app.add_option("--upstream-mode", raw.upstream_mode,
                 "With several --upstream: 'failover' (one at a time) or 'all' (each holds "
                 "this tier independently)")
      ->capture_default_str();
  app.add_option("--uplink-interval-ms", raw.uplink_interval_ms,
                 "How often this hub beats to its upstream, in milliseconds (0: half the beat "
                 "interval, so a change crossing tiers waits at most half an interval per hub). "
                 "Also paces the upstream connection (and a proxy's): a dead one is found "
                 "within this interval by ZeroMQ heartbeats and made again within it after "
                 "the network heals")
      ->capture_default_str();
  app.add_option("--cache-ttl-ms", raw.cache_ttl_ms,
                 "How long an upper tier's answer is served without confirmation, in "
                 "milliseconds (0: half the lease the upstream grants)")
      ->capture_default_str();
  app.add_option("--negative-ttl-ms", raw.negative_ttl_ms,
                 "How long a 'not found' from the upper tier is kept, in milliseconds")
      ->capture_default_str();
  app.add_option("--max-stale-ms", raw.max_stale_ms,
                 "While the upper tier is unreachable, serve its expired answers (marked "
                 "stale) up to this age, in milliseconds")
      ->capture_default_str();
  app.add_option("--min-local-up", c.min_local_up,
                 "Fewer UP instances of a service in this tier than this: add the upper "
                 "tier's instances (always added for a service with routing rules here)")
      ->capture_default_str();
  add_protection_options(app, c, raw);
  add_connection_options(app, c, raw);
  add_security_options(app, c.security);
  app.add_option("--proxy-max-delay-ms", raw.proxy_max_delay_ms,
                 "With --proxy: longest a message waits for its batch, in milliseconds (<= 50)")
      ->capture_default_str();
  app.add_option("--proxy-max-batch", c.proxy_max_batch,
                 "With --proxy: messages per upstream batch")
      ->capture_default_str();
  app.add_option("--log-level", raw.log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  app.add_option("--log-format", raw.log_format,
                 "text, or json: one object per line with the ids involved, for log shippers")
      ->capture_default_str();
  app.add_option("--metrics", raw.metrics,
                 "Serve Prometheus metrics at http://HOST:PORT/metrics, e.g. 127.0.0.1:9464 "
                 "(also with --proxy)");
  app.add_option("--metrics-allow", raw.metrics_allow,
                 "CIDR range whose hosts may scrape the metrics besides loopback (repeatable); "
                 "needed when --metrics is not a loopback address");
  app.add_option("--http", raw.http,
                 "Serve the HTTP admin API (JSON under /api/v1/: status, services, topology, the "
                 "audit log and cascadectl's operator commands) and its web console (/ui/) on "
                 "HOST:PORT, e.g. 127.0.0.1:7480 (port 0: any free port, printed on stdout). Not "
                 "with --proxy");
  app.add_option("--http-allow", raw.http_allow,
                 "CIDR range whose hosts may use the HTTP admin API besides loopback "
                 "(repeatable); needed, with --http-token-file, when --http is not a loopback "
                 "address");
  app.add_option("--http-token-file", c.http.token_file,
                 "File of 'NAME TOKEN' lines (mode 0600): operator commands over HTTP need one of "
                 "the tokens (Authorization: Bearer TOKEN), and so do reads from other hosts; the "
                 "audit log names the operator http:NAME. Reloaded on SIGHUP and by reload-keys");

  if (auto exit = parse_or_exit<HubConfig>(app, argc, argv, "cascade-hub")) return *exit;
  if (!raw.data_dir.empty()) c.data_dir = raw.data_dir;
  c.beat_interval = Duration{raw.beat_interval_ms};
  c.lease = Duration{raw.lease_ms};
  c.flush_interval = Duration{raw.flush_interval_ms};
  c.empty_service_ttl = Duration{raw.empty_service_ttl_ms};
  c.inbound.shed_after = Duration{raw.shed_after_ms};
  c.proxy_max_delay = Duration{raw.proxy_max_delay_ms};
  c.upstream_mode = raw.upstream_mode == "all" ? UplinkMode::kAll : UplinkMode::kFailover;
  c.cache_ttl = Duration{raw.cache_ttl_ms};
  c.uplink_interval = Duration{raw.uplink_interval_ms};
  c.negative_ttl = Duration{raw.negative_ttl_ms};
  c.max_stale = Duration{raw.max_stale_ms};
  if (!parse_log_level(raw.log_level, c.log_level))
    return ParsedHubOptions::usage_error("cascade-hub",
                                         "--log-level: unknown level '" + raw.log_level + "'");
  if (!parse_log_format(raw.log_format, c.log_format))
    return ParsedHubOptions::usage_error(
        "cascade-hub", "--log-format: '" + raw.log_format + "' is neither text nor json");
  if (auto error = metrics::parse_endpoint_options(raw.metrics, raw.metrics_allow, c.metrics);
      !error.empty())
    return ParsedHubOptions::usage_error("cascade-hub", error);
  if (auto error = http::fill_api_options(raw.http, raw.http_allow, c.http); !error.empty())
    return ParsedHubOptions::usage_error("cascade-hub", error);
  if (c.proxy && c.http.listen)
    return ParsedHubOptions::usage_error(
        "cascade-hub",
        "--http serves the admin API of a hub's registry, and a --proxy keeps none: give --http "
        "to the hub it forwards to (watch a proxy with --metrics)");
  for (const char* store_option : {"--store-cache-mib", "--fsync"})
    if (c.proxy && app.count(store_option) > 0)
      return ParsedHubOptions::usage_error(
          "cascade-hub", std::string(store_option) + " sizes or syncs a hub's store, and a " +
                             "--proxy keeps none: give it to the hub it forwards to");
  for (const char* pacing : {"--max-interval-stretch", "--shed-after-ms"})
    if (c.proxy && app.count(pacing) > 0)
      return ParsedHubOptions::usage_error(
          "cascade-hub", std::string(pacing) +
                             " paces the nodes a hub grants leases to, and a --proxy grants "
                             "none: give it to the hub it forwards to");
  if (auto error = validate(c, raw); !error.empty())
    return ParsedHubOptions::usage_error("cascade-hub", error);
  return {c, 0, {}};
}

}  // namespace cascade::hub
