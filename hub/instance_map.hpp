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

#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/hub/id_index.hpp"
#include "cascade/hub/instance_entry.hpp"
#include "cascade/hub/instance_id.hpp"

namespace cascade::hub {

// The entry is a base, not a member, so the id's length, its form and the
// row take the entry's tail padding. A UUID id is kept in its 16 bytes
// (hub/instance_id.hpp): the block is 96 bytes, a 112-byte malloc chunk; as
// 36 characters it was 116 bytes, a 128-byte chunk.
class InstanceSlot : private InstanceEntry {
 public:
  InstanceSlot(const InstanceSlot&) = delete;
  InstanceSlot& operator=(const InstanceSlot&) = delete;

  // The id, spelled out when it is kept packed: keep the InstanceId, not a
  // view of it, beyond the expression.
  InstanceId id() const {
    const auto* tail = reinterpret_cast<const char*>(this + 1);
    if (packed_) return InstanceId::of_packed(reinterpret_cast<const std::uint8_t*>(tail));
    return InstanceId::of_text({tail, id_size_});
  }
  // Whether `a`'s id sorts before `b`'s (two packed ids by their bytes,
  // which is the order of their texts).
  static bool id_less(const InstanceSlot* a, const InstanceSlot* b);
  InstanceEntry& entry() { return *this; }
  const InstanceEntry& entry() const { return *this; }
  // Rows are below 2^29: the top bits of their word say whether the id is
  // packed and the slot listed or detached (the registry numbers the rows
  // anew when they run out, after half a billion instances were made).
  static constexpr std::uint32_t kMaxRow = (std::uint32_t{1} << 29) - 1;
  // The key of the instance's row in the store (hub/store.hpp), given by the
  // registry when the instance is made; 0 until then.
  std::uint32_t row() const { return row_; }
  void set_row(std::uint32_t row) {
    assert(row <= kMaxRow);
    row_ = row & kMaxRow;
  }
  // Whether the slot waits in the registry's list of rows to write (one
  // entry per slot however often it changes before the batch).
  bool listed() const { return listed_; }
  void set_listed(bool listed) { listed_ = listed; }
  // Taken out of its map while listed (InstanceMap::detach): no longer an
  // instance, kept only until the list lets go of it.
  bool detached() const { return detached_; }

 private:
  friend class InstanceMap;
  InstanceSlot(std::size_t tail_size, bool packed)
      : id_size_(static_cast<std::uint8_t>(tail_size)), packed_(packed) {}
  ~InstanceSlot() = default;
  // The slot with `id`'s characters after it, one block.
  static InstanceSlot* make(std::string_view id);
  static void destroy(InstanceSlot* slot);

  std::uint8_t id_size_;  // bytes after the slot; ids are at most proto::kMaxIdBytes (255)
  std::uint32_t row_ : 29 = 0;
  std::uint32_t packed_ : 1;  // the bytes after the slot are a UUID's 16 (uuid_form::pack)
  std::uint32_t listed_ : 1 = 0;
  std::uint32_t detached_ : 1 = 0;
};
static_assert(sizeof(InstanceSlot) == sizeof(InstanceEntry),
              "the id's length and form, the flags and the row fit the entry's tail padding");

class InstanceMap {
  struct IdOf {
    InstanceId operator()(const InstanceSlot& slot) const { return slot.id(); }
    // The id's form is in the slot's last word, its bytes just after it.
    static void prefetch(const InstanceSlot& slot) {
      const auto* tail = reinterpret_cast<const char*>(&slot + 1);
      __builtin_prefetch(tail - sizeof(std::uint32_t));
      __builtin_prefetch(tail + 15);
    }
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
  // `slot` (one of this map's) leaves the map but lives on, marked
  // detached(), until the owner returned is dropped: for a slot another list
  // still points to.
  struct Disposer {
    void operator()(InstanceSlot* slot) const { InstanceSlot::destroy(slot); }
  };
  using Detached = std::unique_ptr<InstanceSlot, Disposer>;
  Detached detach(InstanceSlot* slot);
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
