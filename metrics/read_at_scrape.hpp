#pragma once
// Families whose values another component keeps and counts already (a
// server's atomics, a client's status): each child is a function that reads
// its value when Prometheus scrapes, on the scraping thread. Nothing changes
// on the owner's path; the functions read only what is safe to read from
// another thread.
//
//   auto read = std::make_unique<metrics::ReadAtScrape>();
//   read->add({"cascade_agent_http_responses_total", "HTTP answers, by status class.",
//              metrics::MetricType::kCounter, {"class"}},
//             {{{"2xx"}, [&c] { return double(c.responses_2xx.load()); }}, ...});
//   registry.add(std::move(read));   // validated there, with every family added
//
// A child whose function returns NaN is left out of that scrape (a value not
// known yet, e.g. the age of a reply that never came).

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cascade/metrics/collector.hpp"

namespace cascade::metrics {

class ReadAtScrape final : public Collector {
 public:
  using Read = std::function<double()>;
  struct Child {
    std::vector<std::string> label_values;  // as many as the family's label names
    Read read;
  };

  // Throws std::invalid_argument when a child's label values do not match
  // the family's label names in number.
  void add(FamilyInfo info, std::vector<Child> children);
  // A family without labels: one value.
  void add(FamilyInfo info, Read read) { add(std::move(info), {Child{{}, std::move(read)}}); }

  std::vector<FamilyInfo> families() const override;
  void collect(TextWriter& out) const override;

 private:
  struct Family {
    FamilyInfo info;
    std::vector<std::pair<std::string, Read>> children;  // label pairs, read
  };
  std::vector<Family> families_;
};

}  // namespace cascade::metrics
