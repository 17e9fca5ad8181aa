#pragma once
// The metrics of one process, rendered for Prometheus on each scrape.
//
// Two threads meet here. The owning thread (the hub's, the agent's) registers
// families at set-up, keeps references to their metrics and updates them on
// its hot path with relaxed atomics: no lock, no allocation, no lookup. The
// thread that answers /metrics calls render(), which reads every cell without
// stopping the updates; callbacks and collectors are evaluated then, on that
// thread.
//
//   metrics::Registry registry;
//   auto& beats = registry.counter("cascade_hub_beats_total", "Beats handled, by result.",
//                                  {"result"});
//   metrics::Counter& beats_ok = beats.with({"ok"});           // at set-up
//   metrics::Histogram& handling = registry.histogram(
//       "cascade_hub_beat_handling_seconds", "Time to handle a beat.", {0.0001, 0.001, 0.01, 0.1});
//   beats_ok.inc();  handling.observe(seconds);                // per beat
//
// Names: see family_info.hpp (units as suffixes) and names.hpp (the rules).
// A bad name, a name registered twice or bad bucket bounds throw
// std::invalid_argument: programming errors, met by the first test that
// builds the registry. Every reference returned stays valid for the
// registry's life. Thread-safety: every member may be called from any thread.

#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "cascade/metrics/collector.hpp"
#include "cascade/metrics/counter.hpp"
#include "cascade/metrics/family.hpp"
#include "cascade/metrics/gauge.hpp"
#include "cascade/metrics/histogram.hpp"

namespace cascade::metrics {

class Registry {
 public:
  Registry() = default;
  Registry(const Registry&) = delete;
  Registry& operator=(const Registry&) = delete;

  // Families with labels: children made with with().
  Family<Counter>& counter(std::string name, std::string help,
                           std::vector<std::string> label_names);
  Family<Gauge>& gauge(std::string name, std::string help, std::vector<std::string> label_names);
  Family<Histogram>& histogram(std::string name, std::string help,
                               std::vector<std::string> label_names,
                               std::vector<double> upper_bounds);

  // Metrics without labels.
  Counter& counter(std::string name, std::string help);
  Gauge& gauge(std::string name, std::string help);
  Histogram& histogram(std::string name, std::string help, std::vector<double> upper_bounds);

  // Metrics without labels whose value `read` returns at each scrape, on the
  // scraping thread (so it reads only what is safe to read from there). For a
  // counter, `read` must never go down. NaN (not known yet) leaves the sample
  // out of that scrape (read_at_scrape.hpp).
  void counter_callback(std::string name, std::string help, std::function<double()> read);
  void gauge_callback(std::string name, std::string help, std::function<double()> read);

  // Any other collector (process_metrics.hpp), rendered after those
  // registered before it. Throws as the others do for its families.
  void add(std::unique_ptr<Collector> collector);

  // The text exposition format (0.0.4) of every family, in registration
  // order. Served with Content-Type kTextContentType.
  std::string render() const;

 private:
  void add_callback(FamilyInfo info, std::function<double()> read);
  template <class T>
  Family<T>& add_family(std::string name, std::string help, std::vector<std::string> label_names,
                        typename T::Shape shape);

  mutable std::mutex mutex_;  // guards the lists, not the metrics' cells
  std::vector<std::unique_ptr<Collector>> collectors_;
  std::set<std::string, std::less<>> names_;  // of every family registered
};

}  // namespace cascade::metrics
