#pragma once
// The hub's nodes: owned one allocation each, found by id through an
// IdIndex.
//
// Why not std::unordered_map<std::string, Node>: its key is a second copy of
// the id the node already holds, and each map node adds a next pointer, a
// cached hash and a bucket: ~64 bytes per node, at a million nodes 64 MB that
// the index already makes redundant. Here the index is the only lookup, and
// the table only keeps the nodes alive: a vector of pointers where each node
// knows its position (`T::table_slot`), so removal is a swap with the last.
// A node never moves in memory, so pointers to it (the lease queue's, the
// index's) stay valid until it is erased. Iteration order is unspecified.

#include <cstddef>
#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "cascade/hub/id_index.hpp"

namespace cascade::hub {

template <typename T, typename KeyOf>
class NodeTable {
 public:
  T* find(std::string_view id) const { return index_.find(id); }
  bool contains(std::string_view id) const { return find(id) != nullptr; }
  void prefetch(std::string_view id) const { index_.prefetch(id); }

  // Takes a node whose id no node here has (KeyOf reads it).
  T& add(std::unique_ptr<T> node) {
    node->table_slot = static_cast<decltype(node->table_slot)>(nodes_.size());
    T& added = *node;
    nodes_.push_back(std::move(node));
    index_.insert(&added);
    return added;
  }

  // `node` is destroyed.
  void erase(T& node) {
    index_.erase(KeyOf{}(node));
    const std::size_t slot = node.table_slot;
    std::swap(nodes_[slot], nodes_.back());
    nodes_[slot]->table_slot = static_cast<decltype(node.table_slot)>(slot);
    nodes_.pop_back();
  }

  std::size_t size() const { return nodes_.size(); }

  template <typename Fn>
  void for_each(Fn&& fn) {
    for (auto& node : nodes_)
      fn(*node);
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    for (const auto& node : nodes_)
      fn(std::as_const(*node));
  }

 private:
  IdIndex<T, KeyOf> index_;
  std::vector<std::unique_ptr<T>> nodes_;
};

}  // namespace cascade::hub
