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
#include <optional>
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

// Families whose values all come from one snapshot of another component's
// state, taken once per scrape: a client's stats read under its lock once,
// not once per family, and every family of the scrape from the same moment.
//
//   auto read = std::make_unique<metrics::ReadFromSnapshot<ClientStats>>(
//       [&client] { return client.stats(); });
//   read->add({"cascade_agent_hub_failovers_total", "Moves to another hub.",
//              metrics::MetricType::kCounter},
//             [](const ClientStats& s) { return double(s.status.failovers); });
//   registry.add(std::move(read));
//
// `take` runs on the scraping thread, at the start of each collect(). A read
// returning NaN leaves its sample out, as in ReadAtScrape. collect() calls
// must not overlap (a registry renders under its lock): the snapshot belongs
// to the scrape in progress.
template <class Snapshot>
class ReadFromSnapshot final : public Collector {
 public:
  using Take = std::function<Snapshot()>;
  using Read = std::function<double(const Snapshot&)>;
  struct Child {
    std::vector<std::string> label_values;  // as many as the family's label names
    Read read;
  };

  explicit ReadFromSnapshot(Take take) : take_(std::move(take)) {}
  // The children's reads refer to this object's snapshot: it stays where it is.
  ReadFromSnapshot(const ReadFromSnapshot&) = delete;
  ReadFromSnapshot& operator=(const ReadFromSnapshot&) = delete;

  // Throws as ReadAtScrape::add() does.
  void add(FamilyInfo info, std::vector<Child> children) {
    std::vector<ReadAtScrape::Child> reads;
    reads.reserve(children.size());
    for (auto& child : children)
      reads.push_back({std::move(child.label_values),
                       [this, read = std::move(child.read)] { return read(*snapshot_); }});
    reads_.add(std::move(info), std::move(reads));
  }
  void add(FamilyInfo info, Read read) { add(std::move(info), {Child{{}, std::move(read)}}); }

  std::vector<FamilyInfo> families() const override { return reads_.families(); }
  void collect(TextWriter& out) const override {
    snapshot_ = take_();
    reads_.collect(out);
  }

 private:
  Take take_;
  mutable std::optional<Snapshot> snapshot_;  // the scrape in progress's
  ReadAtScrape reads_;
};

}  // namespace cascade::metrics
