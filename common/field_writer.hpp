#pragma once
// Writes the fields common/message_fields.hpp declares as MessagePack, every
// field of every record (optional ones included) and integers in their
// shortest form, which is what makes the golden samples byte-exact. The
// encoder trusts its input: bounds are the reader's business.

#include <cstdint>
#include <map>
#include <msgpack.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/common/message_fields.hpp"

namespace cascade::proto::wire {

struct StringSink {
  std::string& out;
  void write(const char* data, std::size_t size) { out.append(data, size); }
};
using Packer = msgpack::packer<StringSink>;

class FieldWriter {
 public:
  explicit FieldWriter(Packer& pk) : pk_(pk) {}

  template <typename T, typename... Bound>
  void field(const char* /*name*/, const T& value, Bound... /*bounds*/) {
    write(value);
  }
  void field(const char* /*name*/, const std::string& value, Bytes /*bound*/) { write_bin(value); }
  void field(const char* /*name*/, const std::optional<std::string>& value, Bytes /*bound*/) {
    if (value)
      write_bin(*value);
    else
      pk_.pack_nil();
  }
  void optional_from_here() {}

  template <Record T>
  void record(const T& value) {
    pk_.pack_array(count_fields(value).all);
    describe(*this, value);
  }

 private:
  void write(std::uint64_t v) { pk_.pack_uint64(v); }
  void write(std::uint32_t v) { pk_.pack_uint32(v); }
  void write(std::int64_t v) { pk_.pack_int64(v); }
  void write(std::int32_t v) { pk_.pack_int32(v); }
  void write(bool b) {
    if (b)
      pk_.pack_true();
    else
      pk_.pack_false();
  }
  template <typename E>
  requires std::is_enum_v<E>
  void write(E e) { pk_.pack_uint8(static_cast<std::uint8_t>(e)); }
  void write(std::string_view s) {
    pk_.pack_str(static_cast<std::uint32_t>(s.size()));
    pk_.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
  }
  void write(const std::string& s) { write(std::string_view(s)); }
  void write_bin(std::string_view s) {
    pk_.pack_bin(static_cast<std::uint32_t>(s.size()));
    pk_.pack_bin_body(s.data(), static_cast<std::uint32_t>(s.size()));
  }
  void write(const std::map<std::string, std::string>& map) {
    pk_.pack_map(static_cast<std::uint32_t>(map.size()));
    for (const auto& [k, v] : map) {
      write(k);
      write(v);
    }
  }
  void write(const std::vector<std::pair<std::string, std::uint64_t>>& counters) {
    pk_.pack_map(static_cast<std::uint32_t>(counters.size()));
    for (const auto& [name, value] : counters) {
      write(name);
      write(value);
    }
  }
  template <Record T>
  void write(const T& value) {
    record(value);
  }
  template <typename T>
  void write(const std::vector<T>& list) {
    pk_.pack_array(static_cast<std::uint32_t>(list.size()));
    for (const auto& item : list)
      write(item);
  }
  template <typename T>
  void write(const std::optional<T>& value) {  // nil when absent
    if (value)
      write(*value);
    else
      pk_.pack_nil();
  }

  Packer& pk_;
};

}  // namespace cascade::proto::wire
