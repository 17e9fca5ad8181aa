#include "cascade/agent/api/query_args.hpp"

#include <cctype>
#include <charconv>
#include <cmath>

namespace cascade::agent::api {

using http::parse_u64;

Parsed<std::optional<std::uint64_t>> parse_index(std::optional<std::string_view> text) {
  if (!text) return std::optional<std::uint64_t>{};
  const auto value = parse_u64(*text);
  if (!value) return "index must be a version number (got '" + std::string(*text) + "')";
  return std::optional<std::uint64_t>{*value};
}

Parsed<Duration> parse_wait(std::optional<std::string_view> text, WaitLimits limits) {
  if (!text) return limits.fallback;
  struct Unit {
    std::string_view suffix;
    std::int64_t ms;
  };
  // "ms" before "m" and "s": the longest suffix that matches decides.
  constexpr Unit kUnits[] = {{"ms", 1}, {"s", 1000}, {"m", 60'000}, {"h", 3'600'000}};
  std::string_view number = *text;
  std::int64_t unit_ms = 1000;
  for (const auto& unit : kUnits) {
    if (text->ends_with(unit.suffix)) {
      number = text->substr(0, text->size() - unit.suffix.size());
      unit_ms = unit.ms;
      break;
    }
  }
  const auto value = parse_u64(number);
  if (!value)
    return "wait must be a duration such as 30s, 5m or 250ms (got '" + std::string(*text) + "')";
  const auto longest = static_cast<std::uint64_t>(limits.longest.count());
  if (*value >= longest / static_cast<std::uint64_t>(unit_ms)) return limits.longest;
  return Duration{static_cast<std::int64_t>(*value) * unit_ms};
}

Parsed<BlockingArgs> parse_blocking(std::optional<std::string_view> index,
                                    std::optional<std::string_view> wait) {
  auto held = parse_index(index);
  if (auto* error = error_of(held)) return *error;
  auto waiting = parse_wait(wait);
  if (auto* error = error_of(waiting)) return *error;
  return BlockingArgs{std::get<std::optional<std::uint64_t>>(held), std::get<Duration>(waiting)};
}

std::optional<Duration> parse_go_duration(std::string_view text) {
  struct Unit {
    std::string_view suffix;
    double ms;
  };
  // Go's units, micro spelt three ways. The longest that matches decides: "ms" is not "m", "s".
  constexpr Unit kUnits[] = {{"ns", 1e-6}, {"us", 1e-3}, {"\u00b5s", 1e-3}, {"\u03bcs", 1e-3},
                             {"ms", 1},    {"s", 1000},  {"m", 60'000},     {"h", 3'600'000}};
  if (text == "0") return Duration{0};
  if (text.empty()) return std::nullopt;
  double total_ms = 0;
  while (!text.empty()) {
    std::size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.'))
      ++digits;
    if (digits == 0) return std::nullopt;
    double value = 0;
    const auto [end, error] = std::from_chars(text.data(), text.data() + digits, value);
    if (error != std::errc() || end != text.data() + digits) return std::nullopt;
    text.remove_prefix(digits);
    const Unit* unit = nullptr;
    for (const auto& u : kUnits)
      if (text.starts_with(u.suffix) && (unit == nullptr || u.suffix.size() > unit->suffix.size()))
        unit = &u;
    if (unit == nullptr) return std::nullopt;
    text.remove_prefix(unit->suffix.size());
    total_ms += value * unit->ms;
  }
  // Longer than any TTL means anything: refused rather than overflowed.
  if (total_ms > 1e12) return std::nullopt;
  return Duration{static_cast<std::int64_t>(std::ceil(total_ms))};
}

}  // namespace cascade::agent::api
