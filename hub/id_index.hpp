#pragma once
// An open-addressing index from a string id to an object that holds that id:
// the hub's nodes by node id, each service's instances by instance id.
//
// Why not std::unordered_map: at a million agents the beat path's cost was
// dominated by its lookup — bucket array, then list node, then the key's
// heap string: three dependent cache misses per beat — and each entry cost a
// list node and a second copy of the id. Here a slot is one word: the
// object's address with 16 bits of the id's hash in the address's unused top
// bits, so one probe into a flat array usually settles a lookup and a
// non-match is rejected without touching the object; prefetch() lets a batch
// start loading every slot it will need before the first is handled.
//
// The table is any size, not a power of two: a hash's low 32 bits are scaled
// to the table (multiply and shift) rather than masked. A power-of-two table
// kept half to three quarters full was 2^21 words at a million ids, 17 bytes
// an id; sized freely, a rehash leaves it 5/9 full and the next comes at 4/5,
// 10–14 bytes an id (docs/benchmarks.md, "Where an instance's bytes go").
// Linear probing at 4/5 still settles a hit in ~3 probes, most in one cache
// line.
//
// The index does not own the objects; `KeyOf` returns the id of one (and
// may say where that id lies: a static prefetch(const T&)). Erased
// slots become tombstones; a rehash (sized from the live count) drops them,
// so churn never grows the table without bound. Iteration order is
// unspecified; erasing during iteration is safe, inserting is not (it may
// rehash).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <vector>

namespace cascade::hub {

template <typename T, typename KeyOf>
class IdIndex {
  static_assert(sizeof(void*) == 8, "slots keep a tag in a 64-bit address's top bits");
  static_assert(alignof(T) >= 2, "slot 1 marks an erased entry");

 public:
  // An id with its hash: a find followed by the insert of the same id (a
  // registration) hashes it once; an entry's own key may cost more to read
  // than the id it came as (a packed UUID is spelled to be hashed).
  struct Key {
    explicit Key(std::string_view text) : id(text), hash(IdIndex::hash(text)) {}
    std::string_view id;
    std::uint64_t hash;
  };

  T* find(std::string_view id) const { return find(Key{id}); }
  T* find(const Key& key) const {
    const std::size_t at = slot_of(key);
    return at == kNone ? nullptr : value_of(slots_[at]);
  }

  // `value` must not be indexed yet.
  void insert(T* value) { insert_hashed(value, hash(KeyOf{}(*value))); }
  // The same, for a `value` whose id is `key.id`.
  void insert(T* value, const Key& key) { insert_hashed(value, key.hash); }

  // Room for one more entry, so that the next insert cannot throw: a caller
  // that must not be left half done (an object made, then not indexed) asks
  // for it before it changes anything.
  void reserve_one() {
    if ((live_ + tombstones_ + 1) * 5 > slots_.size() * 4) rehash();
  }

  // The entry of `id`, removed and returned; nullptr when there is none.
  T* erase(std::string_view id) {
    const std::size_t at = slot_of(Key{id});
    if (at == kNone) return nullptr;
    T* erased = value_of(slots_[at]);
    slots_[at] = kTombstone;
    --live_;
    ++tombstones_;
    return erased;
  }

