#include "cascade/metrics/sampled_families.hpp"

#include <stdexcept>

namespace cascade::metrics {

void SampledFamilies::add(FamilyInfo info, std::vector<Child> children) {
  Family family{std::move(info), {}};
  for (auto& child : children)
    family.children.emplace_back(child_label_pairs(family.info, child.label_values),
                                 std::move(child.key));
  families_.push_back(std::move(family));
}

std::vector<std::string> SampledFamilies::keys() const {
  std::vector<std::string> out;
  for (const auto& family : families_)
    for (const auto& [labels, key] : family.children)
      out.push_back(key);
  return out;
}

std::vector<FamilyInfo> SampledFamilies::families() const {
  std::vector<FamilyInfo> out;
  out.reserve(families_.size());
  for (const auto& family : families_)
    out.push_back(family.info);
  return out;
}

void SampledFamilies::collect(TextWriter& out) const {
  const auto sample = take_();
  if (!sample) return;
  for (const auto& family : families_) {
    out.family(family.info);
    for (const auto& [labels, key] : family.children)
      if (auto it = sample->find(key); it != sample->end()) out.sample("", labels, it->second);
  }
}

}  // namespace cascade::metrics
