#pragma once
// Something that writes metric families into a scrape. The registry's own
// families are collectors; so are the metrics whose values live elsewhere and
// are read when Prometheus asks: process CPU and memory from /proc
// (process_metrics.hpp), a size another component keeps, a callback.
//
// Threads: collect() runs on the thread that renders the scrape, not on the
// thread that owns the values, so it may only read what is safe to read from
// there (atomics, files, its own state). It runs with the registry's lock
// held: it must not call back into the registry.

#include <vector>

#include "cascade/metrics/family_info.hpp"
#include "cascade/metrics/text_writer.hpp"

namespace cascade::metrics {

class Collector {
 public:
  virtual ~Collector() = default;

  // The families collect() writes, in the order it writes them. Read once,
  // at registration: the registry validates them and refuses a name that
  // another collector already writes.
  virtual std::vector<FamilyInfo> families() const = 0;

  // Writes the families (out.family(), then their samples). A family whose
  // value cannot be read now may be left out of this scrape.
  virtual void collect(TextWriter& out) const = 0;
};

}  // namespace cascade::metrics
