// Families read from one sample per scrape (the hub's status, taken on its
// owning thread): one read per scrape, missing keys and missing samples left out.

#include "cascade/metrics/sampled_families.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cascade/metrics/registry.hpp"

namespace cascade::metrics {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

struct Source {
  int reads = 0;
  std::optional<SampledFamilies::Sample> next;
};

std::unique_ptr<SampledFamilies> families_of(Source& source) {
  auto sampled = std::make_unique<SampledFamilies>([&source] {
    ++source.reads;
    return source.next;
  });
  sampled->add({"cascade_test_nodes", "Nodes, by kind.", MetricType::kGauge, {"kind"}},
               {{{"agent"}, "agents"}, {{"hub"}, "hubs"}});
  sampled->add({"cascade_test_beats_total", "Beats.", MetricType::kCounter}, "beats");
  return sampled;
}

TEST(MetricsSampledFamilies, EveryFamilyOfAScrapeComesFromOneSample) {
  Source source;
  source.next = SampledFamilies::Sample{{"agents", 7}, {"hubs", 2}, {"beats", 1234}};
  Registry registry;
  registry.add(families_of(source));

  const auto text = registry.render();
  EXPECT_EQ(source.reads, 1);
  EXPECT_THAT(text, HasSubstr("cascade_test_nodes{kind=\"agent\"} 7\n"));
  EXPECT_THAT(text, HasSubstr("cascade_test_nodes{kind=\"hub\"} 2\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE cascade_test_beats_total counter\n"));
  EXPECT_THAT(text, HasSubstr("cascade_test_beats_total 1234\n"));

  source.next->at("beats") = 1300;
  EXPECT_THAT(registry.render(), HasSubstr("cascade_test_beats_total 1300\n"));
  EXPECT_EQ(source.reads, 2);
}

TEST(MetricsSampledFamilies, AKeyTheSampleLacksLeavesOnlyThatSeriesOut) {
  Source source;
  source.next = SampledFamilies::Sample{{"agents", 7}, {"beats", 3}};
  Registry registry;
  registry.add(families_of(source));

  const auto text = registry.render();
  EXPECT_THAT(text, HasSubstr("cascade_test_nodes{kind=\"agent\"} 7\n"));
  EXPECT_THAT(text, Not(HasSubstr("kind=\"hub\"")));
  EXPECT_THAT(text, HasSubstr("cascade_test_beats_total 3\n"));
}

TEST(MetricsSampledFamilies, NoSampleInTimeLeavesTheFamiliesOutOfThatScrape) {
  Source source;  // the owner did not answer: nullopt
  Registry registry;
  registry.add(families_of(source));
  registry.counter("cascade_test_other_total", "Other.").inc();

  const auto text = registry.render();
  EXPECT_THAT(text, Not(HasSubstr("cascade_test_nodes")));
  EXPECT_THAT(text, Not(HasSubstr("cascade_test_beats_total")));
  EXPECT_THAT(text, HasSubstr("cascade_test_other_total 1\n"));
}

TEST(MetricsSampledFamilies, ListsTheKeysItReadsAndRefusesMismatchedLabels) {
  Source source;
  auto sampled = families_of(source);
  EXPECT_THAT(sampled->keys(), UnorderedElementsAre("agents", "hubs", "beats"));
  EXPECT_THROW(
      sampled->add({"cascade_test_x", "X.", MetricType::kGauge, {"a", "b"}}, {{{"only one"}, "x"}}),
      std::invalid_argument);
}

}  // namespace
}  // namespace cascade::metrics