  void prefetch(std::string_view id) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[home(hash(id))]);
  }

  std::size_t size() const { return live_; }
  bool empty() const { return live_ == 0; }
  std::size_t capacity() const { return slots_.size(); }

  // Calls fn(T&) for every entry.
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (T& value : *this)
      fn(value);
  }

  // Forward iteration over the entries (T&), in slot order.
  class Iterator {
   public:
    Iterator(const IdIndex* index, std::size_t at) : index_(index), at_(at) { skip_free(); }
    T& operator*() const { return *value_of(index_->slots_[at_]); }
    T* operator->() const { return value_of(index_->slots_[at_]); }
    Iterator& operator++() {
      ++at_;
      skip_free();
      return *this;
    }
    bool operator==(const Iterator& other) const { return at_ == other.at_; }

   private:
    void skip_free() {
      while (at_ < index_->slots_.size() && index_->slots_[at_] <= kTombstone)
        ++at_;
    }
    const IdIndex* index_;
    std::size_t at_;
  };
  Iterator begin() const { return Iterator(this, 0); }
  Iterator end() const { return Iterator(this, slots_.size()); }

 private:
  static constexpr std::uint64_t kEmpty = 0;
  static constexpr std::uint64_t kTombstone = 1;
  static constexpr int kTagShift = 48;  // user-space addresses fit in the low 48 bits
  static constexpr std::uint64_t kTagMask = ~std::uint64_t{0} << kTagShift;
  static constexpr std::size_t kMinSlots = 8;
  static constexpr std::size_t kNone = ~std::size_t{0};

  static std::uint64_t hash(std::string_view id) { return std::hash<std::string_view>{}(id); }
  // The hash's top bits: the index uses its low ones, so the two are independent.
  static std::uint64_t tag_of(std::uint64_t h) { return h & kTagMask; }
  static T* value_of(std::uint64_t slot) {
    return reinterpret_cast<T*>(static_cast<std::uintptr_t>(slot & ~kTagMask));
  }
  // Where `h`'s probe starts: its low 32 bits scaled to the table (the tag
  // takes the top 16, so the two stay independent).
  std::size_t home(std::uint64_t h) const {
    return static_cast<std::size_t>(((h & 0xffff'ffffu) * slots_.size()) >> 32);
  }
  std::size_t after(std::size_t i) const { return i + 1 == slots_.size() ? 0 : i + 1; }

  // The position of the slot holding `key.id`'s entry; kNone when there is none.
  std::size_t slot_of(const Key& key) const {
    if (slots_.empty()) return kNone;
    for (std::size_t i = home(key.hash);; i = after(i)) {
      const std::uint64_t s = slots_[i];
      if (s == kEmpty) return kNone;
      if (s != kTombstone && (s & kTagMask) == tag_of(key.hash) && KeyOf{}(*value_of(s)) == key.id)
        return i;
    }
  }

  void insert_hashed(T* value, std::uint64_t h) {
    reserve_one();
    place(h, value);
    ++live_;
  }

  void place(std::uint64_t h, T* value) {
    const auto address = static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(value));
    for (std::size_t i = home(h);; i = after(i))
      if (slots_[i] <= kTombstone) {
        if (slots_[i] == kTombstone) --tombstones_;
        slots_[i] = tag_of(h) | address;
        return;
      }
  }

  // Live entries 5/9 of the slots after a rehash, at most 4/5 before the
  // next: linear probing stays short, the table stays small.
  //
  // Every entry's key is read again, from objects all over the heap: a
  // cache miss each, a third of a registration wave's inserts (each entry is
  // moved ~2.3 times as its table grows by 1.44). The keys a few entries
  // ahead are loaded while this one is placed.
  void rehash() {
    std::vector<std::uint64_t> old(std::max(kMinSlots, (live_ + 1) * 9 / 5));
    old.swap(slots_);
    tombstones_ = 0;
    constexpr std::size_t kAhead = 8;
    for (std::size_t i = 0; i < old.size(); ++i) {
      if (i + kAhead < old.size() && old[i + kAhead] > kTombstone)
        prefetch_key(value_of(old[i + kAhead]));
      if (old[i] > kTombstone) place(hash(KeyOf{}(*value_of(old[i]))), value_of(old[i]));
    }
  }

  // Starts loading what KeyOf reads of `value`: where KeyOf::prefetch says,
  // else the object's first cache line.
  static void prefetch_key(const T* value) {
    if constexpr (requires { KeyOf::prefetch(*value); })
      KeyOf::prefetch(*value);
    else
      __builtin_prefetch(value);
  }

  std::vector<std::uint64_t> slots_;
  std::size_t live_ = 0;
  std::size_t tombstones_ = 0;
};

}  // namespace cascade::hub
