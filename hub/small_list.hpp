#pragma once
// A list of small trivially copyable items that keeps one item inside and
// more in a heap std::vector.
//
// Why not std::vector: a hub's node holds the instances it registered, and
// the usual agent registers one. A vector of one is its 24 bytes plus a
// 32-byte heap block; at a million agents the blocks alone were 32 MB
// (docs/benchmarks.md, "Where an instance's bytes go"). Edits go through
// edit(), which hands over a std::vector: the list's own when it holds many
// items (a lower tier's node of 100,000 is edited in place: no copy, no
// allocation unless it grows), a copy of its item or nothing otherwise.

#include <algorithm>
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

 public:
  SmallList() = default;
  SmallList(std::span<const T> items) { set(items); }  // implicit, like the vector it replaces
  SmallList(const SmallList& other) : SmallList(other.items()) {}
  SmallList(SmallList&& other) noexcept
      : storage_(other.storage_), size_(std::exchange(other.size_, 0)) {}
  SmallList& operator=(SmallList other) noexcept {
    std::swap(storage_, other.storage_);
    std::swap(size_, other.size_);
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
    if (size_ <= 1) {
      std::vector<T> items = take();
      fn(items);
      adopt(std::move(items));
      return;
    }
    try {
      fn(*storage_.many);
    } catch (...) {
      settle();
      throw;
    }
    settle();
  }

  std::span<const T> items() const { return {data(), size_}; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::vector<T> to_vector() const { return {begin(), end()}; }

 private:
  const T* data() const { return size_ <= 1 ? &storage_.one : storage_.many->data(); }
  // Takes a copy of `items`; the list must hold nothing.
  void set(std::span<const T> items) {
    if (items.size() > 1) return adopt(std::vector<T>(items.begin(), items.end()));
    size_ = static_cast<std::uint32_t>(items.size());
    if (size_ == 1) storage_.one = items.front();
  }
  // Takes `items` as the list's contents; the list must hold nothing.
  void adopt(std::vector<T>&& items) {
    size_ = static_cast<std::uint32_t>(items.size());
    if (items.size() == 1)
      storage_.one = items.front();
    else if (items.size() > 1)
      storage_.many = new std::vector<T>(std::move(items));
  }
  // The items, moved out; the list is left empty.
  std::vector<T> take() {
    std::vector<T> items;
    if (size_ > 1)
      items = std::move(*storage_.many);
    else if (size_ == 1)
      items.push_back(storage_.one);
    release();
    return items;
  }
  // After the held vector was edited: the size follows it, and a vector left
  // with one item or none gives way to the inline form.
  void settle() {
    std::vector<T>* many = storage_.many;
    if (many->size() > 1) {
      size_ = static_cast<std::uint32_t>(many->size());
      return;
    }
    std::vector<T> rest = std::move(*many);
    delete many;
    size_ = 0;
    adopt(std::move(rest));
  }
  void release() {
    if (size_ > 1) delete storage_.many;
    size_ = 0;
  }

  union Storage {
    T one;
    std::vector<T>* many;
  };
  Storage storage_{};
  std::uint32_t size_ = 0;
};

}  // namespace cascade::hub
