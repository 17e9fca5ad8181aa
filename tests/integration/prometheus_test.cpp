// A real Prometheus server (Debian's prometheus package), started by the
// test, scrapes a real cascade-hub and a real cascade-agent through a scrape
// config, and its HTTP API answers queries for their series: what an
// operator's monitoring sees, end to end.

#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "cascade/tests/common/curl_client.hpp"
#include "cascade/tests/integration/cluster.hpp"

namespace cascade::integration {
namespace {

using testing::http_get;

constexpr const char* kPrometheus = PROMETHEUS_PATH;
// Prometheus needs a few seconds to start, then scrapes once a second.
constexpr Millis kScrapePatience{60'000};

// A loopback port free now (bound, read, released) for Prometheus's web API.
int free_port() {
  const RefusingPort port;
  return port_of(port.endpoint());
}

// The value of an instant query's only result; nullopt while there is none.
std::optional<double> query(const std::string& api, const std::string& promql) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string encoded;
  for (unsigned char c : promql) {
    if (std::isalnum(c) || c == '_') {
      encoded += static_cast<char>(c);
    } else {
      encoded += {'%', kHex[c >> 4], kHex[c & 15]};
    }
  }
  const auto reply = http_get(api + "/api/v1/query?query=" + encoded);
  if (reply.status != 200) return std::nullopt;
  const auto json = nlohmann::json::parse(reply.body, nullptr, false);
  if (json.is_discarded() || json.value("status", "") != "success") return std::nullopt;
  const auto& result = json["data"]["result"];
  if (result.size() != 1) return std::nullopt;
  return std::stod(result[0]["value"][1].get<std::string>());  // [time, "value"]
}

class IntegrationPrometheus : public ClusterTest {
 protected:
  // "HOST:PORT" a process printed for its metrics.
  std::string metrics_address(Process& process) {
    const auto line = wait_for_stdout_line(process, "metrics listening on ");
    EXPECT_TRUE(line) << "no 'metrics listening on' line";
    return line ? line->substr(line->rfind(' ') + 1) : "";
  }

  // Writes a scrape config for the two targets and starts Prometheus;
  // returns its API's base URL once it is ready.
  std::string start_prometheus(const std::string& hub, const std::string& agent) {
    const auto config = dir() / "prometheus.yml";
    std::ofstream(config) << "global:\n"
                          << "  scrape_interval: 1s\n"
                          << "  scrape_timeout: 1s\n"
                          << "scrape_configs:\n"
                          << "  - job_name: cascade-hub\n"
                          << "    static_configs: [{targets: ['" << hub << "']}]\n"
                          << "  - job_name: cascade-agent\n"
                          << "    static_configs: [{targets: ['" << agent << "']}]\n";
    const auto api = "http://127.0.0.1:" + std::to_string(free_port());
    spawn(kPrometheus,
          {"--config.file=" + config.string(), "--storage.tsdb.path=" + (dir() / "tsdb").string(),
           "--web.listen-address=" + api.substr(7), "--log.level=warn"},
          "prometheus");
    EXPECT_TRUE(poll_until([&] { return http_get(api + "/-/ready").status == 200; },
                           kScrapePatience, Millis{200}))
        << "Prometheus did not become ready at " << api;
    return api;
  }
};

TEST_F(IntegrationPrometheus, APrometheusServerScrapesAHubAndAnAgentAndAnswersForTheirSeries) {
  ASSERT_TRUE(std::filesystem::exists(kPrometheus))
      << kPrometheus << " is missing: run tools/setup.sh (Debian's prometheus package)";
  HubOptions options;
  options.extra = {"--metrics", "127.0.0.1:0", "--zone", "dc1"};
  const auto hub = start_hub(options);
  const auto hub_metrics = metrics_address(*hub.process);
  auto& agent = start_agent("provider", {"--hub", hub.endpoint, "--id", "provider", "--register",
                                         "orders=127.0.0.1:8080", "--metrics", "127.0.0.1:0"});
  const auto agent_metrics = metrics_address(agent);
  ASSERT_TRUE(wait_until_listed(hub.endpoint, "orders", "127.0.0.1:8080"));

  const auto api = start_prometheus(hub_metrics, agent_metrics);
  const auto eventually = [&](const std::string& promql, auto holds) {
    std::optional<double> value;
    const bool ok = poll_until(
        [&] {
          value = query(api, promql);
          return value && holds(*value);
        },
        kScrapePatience, Millis{250});
    EXPECT_TRUE(ok) << promql << " last answered " << (value ? std::to_string(*value) : "nothing");
  };
  eventually(R"(up{job="cascade-hub"})", [](double v) { return v == 1; });
  eventually(R"(up{job="cascade-agent"})", [](double v) { return v == 1; });
  eventually("cascade_hub_beats_total", [](double v) { return v >= 1; });
  eventually(R"(cascade_hub_instances_in_state{state="up"})", [](double v) { return v == 1; });
  eventually(R"(cascade_hub_info{zone="dc1"})", [](double v) { return v == 1; });
  eventually("cascade_agent_hub_reachable", [](double v) { return v == 1; });
  eventually(R"(cascade_agent_registered_instances{job="cascade-agent"})",
             [](double v) { return v == 1; });
}

}  // namespace
}  // namespace cascade::integration
