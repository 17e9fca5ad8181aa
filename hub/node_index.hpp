#pragma once
// An open-addressing index from a string id to an object that owns that id.
//
// Why not std::unordered_map alone: at a million agents the beat path's cost
// was dominated by its lookup — bucket array, then list node, then the key's
// heap string: three dependent cache misses per beat. Here one probe into a
// flat array of {hash, pointer} usually settles it, the stored hash rejects
// non-matches without touching the object, and prefetch() lets a batch start
// loading every slot it will need before the first is handled.
//
// The index does not own the objects; `KeyOf` returns the id of one. Erased
// slots become tombstones; a rehash (sized from the live count) drops them,
// so churn never grows the table without bound.

#include <bit>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace cascade::hub {

template <typename T, typename KeyOf>
class NodeIndex {
 public:
  T* find(std::string_view id) const {
    const std::uint64_t h = hash(id);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      const Slot& s = slots_[i];
      if (s.hash == kEmpty) return nullptr;
      if (s.hash == h && KeyOf{}(*s.value) == id) return s.value;
    }
  }

  // `value` must not be indexed yet.
  void insert(T* value) {
    if ((live_ + tombstones_ + 1) * 2 > slots_.size()) rehash();
    place(hash(KeyOf{}(*value)), value);
    ++live_;
  }

  void erase(std::string_view id) {
    const std::uint64_t h = hash(id);
    for (std::size_t i = h & mask();; i = (i + 1) & mask()) {
      Slot& s = slots_[i];
      if (s.hash == kEmpty) return;
      if (s.hash == h && KeyOf{}(*s.value) == id) {
        s = Slot{kTombstone, nullptr};
        --live_;
        ++tombstones_;
        return;
      }
    }
  }

  void prefetch(std::string_view id) const { __builtin_prefetch(&slots_[hash(id) & mask()]); }

  std::size_t size() const { return live_; }
  std::size_t capacity() const { return slots_.size(); }

 private:
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kTombstone = 1;
  static constexpr std::size_t kMinSlots = 1024;
  struct Slot {
    std::uint64_t hash = kEmpty;
    T* value = nullptr;
  };

  // Real hashes are never 0 or 1: those mark empty and erased slots.
  static std::uint64_t hash(std::string_view id) { return std::hash<std::string_view>{}(id) | 2; }
  std::size_t mask() const { return slots_.size() - 1; }

  void place(std::uint64_t h, T* value) {
    for (std::size_t i = h & mask();; i = (i + 1) & mask())
      if (slots_[i].hash <= kTombstone) {
        if (slots_[i].hash == kTombstone) --tombstones_;
        slots_[i] = Slot{h, value};
        return;
      }
  }

  // Live entries at most a quarter full after a rehash: room to grow before the next.
  void rehash() {
    std::vector<Slot> old(std::max(kMinSlots, std::bit_ceil((live_ + 1) * 4)));
    old.swap(slots_);
    tombstones_ = 0;
    for (const Slot& s : old)
      if (s.hash > kTombstone) place(s.hash, s.value);
  }

  std::vector<Slot> slots_ = std::vector<Slot>(kMinSlots);
  std::size_t live_ = 0;
  std::size_t tombstones_ = 0;
};

}  // namespace cascade::hub
