// The registry's text for Prometheus, to the byte: families in registration
// order, children in creation order, escaping, numbers, histogram series; and
// the rules a family must follow to be registered.

#include "cascade/metrics/registry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <limits>
#include <memory>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "cascade/tests/metrics/samples.hpp"

namespace cascade::metrics {
namespace {

using ::testing::HasSubstr;
using testing::sample_value;
using ::testing::ThrowsMessage;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

std::string number(double value) {
  std::string text;
  append_number(text, value);
  return text;
}

TEST(MetricsRegistry, RendersGoldenTextOfCountersGaugesAndHistograms) {
  Registry registry;
  auto& beats =
      registry.counter("cascade_test_beats_total", "Beats handled, by result.", {"result"});
  Counter& ok = beats.with({"ok"});
  ok.inc(3);
  beats.with({"refused"}).inc();
  beats.with({"ok"}).inc();
  registry.counter("cascade_test_cpu_seconds_total", "CPU time spent, in seconds.").add(1.25);
  auto& instances =
      registry.gauge("cascade_test_instances", "Instances by state and\nreason, \\ included.",
                     {"state", "reason"});
  instances.with({"up", ""}).set(3);
  instances.with({"isolated", "said \"no\"\\\nthen left"}).set(-1.5);
  auto& handling = registry.histogram("cascade_test_beat_seconds", "Beat handling time.", {"kind"},
                                      {0.005, 0.01, 0.5});
  Histogram& full = handling.with({"full"});
  for (const double seconds : {0.0009765625, 0.0078125, 0.25, 3.0})
    full.observe(seconds);
  registry.histogram("cascade_test_batch_rows", "Rows per batch.", {1, 10}).observe(10);
  registry.gauge_callback("cascade_test_ratio", "Read at the scrape.", [] { return 0.1; });
  registry.counter("cascade_test_wrapped_total", "Past 2^53.")
      .inc(std::numeric_limits<std::uint64_t>::max());

  EXPECT_EQ(registry.render(), R"(# HELP cascade_test_beats_total Beats handled, by result.
# TYPE cascade_test_beats_total counter
cascade_test_beats_total{result="ok"} 4
cascade_test_beats_total{result="refused"} 1
# HELP cascade_test_cpu_seconds_total CPU time spent, in seconds.
# TYPE cascade_test_cpu_seconds_total counter
cascade_test_cpu_seconds_total 1.25
# HELP cascade_test_instances Instances by state and\nreason, \\ included.
# TYPE cascade_test_instances gauge
cascade_test_instances{state="up",reason=""} 3
cascade_test_instances{state="isolated",reason="said \"no\"\\\nthen left"} -1.5
# HELP cascade_test_beat_seconds Beat handling time.
# TYPE cascade_test_beat_seconds histogram
cascade_test_beat_seconds_bucket{kind="full",le="0.005"} 1
cascade_test_beat_seconds_bucket{kind="full",le="0.01"} 2
cascade_test_beat_seconds_bucket{kind="full",le="0.5"} 3
cascade_test_beat_seconds_bucket{kind="full",le="+Inf"} 4
cascade_test_beat_seconds_sum{kind="full"} 3.2587890625
cascade_test_beat_seconds_count{kind="full"} 4
# HELP cascade_test_batch_rows Rows per batch.
# TYPE cascade_test_batch_rows histogram
cascade_test_batch_rows_bucket{le="1"} 0
cascade_test_batch_rows_bucket{le="10"} 1
cascade_test_batch_rows_bucket{le="+Inf"} 1
cascade_test_batch_rows_sum 10
cascade_test_batch_rows_count 1
# HELP cascade_test_ratio Read at the scrape.
# TYPE cascade_test_ratio gauge
cascade_test_ratio 0.1
# HELP cascade_test_wrapped_total Past 2^53.
# TYPE cascade_test_wrapped_total counter
cascade_test_wrapped_total 18446744073709551615
)");
}

TEST(MetricsRegistry, FamilyWithoutChildrenRendersOnlyItsHeader) {
  Registry registry;
  registry.gauge("cascade_test_links", "Upstream links by state.", {"state"});
  EXPECT_EQ(registry.render(),
            "# HELP cascade_test_links Upstream links by state.\n"
            "# TYPE cascade_test_links gauge\n");
}

TEST(MetricsRegistry, WithGivesTheSameChildForTheSameValuesAndItNeverMoves) {
  Registry registry;
  auto& replies = registry.counter("cascade_test_replies_total", "Replies.", {"type", "tier"});
  Counter& first = replies.with({"delta", "1"});
  for (int i = 0; i < 1000; ++i)
    replies.with({"full", std::to_string(i)}).inc();
  EXPECT_EQ(&replies.with({"delta", "1"}), &first);
  first.inc(7);
  EXPECT_EQ(sample_value(registry.render(), R"(cascade_test_replies_total{type="delta",tier="1"})"),
            7);
}

TEST(MetricsRegistry, WithTheWrongNumberOfValuesThrows) {
  Registry registry;
  auto& replies = registry.counter("cascade_test_replies_total", "Replies.", {"type"});
  EXPECT_THAT([&] { replies.with({}); },
              ThrowsMessage<std::invalid_argument>(HasSubstr("cascade_test_replies_total")));
  EXPECT_THROW(replies.with({"a", "b"}), std::invalid_argument);
}

TEST(MetricsRegistry, CounterDropsNegativeAndNaNAmounts) {
  Counter counter;
  counter.add(0.5);
  counter.add(-3);
  counter.add(kNaN);
  counter.inc();
  EXPECT_EQ(counter.value(), 1.5);
}

TEST(MetricsRegistry, GaugeSetsAndAddsIntegersAndDoubles) {
  Gauge gauge;
  gauge.set(std::int64_t{1} << 53);
  gauge.dec();
  EXPECT_EQ(number(gauge.value()), "9007199254740991");
  gauge.set(0.5);
  gauge.add(0.25);
  gauge.inc();
  EXPECT_EQ(gauge.value(), 1.75);
}

TEST(MetricsRegistry, HistogramCountsAValueOnABoundInThatBucketAndNaNInInf) {
  Registry registry;
  Histogram& sizes = registry.histogram("cascade_test_sizes", "Sizes.", {1, 2});
  sizes.observe(1);
  sizes.observe(2);
  sizes.observe(kNaN);
  sizes.observe(-kInf);
  const std::string text = registry.render();
  EXPECT_EQ(sample_value(text, R"(cascade_test_sizes_bucket{le="1"})"), 2);  // -Inf and 1
  EXPECT_EQ(sample_value(text, R"(cascade_test_sizes_bucket{le="2"})"), 3);
  EXPECT_EQ(sample_value(text, R"(cascade_test_sizes_bucket{le="+Inf"})"), 4);
  EXPECT_THAT(text, HasSubstr("cascade_test_sizes_sum NaN\n"));
  EXPECT_EQ(sizes.count(), 4u);
}

TEST(MetricsRegistry, CallbacksAreReadAtEachRender) {
  Registry registry;
  double queued = 1;
  registry.gauge_callback("cascade_test_queued", "Queued.", [&queued] { return queued; });
  registry.counter_callback("cascade_test_sent_total", "Sent.", [] { return 12.0; });
  EXPECT_EQ(sample_value(registry.render(), "cascade_test_queued"), 1);
  queued = 5;
  EXPECT_EQ(sample_value(registry.render(), "cascade_test_queued"), 5);
  EXPECT_THAT(registry.render(), HasSubstr("# TYPE cascade_test_sent_total counter\n"
                                           "cascade_test_sent_total 12\n"));
}

TEST(MetricsText, NumbersLookAsPrometheusSpellsThem) {
  EXPECT_EQ(number(0), "0");
  EXPECT_EQ(number(42), "42");
  EXPECT_EQ(number(-7), "-7");
  EXPECT_EQ(number(0.1), "0.1");
  EXPECT_EQ(number(1e21), "1e+21");
  EXPECT_EQ(number(1e-7), "1e-07");
  EXPECT_EQ(number(kNaN), "NaN");
  EXPECT_EQ(number(kInf), "+Inf");
  EXPECT_EQ(number(-kInf), "-Inf");
  std::string text;
  append_number(text, std::uint64_t{18446744073709551615u});
  EXPECT_EQ(text, "18446744073709551615");
}

TEST(MetricsText, DoublesReadBackExactly) {
  std::mt19937_64 bits(14);  // fixed seed: the same doubles each run
  for (int i = 0; i < 10000; ++i) {
    double value = 0;
    do {
      const std::uint64_t word = bits();
      static_assert(sizeof word == sizeof value);
      std::memcpy(&value, &word, sizeof value);
    } while (!std::isfinite(value));
    const std::string text = number(value);
    ASSERT_EQ(std::strtod(text.c_str(), nullptr), value) << text;
  }
}

// --- the rules of names.hpp ---

void expect_refused(const std::function<void()>& registration, const std::string& named) {
  EXPECT_THAT(registration, ThrowsMessage<std::invalid_argument>(HasSubstr(named))) << named;
}

TEST(MetricsNames, BadMetricNamesAreRefusedNamingThem) {
  Registry registry;
  for (const std::string name :
       {"", "1up", "beats-total", "beats total", "caf\xc3\xa9", "cascade_test_latency_sum",
        "cascade_test_x_count", "cascade_test_le_bucket"})
    expect_refused([&] { registry.gauge(name, "Help."); }, "'" + name + "'");
  registry.gauge("cascade:test_ratio", "Colons are allowed (recording rules' names).");
  registry.gauge("_cascade_test", "A leading underscore is allowed.");
}

TEST(MetricsNames, BadLabelNamesAreRefusedNamingThem) {
  Registry registry;
  for (const std::string label : {"", "__reserved", "9lives", "a:b", "a-b"})
    expect_refused([&] { registry.gauge("cascade_test_g", "Help.", {label}); },
                   "label name '" + label + "'");
  expect_refused(
      [&] {
        registry.gauge("cascade_test_g", "Help.", {"state", "state"});
      },
      "'state' appears twice");
  expect_refused([&] { registry.histogram("cascade_test_h", "Help.", {"le"}, {1}); }, "'le'");
  registry.gauge("cascade_test_g", "A gauge may have a label le.", {"le", "_x"});
}

TEST(MetricsNames, CounterNameWithoutTotalIsRefused) {
  Registry registry;
  expect_refused([&] { registry.counter("cascade_test_beats", "Beats."); }, "_total");
  expect_refused([&] { registry.counter("cascade_test_beats", "Beats.", {"result"}); }, "_total");
  expect_refused(
      [&] { registry.counter_callback("cascade_test_sent", "Sent.", [] { return 1.0; }); },
      "cascade_test_sent");
}

TEST(MetricsNames, EmptyHelpIsRefused) {
  Registry registry;
  expect_refused([&] { registry.gauge("cascade_test_g", ""); }, "help");
}

TEST(MetricsNames, SameNameTwiceIsRefusedWhateverTheType) {
  Registry registry;
  registry.gauge("cascade_test_g", "Help.");
  expect_refused([&] { registry.gauge("cascade_test_g", "Help."); }, "registered twice");
  expect_refused([&] { registry.histogram("cascade_test_g", "Help.", {1}); }, "registered twice");
  expect_refused([&] { registry.gauge_callback("cascade_test_g", "Help.", [] { return 1.0; }); },
                 "'cascade_test_g'");
}

// A collector whose second family is bad: nothing of it may be registered.
class TwoFamilies final : public Collector {
 public:
  explicit TwoFamilies(std::string second) : second_(std::move(second)) {}
  std::vector<FamilyInfo> families() const override {
    return {{"cascade_test_first", "First.", MetricType::kGauge},
            {second_, "Second.", MetricType::kGauge}};
  }
  void collect(TextWriter&) const override {}

