// Prometheus's own linter on real output: `promtool check metrics` (Debian's
// prometheus package) reads exposition text from stdin and exits 0 with no
// output when it parses and breaks none of its naming and help rules; on a
// problem it prints one line each and exits non-zero. Run here as
//   promtool check metrics < FILE     (stdout and stderr kept together)
// A missing promtool is a failure, not a skip: tools/setup.sh installs it.

#include "cascade/tests/metrics/promtool.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <limits>
#include <memory>
#include <string>

#include "cascade/metrics/process_metrics.hpp"
#include "cascade/metrics/registry.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::metrics {
namespace {

namespace fs = std::filesystem;

constexpr const char* kPromtool = PROMTOOL_PATH;

using CheckResult = testing::PromtoolResult;

class MetricsPromtool : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(fs::exists(kPromtool))
        << "promtool not found (" << kPromtool << "): run tools/setup.sh, which installs "
        << "Debian's prometheus package, then configure the build again";
  }
  CheckResult check(const std::string& text) {
    return testing::promtool_check(kPromtool, text, dir_.path());
  }

  store_test::TempDir dir_;
};

TEST_F(MetricsPromtool, RegistryWithProcessMetricsAndHistogramsPassesCheckMetrics) {
  Registry registry;
  auto& beats =
      registry.counter("cascade_test_beats_total", "Beats handled, by result.", {"result"});
  beats.with({"ok"}).inc(1027);
  beats.with({"refused \"stale\"\\\nepoch"}).inc();
  registry.counter("cascade_test_busy_seconds_total", "Time spent busy, in seconds.").add(0.125);
  auto& instances = registry.gauge("cascade_test_instances", "Instances\nby \\ state.", {"state"});
  instances.with({"up"}).set(1'000'000);
  instances.with({"isolated"}).set(0);
  registry.gauge("cascade_test_links", "Links by state: none yet.", {"state"});
  auto& handling = registry.histogram("cascade_test_beat_handling_seconds", "Beat handling time.",
                                      {"kind"}, {0.0001, 0.001, 0.01, 0.1, 1});
  for (const double seconds : {0.00005, 0.0004, 0.003, 0.2, 7.0})
    handling.with({"full"}).observe(seconds);
  handling.with({"delta"});
  registry.histogram("cascade_test_batch_rows", "Rows per commit.", {1, 10, 100}).observe(12);
  registry.gauge_callback("cascade_test_cache_age_seconds", "Age of the cache.",
                          [] { return std::numeric_limits<double>::infinity(); });
  registry.add(std::make_unique<ProcessMetrics>());

  const std::string text = registry.render();
  ASSERT_NE(text.find("process_resident_memory_bytes "), std::string::npos) << text;
  const CheckResult result = check(text);
  EXPECT_EQ(result.exit_code, 0) << result.output << "\non:\n" << text;
  EXPECT_EQ(result.output, "") << "on:\n" << text;
}

// The harness sees problems when there are some: a counter without _total
// (which the registry would refuse) and a line that does not parse.
TEST_F(MetricsPromtool, CheckMetricsReportsWhatTheRegistryRefuses) {
  const CheckResult lint = check("# HELP beats Beats.\n# TYPE beats counter\nbeats 1\n");
  EXPECT_NE(lint.exit_code, 0);
  EXPECT_NE(lint.output.find("_total"), std::string::npos) << lint.output;
  EXPECT_NE(check("beats{ 1\n").exit_code, 0);
}

}  // namespace
}  // namespace cascade::metrics
