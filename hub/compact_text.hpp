#pragma once
// A string in `Size` bytes (16 or 24): up to Size - 1 characters inside,
// longer ones in one exactly sized heap block.
//
// Why not std::string: it is 32 bytes and keeps only 15 characters inside,
// and the registry holds two short strings per instance (its owner's node
// id, its address): at a million instances each std::string cost 32 MB, and
// every "ip:port" longer than 15 characters a 32-byte block more. Immutable
// in place: assigning replaces the whole value. Node ids (8 bytes in a
// production fleet) fit a CompactText, every IPv4 "ip:port" (at most 21
// characters) an AddressText.

#include <compare>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace cascade::hub {

template <std::size_t Size>
class BasicCompactText {
  static_assert(Size >= 16 && Size <= 128 && Size % 8 == 0);

 public:
  BasicCompactText() { bytes_[kTagByte] = 0; }
  BasicCompactText(std::string_view text) { set(text); }  // implicit, like std::string's
  BasicCompactText(const BasicCompactText& other) : BasicCompactText(other.view()) {}
  BasicCompactText(BasicCompactText&& other) noexcept {
    std::memcpy(bytes_, other.bytes_, sizeof bytes_);
    other.bytes_[kTagByte] = 0;
  }
  BasicCompactText& operator=(BasicCompactText other) noexcept {
    swap(other);
    return *this;
  }
  BasicCompactText& operator=(std::string_view text) {
    BasicCompactText replacement(text);
    swap(replacement);
    return *this;
  }
  ~BasicCompactText() { release(); }

  std::string_view view() const {
    if (!on_heap()) return {bytes_, static_cast<std::size_t>(bytes_[kTagByte])};
    return {heap_pointer(), heap_size()};
  }
  operator std::string_view() const { return view(); }
  std::string str() const { return std::string(view()); }
  bool empty() const { return view().empty(); }
  std::size_t size() const { return view().size(); }

  friend bool operator==(const BasicCompactText& a, const BasicCompactText& b) {
    return a.view() == b.view();
  }
  friend bool operator==(const BasicCompactText& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const BasicCompactText& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const BasicCompactText& a, const char* b) { return a.view() == b; }
  friend auto operator<=>(const BasicCompactText& a, const BasicCompactText& b) {
    return a.view() <=> b.view();
  }

  void swap(BasicCompactText& other) noexcept {
    char tmp[sizeof bytes_];
    std::memcpy(tmp, bytes_, sizeof bytes_);
    std::memcpy(bytes_, other.bytes_, sizeof bytes_);
    std::memcpy(other.bytes_, tmp, sizeof bytes_);
  }

 private:
  // The last byte: the length (0..Size - 1) of an inside value, or kOnHeap;
  // a heap value's pointer is in bytes 0..7 and its length in bytes 8..11.
  static constexpr std::size_t kTagByte = Size - 1;
  static constexpr std::size_t kInside = Size - 1;
  static constexpr char kOnHeap = static_cast<char>(0x80);

  bool on_heap() const { return bytes_[kTagByte] == kOnHeap; }
  char* heap_pointer() const {
    char* p;
    std::memcpy(&p, bytes_, sizeof p);
    return p;
  }
  std::size_t heap_size() const {
    std::uint32_t n;
    std::memcpy(&n, bytes_ + sizeof(char*), sizeof n);
    return n;
  }
  void set(std::string_view text) {
    if (text.size() <= kInside) {
      // An empty view may have no data at all: memcpy must not see its null.
      if (!text.empty()) std::memcpy(bytes_, text.data(), text.size());
      bytes_[kTagByte] = static_cast<char>(text.size());
      return;
    }
    char* p = new char[text.size()];
    std::memcpy(p, text.data(), text.size());
    const auto n = static_cast<std::uint32_t>(text.size());
    std::memcpy(bytes_, &p, sizeof p);
    std::memcpy(bytes_ + sizeof p, &n, sizeof n);
    bytes_[kTagByte] = kOnHeap;
  }
  void release() {
    if (on_heap()) delete[] heap_pointer();
  }

  char bytes_[Size];
};

using CompactText = BasicCompactText<16>;
using AddressText = BasicCompactText<24>;
static_assert(sizeof(CompactText) == 16 && sizeof(AddressText) == 24);

}  // namespace cascade::hub
