// Command line and TOML config of cascade-agent (CLI11 stays in this file).
#include "cascade/agent/agent_options.hpp"

#include "cascade/agent/registration_spec.hpp"
#include "cascade/common/cli.hpp"
#include "cascade/common/curve_keys.hpp"
#include "cascade/common/endpoint_security.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/validate.hpp"

namespace cascade::agent {

namespace {

struct RawOptions {
  std::vector<std::string> registrations;
  std::vector<std::string> uses;
  std::vector<std::string> config_groups;  // --config-group GROUP
  std::string data_dir;
  std::string log_level = "info";
  std::string log_format = "text";
  std::int64_t beat_interval_ms = 2000;
  std::int64_t subscription_ttl_ms = 300'000;
  std::int64_t query_timeout_ms = 2000;
  std::int64_t shutdown_timeout_ms = 2000;
  std::uint32_t misses = 3;
  std::string hub_mode = "failover";
  std::string secret_key;               // --secret-key FILE
  std::vector<std::string> hub_public;  // --hub-public-key [ENDPOINT=]FILE
  bool insecure = false;
  std::string http;                        // --http HOST:PORT
  std::vector<std::string> http_allow;     // --http-allow CIDR
  std::string dns;                         // --dns HOST:PORT
  std::string metrics;                     // --metrics HOST:PORT
  std::vector<std::string> metrics_allow;  // --metrics-allow CIDR
};

std::string fill_dns(DnsOptions& dns, const RawOptions& raw) {
  if (auto error = parse_listen_flag("--dns", raw.dns, dns.listen); !error.empty()) return error;
  if (dns.ttl_seconds > 3600) return "--dns-ttl-seconds must be between 0 and 3600";
  if (dns.domain.empty() || dns.domain.size() > 100 || dns.domain.front() == '.' ||
      dns.domain.back() == '.' || dns.domain.find("..") != std::string::npos)
    return "--dns-domain must be a domain name such as 'cascade' or 'svc.example'";
  return {};
}

// The key files into `keys`; "" or the error. A --hub-public-key value that
// starts with an endpoint and has '=' is ENDPOINT=FILE, else FILE for all hubs.
std::string read_keys(HubKeys& keys, const RawOptions& raw) {
  if (raw.secret_key.empty() && !raw.hub_public.empty())
    return "--hub-public-key needs --secret-key (the key this agent connects with)";
  if (raw.secret_key.empty()) return {};
  if (raw.hub_public.empty()) return "--secret-key needs --hub-public-key (the hubs' public key)";
  try {
    auto own = curve::read_secret_key_file(raw.secret_key);
    keys.public_key = std::move(own.public_z85);
    keys.secret_key = std::move(own.secret_z85);
    auto hubs = curve::ServerKeys::read(raw.hub_public);
    keys.hub_public_key = std::move(hubs.every);
    keys.per_hub_public_key = std::move(hubs.by_endpoint);
  } catch (const curve::KeyError& e) {
    return e.what();
  }
  return {};
}

std::string check_keys(const DaemonConfig& c, const RawOptions& raw) {
  const auto& keys = c.client.keys;
  for (const auto& hub : c.client.hubs) {
    if (keys.enabled() && keys.hub_key_for(hub).empty())
      return "no --hub-public-key for --hub " + hub + " (give FILE for all hubs or " + hub +
             "=FILE)";
    if (auto error = check_secure_by_default("--hub", hub, keys.enabled(), raw.insecure,
                                             "--secret-key and --hub-public-key");
        !error.empty())
      return error;
  }
  return {};
}

std::string check_ranges(const DaemonConfig& c, const RawOptions& raw) {
  if (c.client.hubs.empty()) return "at least one --hub is required";
  for (const auto& hub : c.client.hubs)
    if (auto error = check_endpoint("--hub", hub); !error.empty()) return error;
  if (raw.beat_interval_ms < 10 || raw.beat_interval_ms > 3'600'000)
    return "--beat-interval-ms must be between 10 and 3600000 milliseconds";
  if (raw.hub_mode != "failover" && raw.hub_mode != "all")
    return "--hub-mode must be 'failover' or 'all'";
  if (raw.misses < 1 || raw.misses > 100)
    return "--misses-before-failover must be between 1 and 100";
  if (raw.subscription_ttl_ms < raw.beat_interval_ms)
    return "--subscription-ttl-ms must be at least one beat interval";
  if (raw.query_timeout_ms < 1 || raw.shutdown_timeout_ms < 1)
    return "timeouts must be positive milliseconds";
  return {};
}

std::string fill(DaemonConfig& c, const RawOptions& raw) {
  auto& o = c.client;
  o.beat_interval = Duration{raw.beat_interval_ms};
  o.subscription_ttl = Duration{raw.subscription_ttl_ms};
  o.query_timeout = Duration{raw.query_timeout_ms};
  o.shutdown_timeout = Duration{raw.shutdown_timeout_ms};
  o.misses_before_failover = raw.misses;
  o.hub_mode = raw.hub_mode == "all" ? HubMode::kAll : HubMode::kFailover;
  if (!raw.data_dir.empty()) o.data_dir = raw.data_dir;
  if (!parse_log_format(raw.log_format, c.log_format))
    return "--log-format: '" + raw.log_format + "' is neither text nor json";
  if (!parse_log_level(raw.log_level, c.log_level))
    return "--log-level: unknown level '" + raw.log_level + "'";
  if (auto error = check_ranges(c, raw); !error.empty()) return error;
  if (auto error = read_keys(c.client.keys, raw); !error.empty()) return error;
  if (auto error = check_keys(c, raw); !error.empty()) return error;
  c.insecure = raw.insecure && !c.client.keys.enabled();
  for (const auto& spec : raw.registrations) {
    auto parsed = parse_registration(spec);
    if (auto* error = std::get_if<std::string>(&parsed))
      return "--register " + spec + ": " + *error;
    c.registrations.push_back(std::get<proto::Registration>(parsed));
  }
  for (const auto& use : raw.uses)
    c.uses.push_back(parse_service_key(use));
  for (const auto& group : raw.config_groups) {
    if (auto error = proto::check_name("config group", group); !error.empty())
      return "--config-group '" + group + "': " + error;
    c.client.config_groups.push_back(group);
  }
  if (auto error = http::fill_api_options(raw.http, raw.http_allow, c.http); !error.empty())
    return error;
  if (auto error = metrics::parse_endpoint_options(raw.metrics, raw.metrics_allow, c.metrics);
      !error.empty())
    return error;
  return fill_dns(c.dns, raw);
}

}  // namespace

ParsedAgentOptions parse_agent_options(int argc, const char* const* argv) {
  DaemonConfig c;
  RawOptions raw;
  CLI::App app{
      "cascade-agent: registers this instance's services with a cascade hub by heartbeat\n"
      "and keeps the services it uses fresh."};
  add_config_file_option(app, "beat-interval-ms = 2000");
  app.add_option("--hub", c.client.hubs,
                 "Hub endpoint (repeatable; fail over in order after missed beats)");
  app.add_option("--hub-mode", raw.hub_mode,
                 "With several --hub: 'failover' (register with one at a time) or 'all' "
                 "(register with every hub; read from one)")
      ->capture_default_str();
  app.add_option("--id", c.client.node_id, "Node id (default: HOSTNAME-PID)");
  app.add_option("--zone", c.client.consumer.zone,
                 "This agent's zone or datacenter: the zone of the instances registered through "
                 "the Consul API (their Datacenter), and this consumer's zone in routing rules");
  app.add_option(
      "--register", raw.registrations,
      "SERVICE=ADDRESS[,weight=N][,zone=Z][,id=ID][,group=G][,status=S][,meta.K=V] (repeatable)");
  app.add_option("--use", raw.uses, "SERVICE[@GROUP] to keep fresh and report (repeatable)");
  app.add_option("--config-group", raw.config_groups,
                 "Config group to follow from the start and never drop (repeatable): its "
                 "values are at hand before the first read through the HTTP API");
  app.add_option("--data", raw.data_dir,
                 "Directory for the snapshot of used services (agent-snapshot.db)");
  app.add_option("--beat-interval-ms", raw.beat_interval_ms,
                 "Beat interval in milliseconds (jittered ±10%). Also paces the hub "
                 "connection: a dead one is found within an interval by ZeroMQ heartbeats and "
                 "made again within an interval after the network heals")
      ->capture_default_str();
  app.add_option("--misses-before-failover", raw.misses,
                 "Unanswered beats before moving to the next hub")
      ->capture_default_str();
  app.add_option("--subscription-ttl-ms", raw.subscription_ttl_ms,
                 "Drop a used service after this long without use, in milliseconds")
      ->capture_default_str();
  app.add_option("--query-timeout-ms", raw.query_timeout_ms,
                 "How long a first lookup waits for the hub, in milliseconds")
      ->capture_default_str();
  app.add_option("--shutdown-timeout-ms", raw.shutdown_timeout_ms,
                 "How long to wait for the hub to acknowledge deregistration, in milliseconds")
      ->capture_default_str();
  app.add_option("--secret-key", raw.secret_key,
                 "This agent's CurveZMQ secret key file (NAME.key from cascadectl keygen, mode "
                 "0600): hub connections are encrypted and authenticated");
  app.add_option("--hub-public-key", raw.hub_public,
                 "The hubs' public key file (NAME.pub), or ENDPOINT=FILE for one --hub whose key "
                 "differs (repeatable)");
  app.add_flag("--insecure", raw.insecure,
               "Allow plain text (no keys) to a --hub other hosts can reach; without it a "
               "non-loopback --hub needs keys");
  app.add_option("--http", raw.http,
                 "Serve the HTTP API (native JSON under /api/v1/, Consul-compatible under /v1/) "
                 "on HOST:PORT, e.g. 127.0.0.1:8500 (port 0: any free port, printed on stdout)");
  app.add_option("--http-allow", raw.http_allow,
                 "CIDR range whose hosts may use the HTTP API besides loopback (repeatable); "
                 "needed, with --http-token-file, when --http is not a loopback address");
  app.add_option("--http-token-file", c.http.token_file,
                 "File of 'NAME TOKEN' lines (mode 0600): every HTTP request must carry one of "
                 "the tokens (Authorization: Bearer TOKEN, or X-Consul-Token)");
  app.add_option("--http-max-connections", c.http.max_connections,
                 "Open HTTP connections at most, parked watches included")
      ->capture_default_str();
  app.add_option("--http-max-body-bytes", c.http.max_body_bytes,
                 "Largest HTTP request body accepted, in bytes")
      ->capture_default_str();
  app.add_option("--http-threads", c.http.threads,
                 "Threads serving HTTP requests (a parked watch holds none)")
      ->capture_default_str();
  app.add_option("--dns", raw.dns,
                 "Answer DNS queries for NAME.service.DOMAIN on HOST:PORT, UDP and TCP, e.g. "
                 "127.0.0.1:8600 (port 0: any free port, printed on stdout)");
  app.add_option("--dns-ttl-seconds", c.dns.ttl_seconds, "TTL of every DNS answer, in seconds")
      ->capture_default_str();
  app.add_option("--dns-domain", c.dns.domain, "The DNS domain served (NAME.service.DOMAIN)")
      ->capture_default_str();
  app.add_option("--metrics", raw.metrics,
                 "Serve Prometheus metrics at http://HOST:PORT/metrics, e.g. 127.0.0.1:9464 "
                 "(port 0: any free port, printed on stdout)");
  app.add_option("--metrics-allow", raw.metrics_allow,
                 "CIDR range whose hosts may scrape the metrics besides loopback (repeatable); "
                 "needed when --metrics is not a loopback address");
  app.add_option("--log-format", raw.log_format,
                 "text, or json: one object per line with the ids involved, for log shippers")
      ->capture_default_str();
  app.add_option("--log-level", raw.log_level, "trace, debug, info, warn, error, critical or off")
      ->capture_default_str();
  if (auto exit = parse_or_exit<DaemonConfig>(app, argc, argv, "cascade-agent")) return *exit;
  if (auto error = fill(c, raw); !error.empty())
    return ParsedAgentOptions::usage_error("cascade-agent", error);
  return {c, 0, {}};
}

}  // namespace cascade::agent
