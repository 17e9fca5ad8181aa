#pragma once
// A service's registered instances by id: each instance one allocation that
// holds its id and its entry, found through an IdIndex.
//
// Why not std::map<std::string, InstanceEntry>: each instance cost a tree
// node (32 bytes of links), a 32-byte std::string key and, for a UUID id,
// a second heap block for the id's characters: ~100 bytes of ~300 a million
// instances' registry spent (docs/benchmarks.md, "Where an instance's bytes
// go"). Here the id's characters follow the slot in its own block and the
// index costs a word or two an instance. A slot stays where it is while its
// instance is registered (nodes hold pointers to it). The map keeps no
// order: sorted() gives one where a list goes out.

#include <cstddef>
#include <cstdint>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/hub/id_index.hpp"
#include "cascade/hub/instance_entry.hpp"

namespace cascade::hub {

// The entry is a base, not a member, so the id's length and the row take
// the entry's tail padding: with a 36-byte UUID the block is 116 bytes, a
// 128-byte malloc chunk, where members would make it 124 and a 144-byte chunk.
class InstanceSlot : private InstanceEntry {
 public:
  InstanceSlot(const InstanceSlot&) = delete;
  InstanceSlot& operator=(const InstanceSlot&) = delete;

  std::string_view id() const { return {reinterpret_cast<const char*>(this + 1), id_size_}; }
  InstanceEntry& entry() { return *this; }
  const InstanceEntry& entry() const { return *this; }
  // The key of the instance's row in the store (hub/store.hpp), given by the
  // registry when the instance is made; 0 until then.
  std::uint32_t row() const { return row_; }
  void set_row(std::uint32_t row) { row_ = row; }

 private:
  friend class InstanceMap;
  explicit InstanceSlot(std::size_t id_size) : id_size_(static_cast<std::uint8_t>(id_size)) {}
  ~InstanceSlot() = default;
  // The slot with `id`'s characters after it, one block.
  static InstanceSlot* make(std::string_view id);
  static void destroy(InstanceSlot* slot);

  std::uint8_t id_size_;  // ids are at most proto::kMaxIdBytes (255)
  std::uint32_t row_ = 0;
};
static_assert(sizeof(InstanceSlot) == sizeof(InstanceEntry),
              "the id's length and the row fit the entry's tail padding");

class InstanceMap {
  struct IdOf {
    std::string_view operator()(const InstanceSlot& slot) const { return slot.id(); }
  };
  using Index = IdIndex<InstanceSlot, IdOf>;

 public:
  InstanceMap() = default;
  InstanceMap(const InstanceMap&) = delete;
  InstanceMap& operator=(const InstanceMap&) = delete;
  InstanceMap(InstanceMap&& other) noexcept : index_(std::exchange(other.index_, {})) {}
  InstanceMap& operator=(InstanceMap&& other) noexcept {
    std::swap(index_, other.index_);
    return *this;
  }
  ~InstanceMap() { clear(); }

  InstanceSlot* find(std::string_view id) const { return index_.find(id); }
  bool contains(std::string_view id) const { return find(id) != nullptr; }
  // The entry of `id`; throws std::out_of_range when absent (as std::map::at).
  InstanceEntry& at(std::string_view id) const;
  // The slot of `id`, with a default entry if it was absent (`made`).
  struct Placed {
    InstanceSlot* slot;
    bool made;
  };
  Placed try_emplace(std::string_view id);
  // `slot` (one of this map's) is destroyed.
  void erase(InstanceSlot* slot);
  void clear();

  std::size_t size() const { return index_.size(); }
  bool empty() const { return index_.empty(); }
  // Every slot, in no particular order.
  Index::Iterator begin() const { return index_.begin(); }
  Index::Iterator end() const { return index_.end(); }
  // Every slot, by id: lists go out sorted.
  std::vector<const InstanceSlot*> sorted() const;

 private:
  Index index_;
};

}  // namespace cascade::hub
