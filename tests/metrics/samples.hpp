#pragma once
// Reading values back from exposition text, for tests that check rendered
// numbers rather than the whole text.

#include <cstdlib>
#include <optional>
#include <string>
#include <string_view>

namespace cascade::metrics::testing {

// The value of the sample whose series is written as `series` (the name and
// {labels}, exactly as rendered, e.g. "x_bucket{le=\"+Inf\"}"); nullopt when
// the text has no such sample. strtod reads NaN and +Inf/-Inf too.
inline std::optional<double> sample_value(std::string_view text, std::string_view series) {
  for (std::size_t line = 0; line < text.size();) {
    std::size_t end = text.find('\n', line);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view row = text.substr(line, end - line);
    if (row.size() > series.size() && row.starts_with(series) && row[series.size()] == ' ') {
      const std::string number(row.substr(series.size() + 1));
      char* parsed_end = nullptr;
      const double value = std::strtod(number.c_str(), &parsed_end);
      if (parsed_end == number.c_str() || *parsed_end != '\0') return std::nullopt;
      return value;
    }
    line = end + 1;
  }
  return std::nullopt;
}

}  // namespace cascade::metrics::testing
