// cascade-agent --metrics against a real hub: the /metrics text counts what
// the agent's HTTP and DNS interfaces, its hub link (beats and their round
// trips), its first lookups and picks do, and Prometheus's own promtool
// accepts it. A metrics address other hosts can reach needs the
// ranges that may scrape it.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>

#include "cascade/tests/common/curl_client.hpp"
#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/metrics/promtool.hpp"

namespace cascade::integration {
namespace {

using ::testing::HasSubstr;
using testing::http_get;

constexpr const char* kPromtool = PROMTOOL_PATH;

// The value of the sample `series` (name with its labels, as written) in
// metrics text; -1 when it is not there.
double sample(const std::string& text, const std::string& series) {
  const std::string prefix = "\n" + series + " ";
  const auto at = text.find(prefix);
  if (at == std::string::npos) return -1;
  return std::stod(text.substr(at + prefix.size()));
}

class IntegrationMetrics : public ClusterTest {
 protected:
  // The base URL an agent printed for `what` ("http", "metrics").
  std::string listening(Process& agent, const std::string& what) {
    const auto line = wait_for_stdout_line(agent, what + " listening on ");
    EXPECT_TRUE(line) << "no '" << what << " listening on' line";
    return line ? "http://" + line->substr(line->rfind(' ') + 1) : "";
  }
};

TEST_F(IntegrationMetrics, AnAgentCountsItsInterfacesAndLinkInTextPromtoolAccepts) {
  ASSERT_TRUE(std::filesystem::exists(kPromtool))
      << kPromtool << " is missing: run tools/setup.sh (Debian's prometheus package)";
  const auto hub = start_hub();
  auto& agent = start_agent("metered", {"--hub", hub.endpoint, "--id", "metered", "--http",
                                        "127.0.0.1:0", "--metrics", "127.0.0.1:0"});
  const auto api = listening(agent, "http");
  const auto metrics = listening(agent, "metrics");
  ASSERT_EQ(http_get(api + "/api/v1/status").status, 200);
  ASSERT_EQ(http_get(api + "/no/such/path").status, 404);

  std::string text;
  ASSERT_TRUE(poll_until(
      [&] {
        const auto scrape = http_get(metrics + "/metrics");
        text = "\n" + scrape.body;
        return scrape.status == 200 && sample(text, "cascade_agent_hub_reachable") == 1;
      },
      kPatience, Millis{50}))
      << "the agent never reported its hub reachable:" << text;
  EXPECT_GE(sample(text, "cascade_agent_http_requests_total"), 2);
  EXPECT_GE(sample(text, R"(cascade_agent_http_responses_total{class="2xx"})"), 1);
  EXPECT_EQ(sample(text, R"(cascade_agent_http_responses_total{class="4xx"})"), 1);
  EXPECT_GT(sample(text, "cascade_agent_hub_lease_seconds"), 0);
  EXPECT_GT(sample(text, "cascade_agent_beat_interval_seconds"), 0);
  EXPECT_GT(sample(text, "process_resident_memory_bytes"), 0);
  EXPECT_EQ(text.find("cascade_agent_dns_"), std::string::npos) << "no --dns, no DNS families";

  const auto scrape = http_get(metrics + "/metrics");
  EXPECT_THAT(scrape.headers.at("content-type"), HasSubstr("version=0.0.4"));
  const auto check = testing::promtool_check(kPromtool, scrape.body, dir());
  EXPECT_EQ(check.exit_code, 0) << check.output << "\non:\n" << scrape.body;
  EXPECT_EQ(check.output, "");
}

TEST_F(IntegrationMetrics, AnAgentThatBeatAndLookedUpShowsItsBeatsRoundTripsLookupsAndPicks) {
  ASSERT_TRUE(std::filesystem::exists(kPromtool))
      << kPromtool << " is missing: run tools/setup.sh (Debian's prometheus package)";
  const auto hub = start_hub();
  start_provider(hub.endpoint, "provider", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_listed(hub.endpoint, "orders", "10.0.0.1:8080"));
  auto& agent = start_agent("consumer", {"--hub", hub.endpoint, "--id", "consumer", "--http",
                                         "127.0.0.1:0", "--metrics", "127.0.0.1:0"});
  const auto api = listening(agent, "http");
  const auto metrics = listening(agent, "metrics");
  ASSERT_EQ(http_get(api + "/api/v1/services/orders").status, 200);  // the first lookup
  ASSERT_EQ(http_get(api + "/api/v1/services/orders/pick").status, 200);

  std::string text;
  ASSERT_TRUE(poll_until(
      [&] {
        text = "\n" + http_get(metrics + "/metrics").body;
        return sample(text, "cascade_agent_hub_beat_round_trip_seconds_count") >= 3;
      },
      kPatience, Millis{50}))
      << "no beat round trips timed:" << text;
  EXPECT_GE(sample(text, "cascade_agent_hub_beats_sent_total"), 3);
  EXPECT_GE(sample(text, "cascade_agent_hub_beat_replies_total"), 3);
  EXPECT_GT(sample(text, "cascade_agent_hub_beat_round_trip_seconds_sum"), 0);
  EXPECT_EQ(sample(text, R"(cascade_agent_first_lookups_total{result="answered"})"), 1);
  EXPECT_EQ(sample(text, "cascade_agent_first_lookup_seconds_count"), 1);
  EXPECT_EQ(sample(text, R"(cascade_agent_picks_total{result="picked"})"), 1);
  EXPECT_EQ(sample(text, "cascade_agent_cached_services"), 1);
  EXPECT_GE(sample(text, "cascade_agent_cache_oldest_age_seconds"), 0);

  const auto check = testing::promtool_check(kPromtool, text.substr(1), dir());
  EXPECT_EQ(check.exit_code, 0) << check.output << "\non:\n" << text;
  EXPECT_EQ(check.output, "");
}

TEST_F(IntegrationMetrics, AMetricsAddressOtherHostsCanReachNeedsTheRangesThatMayScrape) {
  const auto hub = start_hub();
  auto& open = start_agent("open", {"--hub", hub.endpoint, "--metrics", "0.0.0.0:0"});
  const auto status = open.wait_for(kPatience);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->exited);
  EXPECT_EQ(status->code, 2);
  EXPECT_THAT(open.err(), HasSubstr("--metrics-allow"));

  auto& allowed = start_agent("allowed", {"--hub", hub.endpoint, "--metrics", "0.0.0.0:0",
                                          "--metrics-allow", "10.0.0.0/8"});
  EXPECT_TRUE(wait_for_stdout_line(allowed, "metrics listening on "));
}

}  // namespace
}  // namespace cascade::integration
