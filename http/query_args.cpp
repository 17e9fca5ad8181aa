#include "cascade/http/query_args.hpp"

#include <charconv>

#include "cascade/common/validate.hpp"

namespace cascade::http {

std::optional<std::uint64_t> parse_u64(std::string_view text) {
  std::uint64_t value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

Parsed<proto::ServiceKey> service_key_of(std::string_view name,
                                         std::optional<std::string_view> group) {
  proto::ServiceKey key{std::string(name), std::string(group.value_or(proto::kDefaultGroup))};
  if (auto error = proto::check_service_key(key); !error.empty()) return error;
  return key;
}

Parsed<bool> parse_flag(std::optional<std::string_view> text, std::string_view name) {
  if (!text) return false;
  if (text->empty() || *text == "1" || *text == "true") return true;
  if (*text == "0" || *text == "false") return false;
  return std::string(name) + " must be true or false (got '" + std::string(*text) + "')";
}

Parsed<std::uint64_t> parse_count(std::optional<std::string_view> text, std::string_view name,
                                  std::uint64_t fallback, std::uint64_t max) {
  if (!text) return fallback;
  const auto value = parse_u64(*text);
  if (!value || *value < 1 || *value > max)
    return std::string(name) + " must be a whole number from 1 to " + std::to_string(max) +
           " (got '" + std::string(*text) + "')";
  return *value;
}

}  // namespace cascade::http
