#pragma once
// Reads and checks the fields common/message_fields.hpp declares from a parsed
// MessagePack array. Every access is bounds-checked: a record that ends
// before its required fields is malformed, one that ends among its optional
// fields leaves the rest at their defaults (each optional field on its own),
// and fields beyond those this revision knows are ignored. Any violation
// throws DecodeError, which the codec turns into a DecodeFailure.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "cascade/common/message_fields.hpp"

namespace cascade::proto::wire {

struct DecodeError {
  ErrorCode code;
  std::string what;
};

[[noreturn]] inline void fail(ErrorCode code, std::string what) {
  throw DecodeError{code, std::move(what)};
}

inline std::span<const msgpack::object> as_array(const msgpack::object& o, const char* name) {
  if (o.type != msgpack::type::ARRAY)
    fail(ErrorCode::kMalformed, std::string(name) + ": not an array");
  return {o.via.array.ptr, o.via.array.size};
}

class FieldReader {
 public:
  FieldReader(const msgpack::object& record, const char* what)
      : items_(as_array(record, what)), what_(what) {}

  // Moves past fields another layer reads (a message's version and type).
  void skip(std::size_t fields) { pos_ = std::min(items_.size(), pos_ + fields); }

  void optional_from_here() { optional_ = true; }

  template <typename T, typename... Bound>
  void field(const char* name, T& value, Bound... bound) {
    if (const auto* o = next(name)) read(*o, name, value, bound...);
  }

  template <Record T>
  static void record(const msgpack::object& o, T& value) {
    FieldReader reader(o, kRecordName<T>);
    describe(reader, value);
  }

 private:
  // The next field, or nullptr when the record ended among its optional fields.
  const msgpack::object* next(const char* name) {
    if (pos_ < items_.size()) return &items_[pos_++];
    if (!optional_)
      fail(ErrorCode::kMalformed, std::string(what_) + ": too few fields (no " + name + ")");
    return nullptr;
  }

  std::string field_name(const char* name) const { return std::string(what_) + "." + name; }
  [[noreturn]] void bad_type(const char* name, const char* expected) const {
    fail(ErrorCode::kMalformed, field_name(name) + " is not " + expected);
  }
  [[noreturn]] void out_of_range(const char* name) const {
    fail(ErrorCode::kInvalid, field_name(name) + " out of range");
  }

