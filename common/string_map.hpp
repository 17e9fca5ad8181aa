#pragma once
// A hash map keyed by std::string that is searched with a std::string_view:
// the callers' ids live in compact storage (hub/compact_text.hpp), and a
// lookup must not build a std::string to find one.

#include <functional>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cascade {

struct StringHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
};

template <typename V>
using StringMap = std::unordered_map<std::string, V, StringHash, std::equal_to<>>;

}  // namespace cascade
