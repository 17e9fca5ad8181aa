#pragma once
// The Prometheus text exposition format, version 0.0.4: the text a scrape of
// /metrics answers. One TextWriter makes one scrape's text; each collector of
// the registry appends its families to it in turn:
//   # HELP cascade_hub_beats_total Beats handled, by result.
//   # TYPE cascade_hub_beats_total counter
//   cascade_hub_beats_total{result="ok"} 1027
// Escaping, the spelling of numbers and the layout of a histogram's series
// live here once, so no collector can get them wrong. Names are not checked
// here: the registry validated them at registration (names.hpp).
// Thread-safety: none; a writer belongs to the render that made it.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cascade/metrics/family_info.hpp"

namespace cascade::metrics {

// The Content-Type of the text, for the HTTP answer to a scrape.
inline constexpr std::string_view kTextContentType = "text/plain; version=0.0.4; charset=utf-8";

// The label pairs of one child as they stand between the braces of its
// samples, values escaped (\\, \", \n):  result="ok",kind="say \"hi\""
// "" without labels. A child makes its own once, when it is created, so a
// scrape copies them instead of escaping again. `names` and `values` have the
// same size.
std::string label_pairs(std::span<const std::string> names, std::span<const std::string> values);
// label_pairs() of a child of `info`. Throws std::invalid_argument, naming
// the family, unless there is one value per label name.
std::string child_label_pairs(const FamilyInfo& info, std::span<const std::string> values);

// Integers as integers ("42", also for a double holding one), other doubles
// in the shortest text that reads back as the same double ("0.1", "1e-07"),
// and "NaN", "+Inf", "-Inf" as Prometheus spells them.
void append_number(std::string& out, double value);
void append_number(std::string& out, std::uint64_t value);

class TextWriter {
 public:
  // Starts a family: its # HELP and # TYPE lines (help escaped: \\, \n).
  // The samples written next are its own.
  void family(const FamilyInfo& info);

  // One sample of the current family: NAME<suffix>{<labels>} VALUE, where
  // suffix is "" or a histogram's "_sum" / "_count" and labels come from
  // label_pairs().
  void sample(std::string_view suffix, std::string_view labels, double value);
  void sample(std::string_view suffix, std::string_view labels, std::uint64_t value);

  // One bucket of the current histogram: NAME_bucket{<labels>,le="BOUND"} COUNT,
  // the count cumulative (observations <= BOUND); BOUND +Inf for the last.
  void bucket(std::string_view labels, double upper_bound, std::uint64_t cumulative_count);

  // The text written so far; the writer is empty after.
  std::string take();

 private:
  void begin_sample(std::string_view suffix, std::string_view labels);

  std::string out_;
  std::string family_;  // the name of the family the samples belong to
};

}  // namespace cascade::metrics
