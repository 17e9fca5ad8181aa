#pragma once
// A metric family with labels: one name, help and type, and one child metric
// per combination of label values, e.g. cascade_hub_beats_total{result="ok"}
// and {result="refused"}.
//
// Set-up, on the owning thread:   Counter& ok = beats.with({"ok"});
// Hot path, no lock, no lookup:   ok.inc();
// with() takes the family's mutex and searches the children, so it is for
// set-up (or for a label value met for the first time), never per update: keep
// the reference it returns, which stays valid for the family's life (the
// registry's). Children render in the order they were created.

#include <deque>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cascade/metrics/collector.hpp"
#include "cascade/metrics/family_info.hpp"
#include "cascade/metrics/text_writer.hpp"

namespace cascade::metrics {

// T: Counter, Gauge or Histogram.
template <class T>
class Family final : public Collector {
 public:
  // `shape` is what every child is made from (a histogram's bucket bounds).
  Family(FamilyInfo info, typename T::Shape shape)
      : info_(std::move(info)), shape_(std::move(shape)) {}

  // The child with these label values, one per label name in their order,
  // created on first use. Throws std::invalid_argument when the number of
  // values is not the number of label names.
  T& with(const std::vector<std::string>& label_values) {
    if (label_values.size() != info_.label_names.size())
      throw std::invalid_argument("metric family '" + info_.name + "' has " +
                                  std::to_string(info_.label_names.size()) + " labels, given " +
                                  std::to_string(label_values.size()) + " values");
    std::lock_guard lock(mutex_);
    for (auto& child : children_) {
      if (child.values == label_values) return child.metric;
    }
    // A deque never moves what it holds: the references handed out stay valid.
    return children_
        .emplace_back(label_values, label_pairs(info_.label_names, label_values), shape_)
        .metric;
  }

  std::vector<FamilyInfo> families() const override { return {info_}; }

  void collect(TextWriter& out) const override {
    out.family(info_);
    std::lock_guard lock(mutex_);
    for (const auto& child : children_)
      child.metric.write(out, child.labels);
  }

 private:
  struct Child {
    Child(std::vector<std::string> label_values, std::string pairs, const typename T::Shape& shape)
        : values(std::move(label_values)), labels(std::move(pairs)), metric(shape) {}
    std::vector<std::string> values;
    std::string labels;  // label_pairs() of the values, made once
    T metric;
  };

  const FamilyInfo info_;
  const typename T::Shape shape_;
  mutable std::mutex mutex_;  // guards children_ (the list, not the metrics' cells)
  std::deque<Child> children_;
};

}  // namespace cascade::metrics
