#include "cascade/hub/instance_id.hpp"

namespace cascade::hub::uuid_form {
namespace {

constexpr char kDigits[] = "0123456789abcdef";
// Where the four dashes of 8-4-4-4-12 stand.
constexpr bool is_dash_position(std::size_t i) {
  return i == 8 || i == 13 || i == 18 || i == 23;
}

// A lowercase hexadecimal digit's value; -1 for anything else (an uppercase
// digit too: packing it would not spell back the same text).
int nibble(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

}  // namespace

bool pack(std::string_view text, Packed& out) {
  if (text.size() != kTextSize) return false;
  std::size_t byte = 0;
  int high = -1;
  for (std::size_t i = 0; i < kTextSize; ++i) {
    if (is_dash_position(i)) {
      if (text[i] != '-') return false;
      continue;
    }
    const int value = nibble(text[i]);
    if (value < 0) return false;
    if (high < 0) {
      high = value;
      continue;
    }
    out[byte++] = static_cast<std::uint8_t>(high << 4 | value);
    high = -1;
  }
  return true;
}

void spell(const std::uint8_t* packed, char* out) {
  std::size_t byte = 0;
  for (std::size_t i = 0; i < kTextSize; ++i) {
    if (is_dash_position(i)) {
      out[i] = '-';
      continue;
    }
    out[i] = kDigits[packed[byte] >> 4];
    out[++i] = kDigits[packed[byte++] & 0xf];
  }
}

}  // namespace cascade::hub::uuid_form
