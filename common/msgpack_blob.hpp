#pragma once
// Values stored as MessagePack blobs in SQLite columns (metadata maps,
// instance lists): one encoding shared by the hub's store and the agent's
// snapshot, so a blob written by either reads the same way.

#include <msgpack.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace cascade {

template <typename T>
std::string pack_blob(const T& value) {
  msgpack::sbuffer buffer;
  msgpack::pack(buffer, value);
  return std::string(buffer.data(), buffer.size());
}

// A blob's own size bounds every count it may claim: each element takes at
// least one byte (a map entry two). The parser reserves memory for a claimed
// count before it reads the elements, so without these bounds a 5-byte blob
// read from a damaged or foreign database asks for gigabytes.
inline msgpack::unpack_limit blob_limits(std::size_t blob_bytes) {
  return msgpack::unpack_limit(/*array=*/blob_bytes, /*map=*/blob_bytes / 2, /*str=*/blob_bytes,
                               /*bin=*/blob_bytes, /*ext=*/blob_bytes, /*depth=*/16);
}

// nullopt unless `bytes` is exactly one MessagePack value convertible to T.
template <typename T>
std::optional<T> unpack_blob(std::string_view bytes) {
  try {
    std::size_t offset = 0;
    const msgpack::object_handle handle = msgpack::unpack(
        bytes.data(), bytes.size(), offset, nullptr, nullptr, blob_limits(bytes.size()));
    if (offset != bytes.size()) return std::nullopt;
    return handle.get().as<T>();
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

}  // namespace cascade
