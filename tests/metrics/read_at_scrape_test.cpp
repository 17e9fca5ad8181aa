// Families read at scrape time from values another component keeps.

#include "cascade/metrics/read_at_scrape.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <limits>

#include "cascade/metrics/registry.hpp"

namespace cascade::metrics {
namespace {

using ::testing::HasSubstr;

TEST(MetricsReadAtScrape, ChildrenAreReadAtEachScrapeAndUnknownValuesLeftOut) {
  std::atomic<std::uint64_t> ok{3}, bad{0};
  double age = std::numeric_limits<double>::quiet_NaN();
  auto read = std::make_unique<ReadAtScrape>();
  read->add({"cascade_test_answers_total", "Answers, by result.", MetricType::kCounter, {"result"}},
            {{{"ok"}, [&] { return static_cast<double>(ok.load()); }},
             {{"bad"}, [&] { return static_cast<double>(bad.load()); }}});
  read->add({"cascade_test_reply_age_seconds", "Since the last reply.", MetricType::kGauge},
            [&] { return age; });
  Registry registry;
  registry.add(std::move(read));

  const auto first = registry.render();
  EXPECT_THAT(first, HasSubstr("cascade_test_answers_total{result=\"ok\"} 3\n"));
  EXPECT_THAT(first, HasSubstr("cascade_test_answers_total{result=\"bad\"} 0\n"));
  EXPECT_THAT(first, HasSubstr("# TYPE cascade_test_reply_age_seconds gauge\n"));
  EXPECT_EQ(first.find("\ncascade_test_reply_age_seconds "), std::string::npos) << first;

  ok = 5;
  age = 1.5;
  const auto second = registry.render();
  EXPECT_THAT(second, HasSubstr("cascade_test_answers_total{result=\"ok\"} 5\n"));
  EXPECT_THAT(second, HasSubstr("cascade_test_reply_age_seconds 1.5\n"));
}

TEST(MetricsReadAtScrape, LabelValuesMustMatchTheLabelNamesAndNamesAreChecked) {
  ReadAtScrape read;
  EXPECT_THROW(read.add({"cascade_test_x_total", "X.", MetricType::kCounter, {"a", "b"}},
                        {{{"only-one"}, [] { return 1.0; }}}),
               std::invalid_argument);
  auto bad = std::make_unique<ReadAtScrape>();
  bad->add({"cascade_test_x", "A counter without _total.", MetricType::kCounter},
           [] { return 1.0; });
  Registry registry;
  EXPECT_THROW(registry.add(std::move(bad)), std::invalid_argument);
}

// What a component hands over in one go, e.g. a client's stats under its lock.
struct Taken {
  std::uint64_t beats = 0;
  std::uint64_t misses = 0;
  double lease_seconds = std::numeric_limits<double>::quiet_NaN();
};

TEST(MetricsReadFromSnapshot, OneSnapshotPerScrapeFeedsEveryFamily) {
  int taken = 0;
  Taken now{10, 1};
  auto read = std::make_unique<ReadFromSnapshot<Taken>>([&] {
    ++taken;
    return now;
  });
  read->add({"cascade_test_beats_total", "Beats, by result.", MetricType::kCounter, {"result"}},
            {{{"sent"}, [](const Taken& t) { return static_cast<double>(t.beats); }},
             {{"missed"}, [](const Taken& t) { return static_cast<double>(t.misses); }}});
  read->add({"cascade_test_lease_seconds", "The lease.", MetricType::kGauge},
            [](const Taken& t) { return t.lease_seconds; });
  Registry registry;
  registry.add(std::move(read));

  const auto first = registry.render();
  EXPECT_EQ(taken, 1) << "three samples, one snapshot";
  EXPECT_THAT(first, HasSubstr("cascade_test_beats_total{result=\"sent\"} 10\n"));
  EXPECT_THAT(first, HasSubstr("cascade_test_beats_total{result=\"missed\"} 1\n"));
  EXPECT_EQ(first.find("\ncascade_test_lease_seconds "), std::string::npos) << "NaN: left out";

  now = {12, 1, 6};
  const auto second = registry.render();
  EXPECT_EQ(taken, 2);
  EXPECT_THAT(second, HasSubstr("cascade_test_beats_total{result=\"sent\"} 12\n"));
  EXPECT_THAT(second, HasSubstr("cascade_test_lease_seconds 6\n"));
}

}  // namespace
}  // namespace cascade::metrics
