#pragma once
// The hub's nodes: kept in slabs of fixed-size slots, found by id through an
// IdIndex.
//
// Why not std::unordered_map<std::string, Node>: its key is a second copy of
// the id the node already holds, and each map node adds a next pointer, a
// cached hash and a bucket: ~64 bytes per node, at a million nodes 64 MB that
// the index already makes redundant. Why not one heap block per node (as
// before): malloc adds an 8-byte header and rounds to 16, and the vector of
// pointers that owned the blocks took 8–16 bytes more: ~28 bytes a node that
// a slab does not spend (docs/benchmarks.md, "Where an instance's bytes go").
//
// Slots come in chunks of kChunkSlots; a bitmap per chunk says which hold a
// node. A new node takes a free slot in the lowest-numbered chunk that has
// one, so a fleet that shrinks empties its highest chunks, and a chunk left
// empty is freed. A node never moves in memory, so pointers to it (the lease
// queue's, the index's) stay valid until it is erased. Each node knows its
// slot (`T::table_slot`), so erasure needs no search. Iteration order is
// unspecified.

#include <array>
#include <bit>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <new>
#include <set>
#include <stdexcept>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/hub/id_index.hpp"

namespace cascade::hub {

template <typename T, typename KeyOf>
class NodeTable {
 public:
  static constexpr std::uint32_t kChunkSlots = 256;

  NodeTable() = default;
  NodeTable(const NodeTable&) = delete;
  NodeTable& operator=(const NodeTable&) = delete;
  // The nodes stay where they are: a moved table hands its chunks over.
  NodeTable(NodeTable&& other) noexcept
      : index_(std::exchange(other.index_, {})),
        chunks_(std::exchange(other.chunks_, {})),
        open_(std::exchange(other.open_, {})),
        size_(std::exchange(other.size_, 0)) {}
  NodeTable& operator=(NodeTable&&) = delete;
  ~NodeTable() {
    for_each([](T& node) { node.~T(); });
  }

  T* find(std::string_view id) const { return index_.find(id); }
  bool contains(std::string_view id) const { return find(id) != nullptr; }
  void prefetch(std::string_view id) const { index_.prefetch(id); }

  // Constructs a node from `args` in a free slot; its id (KeyOf reads it)
  // must be one no node here has.
  template <typename... Args>
  T& add(Args&&... args) {
    index_.reserve_one();  // what may throw comes before the table changes
    const std::uint32_t c = open_chunk();
    Chunk& chunk = *chunks_[c];
    const std::uint32_t i = chunk.first_free();
    T* node = ::new (chunk.at(i)) T(std::forward<Args>(args)...);
    node->table_slot = c * kChunkSlots + i;
    chunk.mark(i);
    if (chunk.count == kChunkSlots) open_.erase(c);
    ++size_;
    index_.insert(node);
    return *node;
  }

  // `node` is destroyed.
  void erase(T& node) {
    index_.erase(KeyOf{}(node));
    const std::uint32_t c = node.table_slot / kChunkSlots;
    const std::uint32_t i = node.table_slot % kChunkSlots;
    Chunk& chunk = *chunks_[c];
    assert(chunk.at(i) == static_cast<void*>(&node));
    node.~T();
    if (chunk.count == kChunkSlots) open_.insert(c);
    chunk.unmark(i);
    --size_;
    if (chunk.count == 0) release(c);
  }

  std::size_t size() const { return size_; }
  // Chunks allocated (for tests and memory accounting).
  std::size_t chunks_held() const {
    std::size_t n = 0;
    for (const auto& chunk : chunks_)
      n += chunk != nullptr;
    return n;
  }

  // `fn` must not add or erase nodes.
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (auto& chunk : chunks_)
      if (chunk) chunk->for_each([&](void* slot) { fn(*std::launder(static_cast<T*>(slot))); });
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const auto& chunk : chunks_)
      if (chunk)
        chunk->for_each(
            [&](void* slot) { fn(std::as_const(*std::launder(static_cast<T*>(slot)))); });
  }

 private:
  struct Chunk {
    static constexpr std::uint32_t kWords = kChunkSlots / 64;
    alignas(T) std::byte bytes[kChunkSlots * sizeof(T)];
    std::array<std::uint64_t, kWords> live{};
    std::uint32_t count = 0;

    void* at(std::uint32_t i) { return bytes + std::size_t{i} * sizeof(T); }
    std::uint32_t first_free() const {
      for (std::uint32_t w = 0; w < kWords; ++w)
        if (live[w] != ~std::uint64_t{0})
          return w * 64 + static_cast<std::uint32_t>(std::countr_one(live[w]));
      assert(false && "a full chunk is not open");
      return kChunkSlots;
    }
    void mark(std::uint32_t i) {
      live[i / 64] |= std::uint64_t{1} << (i % 64);
      ++count;
    }
    void unmark(std::uint32_t i) {
      live[i / 64] &= ~(std::uint64_t{1} << (i % 64));
      --count;
    }
    template <typename Fn>
    void for_each(Fn&& fn) {
      for (std::uint32_t w = 0; w < kWords; ++w)
        for (std::uint64_t bits = live[w]; bits != 0; bits &= bits - 1)
          fn(at(w * 64 + static_cast<std::uint32_t>(std::countr_zero(bits))));
    }
  };
  static_assert(kChunkSlots % 64 == 0);

  // The lowest-numbered chunk with a free slot, allocated if it was freed.
  std::uint32_t open_chunk() {
    if (open_.empty()) {
      if (chunks_.size() >= (std::uint64_t{1} << 32) / kChunkSlots)
        throw std::length_error("node table: no slot left");
      open_.insert(static_cast<std::uint32_t>(chunks_.size()));
      chunks_.emplace_back();
    }
    const std::uint32_t c = *open_.begin();
    if (!chunks_[c]) chunks_[c] = std::make_unique_for_overwrite<Chunk>();  // slots raw
    return c;
  }

  // Frees an empty chunk; trailing freed chunks leave the vector.
  void release(std::uint32_t c) {
    chunks_[c].reset();
    while (!chunks_.empty() && !chunks_.back()) {
      open_.erase(static_cast<std::uint32_t>(chunks_.size() - 1));
      chunks_.pop_back();
    }
  }

  IdIndex<T, KeyOf> index_;
  std::vector<std::unique_ptr<Chunk>> chunks_;  // nullptr: freed while a later one is in use
  std::set<std::uint32_t> open_;                // chunks with a free slot, freed ones included
  std::size_t size_ = 0;
};

}  // namespace cascade::hub
