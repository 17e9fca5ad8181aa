// The daemon's metrics (agent/agent_metrics.hpp) over a Client and a real
// hub on loopback: what the client counts and times reaches the text, the
// text passes Prometheus's promtool, and docs/metrics.md names every family.
#include "cascade/agent/agent_metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"
#include "cascade/tests/metrics/promtool.hpp"
#include "cascade/tests/metrics/samples.hpp"

namespace cascade::agent {
namespace {

using metrics::testing::sample_value;
using test_support::reg;
using testing::eventually;

constexpr const char* kPromtool = PROMTOOL_PATH;

class AgentMetricsTest : public testing::ClientWithHubTest {
 protected:
  AgentMetricsTest() : ClientWithHubTest("agent-metrics") {}

  // The value of `series` in the registry's text now (-1: not there).
  double scraped(const std::string& series) {
    return sample_value(metrics.registry().render(), series).value_or(-1);
  }

  AgentMetrics metrics;
};

TEST_F(AgentMetricsTest, BeatsLookupsAndPicksOfTheClientReachTheText) {
  Client provider(options("provider"));
  provider.register_instance(reg("orders", "o1", "10.0.0.1:80"));
  auto o = options("consumer");
  o.observer = &metrics.observer();
  Client consumer(o);
  metrics.read_from(consumer, nullptr, nullptr);
  ASSERT_TRUE(eventually([&] { return consumer.pick(orders).has_value(); }));

  ASSERT_TRUE(
      eventually([&] { return scraped("cascade_agent_hub_beat_round_trip_seconds_count") >= 3; }));
  EXPECT_GE(scraped("cascade_agent_hub_beats_sent_total"), 3);
  EXPECT_GE(scraped("cascade_agent_hub_beat_replies_total"), 3);
  EXPECT_GE(scraped(R"(cascade_agent_first_lookups_total{result="answered"})") +
                scraped(R"(cascade_agent_first_lookups_total{result="not_found"})"),
            1);
  EXPECT_GE(scraped("cascade_agent_first_lookup_seconds_count"), 1);
  EXPECT_GE(scraped(R"(cascade_agent_picks_total{result="picked"})"), 1);
  EXPECT_EQ(scraped("cascade_agent_cached_services"), 1);
  EXPECT_GE(scraped("cascade_agent_cache_oldest_age_seconds"), 0);
  EXPECT_EQ(scraped(R"(cascade_agent_breakers{state="open"})"), 0);
  EXPECT_EQ(scraped(R"(cascade_agent_calls_total{result="all_broken"})"), 0);
}

TEST_F(AgentMetricsTest, TheTextPassesPromtoolAndTheDocsNameEveryFamily) {
  ASSERT_TRUE(std::filesystem::exists(kPromtool))
      << kPromtool << " is missing: run tools/setup.sh (Debian's prometheus package)";
  auto o = options("consumer");
  o.observer = &metrics.observer();
  Client consumer(o);
  metrics.read_from(consumer, nullptr, nullptr);
  consumer.resolve(orders);
  const auto text = metrics.registry().render();

  const auto dir = testing::fresh_dir("agent-metrics-promtool");
  std::filesystem::create_directories(dir);
  const auto check = cascade::testing::promtool_check(kPromtool, text, dir);
  EXPECT_EQ(check.exit_code, 0) << check.output << "\non:\n" << text;
  EXPECT_EQ(check.output, "");
  std::filesystem::remove_all(dir);

  std::ostringstream docs;
  docs << std::ifstream(std::string(CASCADE_SOURCE_DIR) + "/docs/metrics.md").rdbuf();
  const std::regex type_line("# TYPE (\\S+) ");
  for (std::sregex_iterator it(text.begin(), text.end(), type_line), end; it != end; ++it)
    EXPECT_THAT(docs.str(), ::testing::HasSubstr("`" + (*it)[1].str() + "`"))
        << "docs/metrics.md does not name this family";
}

}  // namespace
}  // namespace cascade::agent
