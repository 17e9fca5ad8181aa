#include "cascade/metrics/names.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

namespace cascade::metrics {

namespace {

bool is_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

// [a-zA-Z_:][a-zA-Z0-9_:]* for metric names; label names have no ':'.
bool is_valid_name(std::string_view name, bool colon_allowed) {
  if (name.empty() || is_digit(name.front())) return false;
  return std::all_of(name.begin(), name.end(), [colon_allowed](char c) {
    return is_letter(c) || is_digit(c) || (colon_allowed && c == ':');
  });
}

[[noreturn]] void refuse(const FamilyInfo& family, const std::string& what) {
  throw std::invalid_argument("metric family '" + family.name + "': " + what);
}

void check_label_names(const FamilyInfo& family) {
  const auto& names = family.label_names;
  for (auto it = names.begin(); it != names.end(); ++it) {
    if (!is_valid_name(*it, false))
      refuse(family, "label name '" + *it + "' does not match [a-zA-Z_][a-zA-Z0-9_]*");
    if (it->starts_with("__"))
      refuse(family, "label name '" + *it + "' starts with '__', reserved for Prometheus");
    if (std::find(names.begin(), it, *it) != it)
      refuse(family, "label name '" + *it + "' appears twice");
    if (family.type == MetricType::kHistogram && *it == "le")
      refuse(family, "label name 'le' is the bucket label of a histogram");
  }
}

}  // namespace

void check_family(const FamilyInfo& family) {
  const std::string_view name = family.name;
  if (!is_valid_name(name, true))
    refuse(family, "the name does not match [a-zA-Z_:][a-zA-Z0-9_:]*");
  for (const std::string_view suffix : {"_bucket", "_sum", "_count"}) {
    if (name.ends_with(suffix))
      refuse(family, "the name ends in " + std::string(suffix) + ", a suffix of histogram series");
  }
  if (family.type == MetricType::kCounter && !name.ends_with("_total"))
    refuse(family, "a counter's name must end in _total");
  if (family.help.empty()) refuse(family, "the help text is empty");
  check_label_names(family);
}

}  // namespace cascade::metrics
