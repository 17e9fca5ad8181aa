// Two threads update the same metrics while a third renders, as the owning
// thread and the scraping thread will: every update counts, a scrape never
// sees a torn value, counters never go back, and a histogram's series agree
// with each other. Run under ThreadSanitizer too (no data race may be
// reported: every cell is an atomic).

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <string>
#include <thread>

#include "cascade/metrics/registry.hpp"
#include "cascade/tests/metrics/samples.hpp"

namespace cascade::metrics {
namespace {

using testing::sample_value;

constexpr int kUpdatesPerThread = 100'000;
// Each writer sets the gauge to its own value; a torn write would show neither.
constexpr double kFlipA = 1.5;
constexpr double kFlipB = -2.25e300;

struct Metrics {
  explicit Metrics(Registry& registry)
      : events(registry.counter("cascade_test_events_total", "Events.")),
        busy(registry.counter("cascade_test_busy_seconds_total", "Busy time.")),
        level(registry.gauge("cascade_test_level", "Level.")),
        flip(registry.gauge("cascade_test_flip", "Either writer's value.")),
        latency(registry.histogram("cascade_test_latency_seconds", "Latency.", {0.25, 0.5})) {}
  Counter& events;
  Counter& busy;
  Gauge& level;
  Gauge& flip;
  Histogram& latency;
};

void write(Metrics& metrics, double flip_value) {
  for (int i = 0; i < kUpdatesPerThread; ++i) {
    metrics.events.inc();
    metrics.busy.add(0.25);
    metrics.level.add(1);
    metrics.flip.set(flip_value);
    metrics.latency.observe(i % 2 == 0 ? 0.25 : 0.75);
  }
}

double value(const std::string& text, const std::string& series) {
  const std::optional<double> found = sample_value(text, series);
  EXPECT_TRUE(found) << series << " missing from:\n" << text;
  return found.value_or(-1);
}

// What any one scrape, taken while the writers run, must satisfy.
void check_consistent(const std::string& text, double& last_events) {
  const double events = value(text, "cascade_test_events_total");
  EXPECT_GE(events, last_events);
  EXPECT_LE(events, 2.0 * kUpdatesPerThread);
  last_events = events;
  const double flip = value(text, "cascade_test_flip");
  EXPECT_TRUE(flip == 0 || flip == kFlipA || flip == kFlipB) << flip;
  const double le_quarter = value(text, R"(cascade_test_latency_seconds_bucket{le="0.25"})");
  const double le_half = value(text, R"(cascade_test_latency_seconds_bucket{le="0.5"})");
  const double le_inf = value(text, R"(cascade_test_latency_seconds_bucket{le="+Inf"})");
  EXPECT_LE(le_quarter, le_half);
  EXPECT_LE(le_half, le_inf);
  EXPECT_EQ(le_inf, value(text, "cascade_test_latency_seconds_count"));
}

TEST(MetricsConcurrency, TwoWritersAndARendererCountEveryUpdateWithoutTears) {
  Registry registry;
  Metrics metrics(registry);
  std::atomic<int> writing{2};
  const auto writer = [&](double flip_value) {
    write(metrics, flip_value);
    writing.fetch_sub(1);
  };
  std::thread a(writer, kFlipA);
  std::thread b(writer, kFlipB);
  int renders = 0;
  double last_events = 0;
  do {
    check_consistent(registry.render(), last_events);
    ++renders;
  } while (writing.load() > 0 && !::testing::Test::HasFailure());
  a.join();
  b.join();

  const std::string text = registry.render();
  constexpr double kAll = 2.0 * kUpdatesPerThread;
  EXPECT_EQ(value(text, "cascade_test_events_total"), kAll);
  EXPECT_EQ(value(text, "cascade_test_busy_seconds_total"), kAll * 0.25);
  EXPECT_EQ(value(text, "cascade_test_level"), kAll);
  EXPECT_EQ(value(text, R"(cascade_test_latency_seconds_bucket{le="0.25"})"), kAll / 2);
  EXPECT_EQ(value(text, R"(cascade_test_latency_seconds_bucket{le="0.5"})"), kAll / 2);
  EXPECT_EQ(value(text, "cascade_test_latency_seconds_count"), kAll);
  EXPECT_EQ(value(text, "cascade_test_latency_seconds_sum"), kAll / 2 * (0.25 + 0.75));
  RecordProperty("renders", renders);
}

}  // namespace
}  // namespace cascade::metrics
