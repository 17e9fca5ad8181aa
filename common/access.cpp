#include "cascade/common/access.hpp"

#include <array>

namespace cascade::access {

namespace {
constexpr std::array<std::string_view, 5> kRoleNames{"agent", "hub", "proxy", "operator", "reader"};
}  // namespace

std::string_view to_string(Role role) {
  return kRoleNames.at(static_cast<std::size_t>(role));
}

std::optional<Role> parse_role(std::string_view text) {
  for (std::size_t i = 0; i < kRoleNames.size(); ++i)
    if (kRoleNames[i] == text) return static_cast<Role>(i);
  return std::nullopt;
}

// The classic wildcard walk: on a mismatch after a `*`, retry with the star
// swallowing one more character. Remembering only the last star is enough,
// because an earlier star can never need to swallow more than it did.
bool glob_match(std::string_view pattern, std::string_view text) {
  std::size_t p = 0, t = 0;
  std::size_t star = std::string_view::npos, resume = 0;
  while (t < text.size()) {
    if (p < pattern.size() && pattern[p] == '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == text[t])) {
      ++p;
      ++t;
    } else if (star != std::string_view::npos) {
      p = star + 1;
      t = ++resume;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*')
    ++p;
  return p == pattern.size();
}

}  // namespace cascade::access