  std::uint64_t unsigned_of(const msgpack::object& o, const char* name) const {
    if (o.type != msgpack::type::POSITIVE_INTEGER) bad_type(name, "an unsigned integer");
    return o.via.u64;
  }
  std::int64_t signed_of(const msgpack::object& o, const char* name) const {
    if (o.type == msgpack::type::POSITIVE_INTEGER) {
      if (o.via.u64 > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
        out_of_range(name);
      return static_cast<std::int64_t>(o.via.u64);
    }
    if (o.type != msgpack::type::NEGATIVE_INTEGER) bad_type(name, "an integer");
    return o.via.i64;
  }

  void read(const msgpack::object& o, const char* name, std::uint64_t& v) const {
    v = unsigned_of(o, name);
  }
  void read(const msgpack::object& o, const char* name, std::uint32_t& v) const {
    const auto wide = unsigned_of(o, name);
    if (wide > std::numeric_limits<std::uint32_t>::max()) out_of_range(name);
    v = static_cast<std::uint32_t>(wide);
  }
  void read(const msgpack::object& o, const char* name, std::int64_t& v) const {
    v = signed_of(o, name);
  }
  void read(const msgpack::object& o, const char* name, std::int32_t& v) const {
    const auto wide = signed_of(o, name);
    if (wide < std::numeric_limits<std::int32_t>::min() ||
        wide > std::numeric_limits<std::int32_t>::max())
      out_of_range(name);
    v = static_cast<std::int32_t>(wide);
  }
  void read(const msgpack::object& o, const char* name, bool& v) const {
    if (o.type != msgpack::type::BOOLEAN) bad_type(name, "a boolean");
    v = o.via.boolean;
  }
  template <typename E>
  requires std::is_enum_v<E>
  void read(const msgpack::object& o, const char* name, E& v) const {
    const auto raw = unsigned_of(o, name);
    if (raw < EnumRange<E>::min || raw > EnumRange<E>::max)
      fail(ErrorCode::kInvalid, field_name(name) + " has unknown value " + std::to_string(raw));
    v = static_cast<E>(raw);
  }

  void read(const msgpack::object& o, const char* name, std::string& s, Text bound) const {
    if (o.type != msgpack::type::STR) bad_type(name, "a string");
    if (o.via.str.size > bound.max)
      fail(ErrorCode::kInvalid,
           field_name(name) + " longer than " + std::to_string(bound.max) + " bytes");
    s.assign(o.via.str.ptr, o.via.str.size);
  }
  void read(const msgpack::object& o, const char* name, std::string& s, Token bound) const {
    read(o, name, s, Text{bound.max});
    if (s.empty()) fail(ErrorCode::kInvalid, field_name(name) + " is empty");
    for (unsigned char c : s)
      if (c < 0x20 || c == 0x7f)
        fail(ErrorCode::kInvalid, field_name(name) + " has a control character");
  }

  void read(const msgpack::object& o, const char* name, std::string& s, Bytes bound) const {
    if (o.type != msgpack::type::BIN) bad_type(name, "bytes (bin)");
    if (o.via.bin.size > bound.max)
      fail(ErrorCode::kInvalid,
           field_name(name) + " longer than " + std::to_string(bound.max) + " bytes");
    s.assign(o.via.bin.ptr, o.via.bin.size);
  }

  void read(const msgpack::object& o, const char* name,
            std::map<std::string, std::string>& metadata) const {
    if (o.type != msgpack::type::MAP) bad_type(name, "a map");
    if (o.via.map.size > kMaxMetadataEntries)
      fail(ErrorCode::kInvalid, field_name(name) + " has too many entries");
    for (const auto& kv : std::span(o.via.map.ptr, o.via.map.size)) {
      std::string key, value;
      read(kv.key, "metadata key", key, Text{kMaxMetadataKeyBytes});
      read(kv.val, "metadata value", value, Text{kMaxMetadataValueBytes});
      metadata.emplace(std::move(key), std::move(value));
    }
  }
  void read(const msgpack::object& o, const char* name,
            std::vector<std::pair<std::string, std::uint64_t>>& counters) const {
    if (o.type != msgpack::type::MAP) bad_type(name, "a map");
    counters.reserve(o.via.map.size);
    for (const auto& kv : std::span(o.via.map.ptr, o.via.map.size)) {
      auto& [counter, value] = counters.emplace_back();
      read(kv.key, "counter", counter, Text{kMaxIdBytes});
      value = unsigned_of(kv.val, "counter value");
    }
  }

  template <Record T>
  void read(const msgpack::object& o, const char* /*name*/, T& value) const {
    record(o, value);
  }
  // A list of records, or of strings with a bound.
  template <typename T, typename... Bound>
  void read(const msgpack::object& o, const char* name, std::vector<T>& list,
            Bound... bound) const {
    if (o.type != msgpack::type::ARRAY) bad_type(name, "an array");
    const std::span items(o.via.array.ptr, o.via.array.size);
    list.resize(items.size());
    for (std::size_t i = 0; i < items.size(); ++i)
      read(items[i], name, list[i], bound...);
  }
  template <typename T>
  void read(const msgpack::object& o, const char* name, std::vector<T>& list,
            MaxItems bound) const {
    if (o.type == msgpack::type::ARRAY && o.via.array.size > bound.max)
      fail(ErrorCode::kInvalid,
           field_name(name) + " holds more than " + std::to_string(bound.max) + " items");
    read(o, name, list);
  }
  // nil reads as absent.
  template <typename T, typename... Bound>
  void read(const msgpack::object& o, const char* name, std::optional<T>& value,
            Bound... bound) const {
    if (o.type == msgpack::type::NIL) {
      value.reset();
      return;
    }
    read(o, name, value.emplace(), bound...);
  }

  std::span<const msgpack::object> items_;
  const char* what_;
  std::size_t pos_ = 0;
  bool optional_ = false;
};

}  // namespace cascade::proto::wire
