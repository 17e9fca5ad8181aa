#pragma once
// Families whose values come from one sample taken per scrape: a set of
// named numbers that another thread builds on request (the hub's status,
// which its owning thread assembles between two passes of its loop). One
// read per scrape means every family of the scrape shows the same moment,
// and the owner is asked once, not once per family.
//
//   SampledFamilies sampled([&server] { return server.sample(); });
//   sampled.add({"cascade_hub_nodes", "Nodes holding a lease, by kind.",
//                MetricType::kGauge, {"kind"}},
//               {{{"agent"}, "agent_nodes"}, {{"hub"}, "child_hubs"}});
//   registry.add(std::make_unique<SampledFamilies>(std::move(sampled)));
//
// A child whose key the sample lacks is left out of that scrape; when no
// sample comes at all (the owner did not answer in time), the families are.

#include <functional>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "cascade/metrics/collector.hpp"

namespace cascade::metrics {

class SampledFamilies final : public Collector {
 public:
  using Sample = std::unordered_map<std::string, double>;  // key -> value
  using Take = std::function<std::optional<Sample>()>;
  struct Child {
    std::vector<std::string> label_values;  // as many as the family's label names
    std::string key;                        // of the sample
  };

  explicit SampledFamilies(Take take) : take_(std::move(take)) {}

  // Throws std::invalid_argument when a child's label values do not match
  // the family's label names in number.
  void add(FamilyInfo info, std::vector<Child> children);
  void add(FamilyInfo info, std::string key) { add(std::move(info), {Child{{}, std::move(key)}}); }

  // Every key some child reads (a check that a sample's keys are all shown).
  std::vector<std::string> keys() const;

  std::vector<FamilyInfo> families() const override;
  void collect(TextWriter& out) const override;

 private:
  struct Family {
    FamilyInfo info;
    std::vector<std::pair<std::string, std::string>> children;  // label pairs, key
  };
  Take take_;
  std::vector<Family> families_;
};

}  // namespace cascade::metrics
