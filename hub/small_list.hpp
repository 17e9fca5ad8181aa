#pragma once
// A list of small trivially copyable items that keeps one item inside and
// more in a heap std::vector, in the space of one item.
//
// Why not std::vector: a hub's node holds the instances it registered, and
// the usual agent registers one. A vector of one is its 24 bytes plus a
// 32-byte heap block; at a million agents the blocks alone were 32 MB
// (docs/benchmarks.md, "Where an instance's bytes go"). Edits go through
// edit(), which hands over a std::vector: the list's own when it holds many
// items (a lower tier's node of 100,000 is edited in place: no copy, no
// allocation unless it grows), a copy of its item or nothing otherwise.
//
// No size field: an item's first word is never zero (OwnedInstance's is its
// service's address), so a zero first word says "not an item": with a zero
// second word the list is empty, else the second word is the vector of many.
// A size beside the item would round a 16-byte item up to 24 bytes, a byte
// a node at a million nodes, eight of them.

#include <cassert>
#include <cstdint>
#include <cstring>
#include <span>
#include <type_traits>
#include <utility>
#include <vector>

namespace cascade::hub {

template <typename T>
class SmallList {
  static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);
  static_assert(sizeof(T) >= 2 * sizeof(void*), "the vector's address goes in the second word");

 public:
  SmallList() = default;
  SmallList(std::span<const T> items) { set(items); }  // implicit, like the vector it replaces
  SmallList(const SmallList& other) : SmallList(other.items()) {}
  SmallList(SmallList&& other) noexcept : storage_(std::exchange(other.storage_, Storage{})) {}
  SmallList& operator=(SmallList other) noexcept {
    std::swap(storage_, other.storage_);
    return *this;
  }
  SmallList& operator=(std::vector<T> items) {
    release();
    adopt(std::move(items));
    return *this;
  }
  ~SmallList() { release(); }

  // Calls fn(std::vector<T>&) to change the items.
  template <typename Fn>
  void edit(Fn&& fn) {
    std::vector<T>* held = many();
    if (held == nullptr) {
      std::vector<T> items = take();
      fn(items);
      adopt(std::move(items));
      return;
    }
    try {
      fn(*held);
    } catch (...) {
      settle();
      throw;
    }
    settle();
  }

  std::span<const T> items() const {
    if (const std::vector<T>* held = many()) return *held;
    if (holds_one()) return {&storage_.one, 1};
    return {};
  }
  const T* begin() const { return items().data(); }
  const T* end() const { return begin() + size(); }
  std::size_t size() const { return items().size(); }
  bool empty() const { return size() == 0; }
  std::vector<T> to_vector() const { return {begin(), end()}; }

 private:
  union Storage {
    T one;
    std::uintptr_t words[2];  // {0, 0}: empty; {0, address}: the vector of many
  };

  bool holds_one() const { return storage_.words[0] != 0; }
  std::vector<T>* many() const {
    if (holds_one()) return nullptr;
    return reinterpret_cast<std::vector<T>*>(storage_.words[1]);
  }
  void hold_one(const T& item) {
    storage_.one = item;
    assert(holds_one() && "an item's first word is never zero");
  }
  void hold_many(std::vector<T>* items) {
    storage_.words[0] = 0;
    storage_.words[1] = reinterpret_cast<std::uintptr_t>(items);
  }

  // Takes a copy of `items`; the list must hold nothing.
  void set(std::span<const T> items) {
    if (items.size() > 1) return adopt(std::vector<T>(items.begin(), items.end()));
    if (items.size() == 1) hold_one(items.front());
  }
  // Takes `items` as the list's contents; the list must hold nothing.
  void adopt(std::vector<T>&& items) {
    if (items.size() == 1)
      hold_one(items.front());
    else if (items.size() > 1)
      hold_many(new std::vector<T>(std::move(items)));
  }
  // The items, moved out; the list is left empty.
  std::vector<T> take() {
    std::vector<T> items;
    if (std::vector<T>* held = many())
      items = std::move(*held);
    else if (holds_one())
      items.push_back(storage_.one);
    release();
    return items;
  }
  // After the held vector was edited: a vector left with one item or none
  // gives way to the inline form.
  void settle() {
    std::vector<T>* held = many();
    if (held->size() > 1) return;
    std::vector<T> rest = std::move(*held);
    release();
    adopt(std::move(rest));
  }
  void release() {
    delete many();
    storage_ = Storage{};
  }

  Storage storage_{};
};

}  // namespace cascade::hub
