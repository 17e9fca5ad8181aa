#include "cascade/http/url.hpp"

#include "cascade/http/router.hpp"

namespace cascade::http {

namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '+' && plus_is_space) {
      out.push_back(' ');
    } else if (c != '%') {
      out.push_back(c);
    } else {
      if (i + 2 >= text.size()) return std::nullopt;  // "%" or "%4" at the end
      const int high = hex_value(text[i + 1]);
      const int low = hex_value(text[i + 2]);
      if (high < 0 || low < 0) return std::nullopt;
      out.push_back(static_cast<char>(high * 16 + low));
      i += 2;
    }
  }
  return out;
}

std::optional<Target> parse_target(std::string_view target) {
  if (target.empty() || target.front() != '/') return std::nullopt;
  const auto mark = target.find('?');
  auto path = percent_decode(target.substr(0, mark), false);
  if (!path) return std::nullopt;
  Target out{std::move(*path), {}};
  if (mark == std::string_view::npos) return out;
  for (const auto pair : split_nonempty(target.substr(mark + 1), '&')) {
    const auto equals = pair.find('=');
    auto name = percent_decode(pair.substr(0, equals), true);
    auto value = equals == std::string_view::npos ? std::optional<std::string>("")
                                                  : percent_decode(pair.substr(equals + 1), true);
    if (!name || !value) return std::nullopt;
    out.query.insert_or_assign(std::move(*name), std::move(*value));
  }
  return out;
}

}  // namespace cascade::http
