#pragma once
// The process_* metrics every Prometheus client library exports, under the
// same names, so dashboards and alerts made for them work on cascade's
// processes too: CPU time, resident and virtual memory, open and maximum file
// descriptors, start time and threads. Read from procfs at each scrape, on
// the scraping thread; a value that cannot be read (no procfs) leaves its
// family out of that scrape instead of failing it.
//
//   registry.add(std::make_unique<metrics::ProcessMetrics>());

#include <filesystem>
#include <vector>

#include "cascade/metrics/collector.hpp"

namespace cascade::metrics {

struct ProcessMetricsConfig {
  // Where procfs is mounted; its self/ is this process. Tests point it at a
  // tree of files of their own.
  std::filesystem::path proc = "/proc";
  // The units of /proc/self/stat: CPU times and the start time are in clock
  // ticks, the resident size in pages. 0: this system's (sysconf).
  long ticks_per_second = 0;
  long page_bytes = 0;
};

class ProcessMetrics final : public Collector {
 public:
  explicit ProcessMetrics(ProcessMetricsConfig config = {});

  std::vector<FamilyInfo> families() const override;
  void collect(TextWriter& out) const override;

 private:
  ProcessMetricsConfig config_;
};

}  // namespace cascade::metrics
