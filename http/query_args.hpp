#pragma once
// Arguments every cascade HTTP API reads from paths and query strings,
// parsed with errors that say what is wrong (they become 400 responses):
// service names with ?group=, flags, counts.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "cascade/common/protocol.hpp"

namespace cascade::http {

template <typename T>
using Parsed = std::variant<T, std::string>;  // the value, or what is wrong

template <typename T>
const std::string* error_of(const Parsed<T>& parsed) {
  return std::get_if<std::string>(&parsed);
}

// A whole decimal number without sign; nullopt for anything else.
std::optional<std::uint64_t> parse_u64(std::string_view text);

// NAME from the path and ?group= (default "default"), checked as a hub would.
Parsed<proto::ServiceKey> service_key_of(std::string_view name,
                                         std::optional<std::string_view> group);

// A flag argument: "?all", "?all=1" or "?all=true" are on; "0" and "false" off.
Parsed<bool> parse_flag(std::optional<std::string_view> text, std::string_view name);

// A count argument from 1 to `max`; `fallback` when absent.
Parsed<std::uint64_t> parse_count(std::optional<std::string_view> text, std::string_view name,
                                  std::uint64_t fallback, std::uint64_t max);

}  // namespace cascade::http
