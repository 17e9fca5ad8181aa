#pragma once
// A request target ("/v1/kv/a%2Fb?recurse&index=12") split into its decoded
// path and query arguments. Percent-escapes are decoded in both; '+' means a
// space in the query only (form encoding), as every HTTP client sends it.

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace cascade::http {

using QueryArgs = std::map<std::string, std::string, std::less<>>;

// `text` with its %XX escapes decoded (and '+' as space when asked);
// nullopt when an escape is cut short or not hexadecimal.
std::optional<std::string> percent_decode(std::string_view text, bool plus_is_space);

struct Target {
  std::string path;
  QueryArgs query;  // an argument without '=' has the value ""; the last of a repeated name wins
};

// nullopt when the target is not an absolute path or holds a bad escape.
std::optional<Target> parse_target(std::string_view target);

}  // namespace cascade::http
