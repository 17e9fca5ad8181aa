#pragma once
// The instances a write-behind batch writes, packed into one buffer.
//
// Why not a vector of InstanceRecord: in a registration storm a batch holds
// tens of thousands of instances, and a record costs about ten heap blocks
// (the service key's two strings, the id, address, zone and owner, the
// metadata map's nodes) to build on the serving thread and as many frees when
// the batch comes back from the store writer. That was a fifth of the serving
// thread's time at 1M realistic instances (docs/benchmarks.md, "Registration
// with durable acks"). Here every text of every instance is appended to one
// buffer, and the metadata is packed once, as the store writes it (a
// MessagePack map of strings, msgpack_blob.hpp).
//
//   InstanceRows rows;
//   rows.add({.row = 7, .name = "orders", .group = "default", .id = "i-1", ...});
//   for (const InstanceRow& r : rows) store(r.row, r.id, r.metadata_blob);
//
// Thread-safety: none; a batch is built on one thread and read on another
// only after it was handed over.

#include <array>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::hub {

struct InstanceRecord;

// One instance of a batch: views into its InstanceRows, valid while the rows
// live and are not added to.
struct InstanceRow {
  std::uint32_t row = 0;  // the store's key (InstanceRecord::row)
  std::string_view name;
  std::string_view group;
  std::string_view id;
  std::string_view owner;
  std::string_view address;
  std::string_view zone;
  std::string_view metadata_blob;  // the metadata, packed: see the header comment
  std::uint32_t weight = 100;
  proto::InstanceStatus status = proto::InstanceStatus::kUp;

  proto::ServiceKey service() const { return {std::string(name), std::string(group)}; }
  // The whole record, unpacked: for the memory store and tests. Throws
  // std::invalid_argument for a metadata blob that is not a map of strings.
  InstanceRecord record() const;
};

// What add() copies: the texts are read during the call only.
struct InstanceFields {
  std::uint32_t row = 0;
  std::string_view name{};
  std::string_view group{};
  std::string_view id{};
  std::string_view owner{};
  std::string_view address{};
  std::string_view zone{};
  const std::map<std::string, std::string>* metadata = nullptr;  // nullptr: metadata_blob
  std::uint32_t weight = 100;
  proto::InstanceStatus status = proto::InstanceStatus::kUp;
  // The metadata packed already (as the store reads its column), taken as it
  // is when `metadata` is nullptr; empty: none.
  std::string_view metadata_blob{};
};

class InstanceRows {
 public:
  class Iterator;

  InstanceRows() = default;
  InstanceRows(std::initializer_list<InstanceRecord> records);  // implicit, like a vector's
  explicit InstanceRows(const std::vector<InstanceRecord>& records);

  void add(const InstanceFields& fields);
  void push_back(const InstanceRecord& record);
  // Room for `rows` rows of `bytes` bytes of text in all: a batch of a
  // registration wave then fills one buffer instead of doubling it.
  void reserve(std::size_t rows, std::size_t bytes) {
    spans_.reserve(rows);
    bytes_.reserve(bytes);
  }
  std::size_t text_bytes() const { return bytes_.size(); }
  std::size_t capacity_bytes() const {
    return bytes_.capacity() + spans_.capacity() * sizeof(Span);
  }
  // No rows; the buffers keep their room (HubCore::reuse).
  void clear() {
    bytes_.clear();
    spans_.clear();
  }

  std::size_t size() const { return spans_.size(); }
  bool empty() const { return spans_.empty(); }
  InstanceRow operator[](std::size_t i) const;  // i < size()
  // The positions of the rows in order of their row number (the store
  // writes them so: a registration's rows are appended page after page).
  std::vector<std::uint32_t> order_by_row() const;
  Iterator begin() const;
  Iterator end() const;
  // Every row unpacked, in order of add().
  std::vector<InstanceRecord> records() const;

 private:
  // Where one instance's texts are: its first byte in bytes_, then each
  // text's length, in InstanceRow's order.
  struct Span {
    static constexpr std::size_t kTexts = 7;  // name, group, id, owner, address, zone, metadata
    std::size_t start = 0;
    std::array<std::uint32_t, kTexts> lengths{};
    std::uint32_t row = 0;
    std::uint32_t weight = 100;
    proto::InstanceStatus status = proto::InstanceStatus::kUp;
  };
  std::string bytes_;
  std::vector<Span> spans_;
};

class InstanceRows::Iterator {
 public:
  using iterator_category = std::input_iterator_tag;
  using value_type = InstanceRow;
  using difference_type = std::ptrdiff_t;
  using pointer = void;
  using reference = InstanceRow;

  Iterator(const InstanceRows* rows, std::size_t at) : rows_(rows), at_(at) {}
  InstanceRow operator*() const { return (*rows_)[at_]; }
  Iterator& operator++() {
    ++at_;
    return *this;
  }
  bool operator==(const Iterator& other) const { return at_ == other.at_; }

 private:
  const InstanceRows* rows_;
  std::size_t at_;
};

inline InstanceRows::Iterator InstanceRows::begin() const {
  return {this, 0};
}
inline InstanceRows::Iterator InstanceRows::end() const {
  return {this, spans_.size()};
}

}  // namespace cascade::hub
