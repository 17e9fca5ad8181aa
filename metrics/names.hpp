#pragma once
// The rules a family must follow to be registered. A bad name is a
// programming error, so it is refused loudly at registration, where a test
// sees it, and never reaches a scrape that Prometheus would reject whole.

#include "cascade/metrics/family_info.hpp"

namespace cascade::metrics {

// Throws std::invalid_argument, naming the family and what is wrong, unless:
// - the name matches [a-zA-Z_:][a-zA-Z0-9_:]* and does not end in _bucket,
//   _sum or _count (a histogram's series would collide with it);
// - a counter's name ends in _total;
// - the help text is not empty (promtool flags a family without one);
// - each label name matches [a-zA-Z_][a-zA-Z0-9_]*, does not start with "__"
//   (reserved for Prometheus itself), appears once, and is not "le" in a
//   histogram (the bucket label).
void check_family(const FamilyInfo& family);

}  // namespace cascade::metrics
