#include "cascade/metrics/text_writer.hpp"

#include <cassert>
#include <charconv>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <utility>

namespace cascade::metrics {

namespace {

// A backslash and a line break would corrupt the line in help text and label
// values; in a label value a quote would also end it early.
void append_escaped(std::string& out, std::string_view text, bool in_quotes) {
  for (const char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '"' && in_quotes) {
      out += "\\\"";
    } else {
      out += c;
    }
  }
}

}  // namespace

std::string label_pairs(std::span<const std::string> names, std::span<const std::string> values) {
  assert(names.size() == values.size());
  std::string pairs;
  for (std::size_t i = 0; i < names.size() && i < values.size(); ++i) {
    if (i > 0) pairs += ',';
    pairs.append(names[i]).append("=\"");
    append_escaped(pairs, values[i], true);
    pairs += '"';
  }
  return pairs;
}

std::string child_label_pairs(const FamilyInfo& info, std::span<const std::string> values) {
  if (values.size() != info.label_names.size())
    throw std::invalid_argument(info.name + ": a child has " + std::to_string(values.size()) +
                                " label values for " + std::to_string(info.label_names.size()) +
                                " names");
  return label_pairs(info.label_names, values);
}

void append_number(std::string& out, double value) {
  if (std::isnan(value)) {
    out += "NaN";
  } else if (std::isinf(value)) {
    out += value > 0 ? "+Inf" : "-Inf";
  } else {
    // Shortest round-trip form: a whole number has no ".0", and what
    // Prometheus parses back is exactly the double written.
    char text[std::numeric_limits<double>::max_digits10 + 16];
    const auto written = std::to_chars(text, text + sizeof text, value);
    out.append(text, written.ptr);
  }
}

void append_number(std::string& out, std::uint64_t value) {
  char text[std::numeric_limits<std::uint64_t>::digits10 + 2];
  const auto written = std::to_chars(text, text + sizeof text, value);
  out.append(text, written.ptr);
}

void TextWriter::family(const FamilyInfo& info) {
  family_ = info.name;
  out_.append("# HELP ").append(info.name).append(" ");
  append_escaped(out_, info.help, false);
  out_.append("\n# TYPE ").append(info.name).append(" ").append(type_name(info.type)).append("\n");
}

void TextWriter::begin_sample(std::string_view suffix, std::string_view labels) {
  out_.append(family_).append(suffix);
  if (!labels.empty()) out_.append("{").append(labels).append("}");
  out_ += ' ';
}

void TextWriter::sample(std::string_view suffix, std::string_view labels, double value) {
  begin_sample(suffix, labels);
  append_number(out_, value);
  out_ += '\n';
}

void TextWriter::sample(std::string_view suffix, std::string_view labels, std::uint64_t value) {
  begin_sample(suffix, labels);
  append_number(out_, value);
  out_ += '\n';
}

void TextWriter::bucket(std::string_view labels, double upper_bound,
                        std::uint64_t cumulative_count) {
  out_.append(family_).append("_bucket{").append(labels);
  if (!labels.empty()) out_ += ',';
  out_.append("le=\"");
  append_number(out_, upper_bound);
  out_.append("\"} ");
  append_number(out_, cumulative_count);
  out_ += '\n';
}

std::string TextWriter::take() {
  family_.clear();
  return std::exchange(out_, {});
}

}  // namespace cascade::metrics
