#pragma once
// What a metric family is, apart from its samples: the name, help text, type
// and label names that the exposition's # HELP and # TYPE lines and every
// sample's labels come from. Each family of a registry is described by one of
// these; the registry validates it once, at registration (names.hpp).
//
// Names say their unit, in the base unit, as a suffix: _seconds, _bytes, and
// _total for counters (enforced for counters; units are left to the author):
//   cascade_hub_beat_handling_seconds, process_resident_memory_bytes

#include <string>
#include <string_view>
#include <vector>

namespace cascade::metrics {

enum class MetricType { kCounter, kGauge, kHistogram };

// "counter", "gauge", "histogram": as the # TYPE line spells it.
constexpr std::string_view type_name(MetricType type) {
  switch (type) {
    case MetricType::kCounter:
      return "counter";
    case MetricType::kGauge:
      return "gauge";
    case MetricType::kHistogram:
      return "histogram";
  }
  return "untyped";
}

struct FamilyInfo {
  std::string name;
  std::string help;  // one line in spirit; a line break is escaped on output
  MetricType type = MetricType::kGauge;
  // Low-cardinality dimensions only (a result, a kind, a state): every
  // combination of values is a series Prometheus keeps, and a child here.
  std::vector<std::string> label_names{};
};

}  // namespace cascade::metrics
