#include "cascade/metrics/read_at_scrape.hpp"

#include <cmath>
#include <stdexcept>

namespace cascade::metrics {

void ReadAtScrape::add(FamilyInfo info, std::vector<Child> children) {
  Family family{std::move(info), {}};
  for (auto& child : children)
    family.children.emplace_back(child_label_pairs(family.info, child.label_values),
                                 std::move(child.read));
  families_.push_back(std::move(family));
}

std::vector<FamilyInfo> ReadAtScrape::families() const {
  std::vector<FamilyInfo> out;
  out.reserve(families_.size());
  for (const auto& family : families_)
    out.push_back(family.info);
  return out;
}

void ReadAtScrape::collect(TextWriter& out) const {
  for (const auto& family : families_) {
    out.family(family.info);
    for (const auto& [labels, read] : family.children) {
      const double value = read();
      if (!std::isnan(value)) out.sample("", labels, value);
    }
  }
}

}  // namespace cascade::metrics
