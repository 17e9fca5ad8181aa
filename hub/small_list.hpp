#pragma once
// An immutable list of small trivially copyable items that keeps one item
// inside and more in one exactly sized heap block.
//
// Why not std::vector: a hub's node holds the instances it registered, and
// the usual agent registers one. A vector of one is its 24 bytes plus a
// 32-byte heap block; at a million agents the blocks alone were 32 MB
// (docs/benchmarks.md, "Where an instance's bytes go"). Edits are made on a
// std::vector and the result assigned: nodes change their sets rarely and
// read them on every delta.

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
  SmallList& operator=(const std::vector<T>& items) { return *this = SmallList(items); }
  ~SmallList() { release(); }

  std::span<const T> items() const { return {data(), size_}; }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size_; }
  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  std::vector<T> to_vector() const { return {begin(), end()}; }

 private:
  const T* data() const { return size_ <= 1 ? &storage_.one : storage_.many; }
  void set(std::span<const T> items) {
    size_ = static_cast<std::uint32_t>(items.size());
    if (items.size() == 1) {
      storage_.one = items.front();
    } else if (items.size() > 1) {
      storage_.many = new T[items.size()];
      std::copy(items.begin(), items.end(), storage_.many);
    }
  }
  void release() {
    if (size_ > 1) delete[] storage_.many;
  }

  union Storage {
    T one;
    T* many;
  };
  Storage storage_{};
  std::uint32_t size_ = 0;
};

}  // namespace cascade::hub
