#include "cascade/common/frame_peek.hpp"

namespace cascade::proto {

namespace {

// Reads MessagePack's array headers, unsigned integers and strings from the
// front of a buffer; every read checks the bytes are there.
class FrontReader {
 public:
  explicit FrontReader(std::string_view bytes) : rest_(bytes) {}

  std::optional<std::uint64_t> array_size() {
    const auto tag = byte();
    if (!tag) return std::nullopt;
    if ((*tag & 0xf0) == 0x90) return *tag & 0x0f;
    if (*tag == 0xdc) return big_endian(2);
    if (*tag == 0xdd) return big_endian(4);
    return std::nullopt;
  }

  std::optional<std::uint64_t> unsigned_int() {
    const auto tag = byte();
    if (!tag) return std::nullopt;
    if (*tag <= 0x7f) return *tag;
    if (*tag >= 0xcc && *tag <= 0xcf) return big_endian(std::size_t{1} << (*tag - 0xcc));
    return std::nullopt;
  }

  bool skip_string() {
    const auto tag = byte();
    if (!tag) return false;
    std::optional<std::uint64_t> size;
    if ((*tag & 0xe0) == 0xa0) size = *tag & 0x1f;
    if (*tag >= 0xd9 && *tag <= 0xdb) size = big_endian(std::size_t{1} << (*tag - 0xd9));
    if (!size || *size > rest_.size()) return false;
    rest_.remove_prefix(*size);
    return true;
  }

 private:
  std::optional<std::uint8_t> byte() {
    if (rest_.empty()) return std::nullopt;
    const auto b = static_cast<std::uint8_t>(rest_.front());
    rest_.remove_prefix(1);
    return b;
  }

  std::optional<std::uint64_t> big_endian(std::size_t width) {
    if (rest_.size() < width) return std::nullopt;
    std::uint64_t v = 0;
    for (std::size_t i = 0; i < width; ++i)
      v = (v << 8) | static_cast<std::uint8_t>(rest_[i]);
    rest_.remove_prefix(width);
    return v;
  }

  std::string_view rest_;
};

struct Header {
  std::uint64_t fields;
  MsgType type;
};

// [version, type, ...]: the array's size and the type, read off `in`.
std::optional<Header> read_header(FrontReader& in) {
  const auto fields = in.array_size();
  const auto version = in.unsigned_int();
  const auto type = in.unsigned_int();
  if (!fields || !version || *version != kProtocolVersion || !type || *type == 0 ||
      *type > kMaxMsgType)
    return std::nullopt;
  return Header{*fields, static_cast<MsgType>(*type)};
}

}  // namespace

std::optional<MsgType> peek_type(std::string_view frame) {
  FrontReader in(frame);
  const auto header = read_header(in);
  return header ? std::optional(header->type) : std::nullopt;
}

std::uint64_t peek_ref(std::string_view frame) {
  FrontReader in(frame);
  const auto header = read_header(in);
  if (!header) return 0;
  const auto index = ref_field_index(header->type);
  if (index == 0 || header->fields <= index) return 0;
  // A seq (index 4) comes after the node_id and the epoch.
  if (index == 4 && (!in.skip_string() || !in.unsigned_int())) return 0;
  return in.unsigned_int().value_or(0);
}

}  // namespace cascade::proto
