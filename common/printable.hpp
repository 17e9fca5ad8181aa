#pragma once
// Text from the network or a user, made safe to print on a terminal or in a
// log line: control bytes (< 0x20 and 0x7f) as \xNN, everything else
// unchanged (a registered name cannot move the operator's cursor).

#include <cstdio>
#include <string>
#include <string_view>

namespace cascade {

inline std::string printable(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte < 0x20U || byte == 0x7FU) {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02x", byte);
      out += escaped;
    } else {
      out += c;
    }
  }
  return out;
}

}  // namespace cascade
