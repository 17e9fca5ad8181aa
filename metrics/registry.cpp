#include "cascade/metrics/registry.hpp"

#include <stdexcept>
#include <utility>

#include "cascade/metrics/names.hpp"
#include "cascade/metrics/read_at_scrape.hpp"

namespace cascade::metrics {

template <class T>
Family<T>& Registry::add_family(std::string name, std::string help,
                                std::vector<std::string> label_names, typename T::Shape shape) {
  FamilyInfo info{std::move(name), std::move(help), T::kType, std::move(label_names)};
  if constexpr (T::kType == MetricType::kHistogram) Histogram::check_bounds(info.name, shape);
  auto family = std::make_unique<Family<T>>(std::move(info), std::move(shape));
  Family<T>& added = *family;
  add(std::move(family));
  return added;
}

Family<Counter>& Registry::counter(std::string name, std::string help,
                                   std::vector<std::string> label_names) {
  return add_family<Counter>(std::move(name), std::move(help), std::move(label_names), {});
}

Family<Gauge>& Registry::gauge(std::string name, std::string help,
                               std::vector<std::string> label_names) {
  return add_family<Gauge>(std::move(name), std::move(help), std::move(label_names), {});
}

Family<Histogram>& Registry::histogram(std::string name, std::string help,
                                       std::vector<std::string> label_names,
                                       std::vector<double> upper_bounds) {
  return add_family<Histogram>(std::move(name), std::move(help), std::move(label_names),
                               std::move(upper_bounds));
}

// A metric without labels is the one child of a family without label names:
// one way to store, validate and render both.
Counter& Registry::counter(std::string name, std::string help) {
  return counter(std::move(name), std::move(help), {}).with({});
}

Gauge& Registry::gauge(std::string name, std::string help) {
  return gauge(std::move(name), std::move(help), {}).with({});
}

Histogram& Registry::histogram(std::string name, std::string help,
                               std::vector<double> upper_bounds) {
  return histogram(std::move(name), std::move(help), {}, std::move(upper_bounds)).with({});
}

void Registry::counter_callback(std::string name, std::string help, std::function<double()> read) {
  add_callback({std::move(name), std::move(help), MetricType::kCounter}, std::move(read));
}

void Registry::gauge_callback(std::string name, std::string help, std::function<double()> read) {
  add_callback({std::move(name), std::move(help), MetricType::kGauge}, std::move(read));
}

void Registry::add_callback(FamilyInfo info, std::function<double()> read) {
  auto collector = std::make_unique<ReadAtScrape>();
  collector->add(std::move(info), std::move(read));
  add(std::move(collector));
}

void Registry::add(std::unique_ptr<Collector> collector) {
  const std::vector<FamilyInfo> families = collector->families();
  std::lock_guard lock(mutex_);
  // Everything is checked before anything is taken: a refused collector
  // leaves the registry as it was.
  std::set<std::string, std::less<>> taken;
  for (const auto& family : families) {
    check_family(family);
    if (names_.contains(family.name) || !taken.insert(family.name).second)
      throw std::invalid_argument("metric family '" + family.name + "' is registered twice");
  }
  names_.merge(taken);
  collectors_.push_back(std::move(collector));
}

std::string Registry::render() const {
  TextWriter out;
  std::lock_guard lock(mutex_);
  for (const auto& collector : collectors_)
    collector->collect(out);
  return out.take();
}

}  // namespace cascade::metrics
