#pragma once
// An instance's id as the registry keeps it: a canonical UUID (36 lowercase
// hexadecimal characters in groups of 8-4-4-4-12) in its 16 bytes, any other
// id as its characters.
//
// Why: fleets name instances by UUID, and the id is the largest part of an
// instance's block — 36 of 116 bytes, the difference between a 128-byte and
// a 112-byte malloc chunk, 16 MB at a million instances (docs/benchmarks.md,
// "Where an instance's bytes go"). The form is lossless (only a UUID that
// spells back exactly is packed: lowercase, the dashes in place) and order-
// preserving: two packed ids compare as their bytes do, which is how their
// texts compare ('0'–'9' sort before 'a'–'f' in ASCII, and the dashes stand
// at the same places), so sorted lists need not spell them out.
//
// InstanceId is what InstanceSlot::id() returns: a view of the slot's
// characters, or the packed bytes spelled into its own buffer. Converting it
// to std::string_view gives a view into it: use that within the expression
// (as a call's argument) or keep the InstanceId itself, never a view past it.

#include <array>
#include <compare>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cascade::hub {

namespace uuid_form {
inline constexpr std::size_t kTextSize = 36;
inline constexpr std::size_t kPackedSize = 16;
using Packed = std::array<std::uint8_t, kPackedSize>;

// `text` as 16 bytes when it is a canonical lowercase UUID; false otherwise.
bool pack(std::string_view text, Packed& out);
// The 36 characters of a packed UUID.
void spell(const std::uint8_t* packed, char* out);
}  // namespace uuid_form

class InstanceId {
 public:
  // The characters of an id kept as text (`text` must outlive this value).
  static InstanceId of_text(std::string_view text) {
    InstanceId id;
    id.text_ = text;
    return id;
  }
  // The id whose packed form is at `packed`.
  static InstanceId of_packed(const std::uint8_t* packed) {
    InstanceId id;
    uuid_form::spell(packed, id.spelled_.data());
    id.packed_ = true;
    return id;
  }

  std::string_view view() const {
    return packed_ ? std::string_view(spelled_.data(), spelled_.size()) : text_;
  }
  operator std::string_view() const { return view(); }  // NOLINT: an id reads as text
  std::string str() const { return std::string(view()); }
  std::size_t size() const { return view().size(); }
  bool empty() const { return view().empty(); }

  friend bool operator==(const InstanceId& a, const InstanceId& b) { return a.view() == b.view(); }
  friend bool operator==(const InstanceId& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const InstanceId& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const InstanceId& a, const char* b) { return a.view() == b; }
  friend auto operator<=>(const InstanceId& a, const InstanceId& b) {
    return a.view() <=> b.view();
  }

 private:
  InstanceId() = default;
  std::string_view text_;
  std::array<char, uuid_form::kTextSize> spelled_{};  // set when packed_ (zeroed: copies read it)
  bool packed_ = false;
};

}  // namespace cascade::hub
