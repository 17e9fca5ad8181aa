// cascade-agent: the sidecar daemon. Registers --register instances, keeps
// --use services fresh and prints their changes on stdout, deregisters on
// SIGTERM/SIGINT. With --http, applications in any language register, look
// up and watch through its HTTP API (agent/api/local_api.hpp). The application tells it about
// failed calls on stdin, one line each, reported to the hub at once (agent/failure_reporter.hpp):
//   report-failure SERVICE ADDRESS KIND [GROUP]
// KIND is timeout, refused, reset, system, business or breaker_open.
#include <signal.h>
#include <sys/resource.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <mutex>
#include <sstream>
#include <thread>

#include "cascade/agent/agent_metrics.hpp"
#include "cascade/agent/agent_options.hpp"
#include "cascade/agent/api/local_api.hpp"
#include "cascade/agent/client.hpp"
#include "cascade/agent/dns/dns_server.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/process_signals.hpp"
#include "cascade/metrics/http_endpoint.hpp"

namespace {

std::string describe(const cascade::agent::Resolution& r) {
  std::ostringstream out;
  out << r.service.name << " v" << r.version << " (" << r.instances.size() << " instances"
      << (r.stale ? ", STALE" : "") << ", age " << r.age.count() << " ms):";
  for (const auto& in : r.instances) {
    out << " " << in.address << "[" << cascade::proto::to_string(in.status);
    if (in.health != cascade::proto::Health::kOk)
      out << "," << cascade::proto::to_string(in.health);
    out << "]";
  }
  return out.str();
}

// One stdin line; a bad one is answered on stderr and changes nothing.
void report_from_line(cascade::agent::Client& client, const std::string& line) {
  std::istringstream words(line);
  std::string verb, service, address, kind_text, group;
  words >> verb >> service >> address >> kind_text >> group;
  if (verb.empty()) return;
  const auto kind = cascade::proto::parse_failure_kind(kind_text);
  if (verb != "report-failure" || service.empty() || address.empty() || !kind) {
    std::cerr << "cascade-agent: ignored stdin line '" << line
              << "': expected 'report-failure SERVICE ADDRESS KIND [GROUP]' with KIND one of "
                 "timeout, refused, reset, system, business, breaker_open\n";
    return;
  }
  cascade::proto::ServiceKey key{
      service, group.empty() ? std::string(cascade::proto::kDefaultGroup) : group};
  client.report_failure(key, address, *kind);
}

// Where stdin's reports go while the client lives. The reader thread stays
// detached (it may be blocked in getline when the process ends), so main
// detaches the client from it before the client is destroyed.
struct ReportSink {
  std::mutex mu;
  cascade::agent::Client* client = nullptr;
  void close() {
    std::lock_guard lock(mu);
    client = nullptr;
  }
};

// Reads stdin until it closes or the sink does; closes the sink when it
// goes, so declared after the client it is gone before the client is.
class ReportReader {
 public:
  explicit ReportReader(cascade::agent::Client& client) : sink_(std::make_shared<ReportSink>()) {
    sink_->client = &client;
    std::thread([sink = sink_] {
      std::string line;
      while (std::getline(std::cin, line)) {
        std::lock_guard lock(sink->mu);
        if (sink->client == nullptr) return;
        report_from_line(*sink->client, line);
      }
    }).detach();
  }
  ~ReportReader() { sink_->close(); }
  ReportReader(const ReportReader&) = delete;
  ReportReader& operator=(const ReportReader&) = delete;

 private:
  std::shared_ptr<ReportSink> sink_;
};

// One whole line per event: the I/O thread's change callback and the main
// thread's first resolutions write concurrently.
void print_line(const std::string& line) {
  static std::mutex mu;
  std::lock_guard lock(mu);
  std::cout << line << std::endl;
}

// Each parked HTTP watch holds a socket: allow as many open files as the
// hard limit does, not the 1024 a shell usually starts with.
void raise_open_file_limit() {
  rlimit limit{};
  if (::getrlimit(RLIMIT_NOFILE, &limit) != 0 || limit.rlim_cur >= limit.rlim_max) return;
  limit.rlim_cur = limit.rlim_max;
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0)
    spdlog::warn("could not raise the open-file limit to {}", limit.rlim_max);
}

}  // namespace

int main(int argc, char** argv) {
  using namespace cascade;
  auto parsed = agent::parse_agent_options(argc, argv);
  if (!parsed.config) {
    std::fprintf(parsed.exit_code == 0 ? stdout : stderr, "%s\n", parsed.message.c_str());
    return parsed.exit_code;
  }
  init_logging("agent", parsed.config->log_level, parsed.config->log_format);
  if (parsed.config->insecure)
    spdlog::warn("--insecure: talking to the hubs in plain text, unauthenticated and unencrypted");
  // Before any thread starts: see common/process_signals.hpp.
  const BlockedSignals stop_signals({SIGTERM, SIGINT});
  try {
    const auto& config = *parsed.config;
    // Metrics (--metrics): made before the client, whose I/O thread times
    // beats and lookups into them; outlives it.
    std::unique_ptr<agent::AgentMetrics> agent_metrics;
    auto client_options = config.client;
    if (config.metrics.listen) {
      agent_metrics = std::make_unique<agent::AgentMetrics>();
      client_options.observer = &agent_metrics->observer();
    }
    agent::Client client(std::move(client_options));
    std::unique_ptr<agent::api::LocalApi> api;
    if (config.http.listen) {
      raise_open_file_limit();
      api = std::make_unique<agent::api::LocalApi>(client, config.http, config.client.data_dir);
      print_line("http listening on " + api->address().to_string());
    }
    // DNS (--dns): answers from the client; stopped before the client shuts down.
    std::unique_ptr<agent::dns::DnsServer> dns;
    if (config.dns.listen) {
      dns = agent::dns::start_dns_server(config.dns, client);
      print_line("dns listening on " + dns->local_address().to_string());
    }
    // The metrics endpoint reads the parts above at each scrape; stopped first.
    std::unique_ptr<metrics::HttpEndpoint> metrics_endpoint;
    if (agent_metrics) {
      agent_metrics->read_from(client, api.get(), dns.get());
      metrics_endpoint =
          std::make_unique<metrics::HttpEndpoint>(config.metrics, agent_metrics->registry());
      print_line("metrics listening on " + metrics_endpoint->address().to_string());
    }
    client.on_change([&api](const agent::Resolution& r) {
      print_line("changed " + describe(r));
      if (api) api->on_change(r);
    });
    for (const auto& reg : config.registrations) {
      spdlog::info("registering {} -> {} (id {})", reg.service.name, reg.instance.address,
                   reg.instance.id);
      client.register_instance(reg);
    }
    for (const auto& key : config.uses) {
      client.keep_fresh(key);
      if (auto r = client.resolve(key))
        print_line("resolved " + describe(*r));
      else
        print_line("unresolved " + key.name + " (no hub answered, no snapshot)");
    }
    ReportReader reports(client);
    const int sig = stop_signals.wait();
    spdlog::info("signal {}: deregistering", sig);
    metrics_endpoint.reset();
    if (dns) dns->stop();
    const bool acked = client.shutdown();
    spdlog::info(acked ? "deregistered" : "stopped without the hub's acknowledgement");
    api.reset();  // after the Client's I/O thread stopped: nothing calls into it any more
    return 0;
  } catch (const std::exception& e) {
    spdlog::critical("{}", e.what());
    return 1;
  }
}