 private:
  std::string second_;
};

TEST(MetricsNames, RefusedCollectorLeavesTheRegistryAsItWas) {
  Registry registry;
  expect_refused([&] { registry.add(std::make_unique<TwoFamilies>("cascade_test_first")); },
                 "registered twice");
  expect_refused([&] { registry.add(std::make_unique<TwoFamilies>("bad name")); }, "'bad name'");
  registry.gauge("cascade_test_first", "Its name is still free.");
  EXPECT_EQ(registry.render(),
            "# HELP cascade_test_first Its name is still free.\n"
            "# TYPE cascade_test_first gauge\n"
            "cascade_test_first 0\n");
}

TEST(MetricsNames, BadHistogramBoundsAreRefused) {
  Registry registry;
  for (const auto& bounds :
       std::vector<std::vector<double>>{{}, {1, 1}, {2, 1}, {1, kInf}, {kNaN}, {-kInf, 0}})
    expect_refused([&] { registry.histogram("cascade_test_h", "Help.", bounds); },
                   "'cascade_test_h'");
  EXPECT_THROW(Histogram({0.5, 0.1}), std::invalid_argument);
  registry.histogram("cascade_test_h", "Negative bounds are fine.", {-1, 0, 0.5});
}

}  // namespace
}  // namespace cascade::metrics
