#pragma once
// An editable MessagePack value tree for tests that need frames the encoder
// would never produce: extra trailing fields, a wrong type in one position, an
// out-of-range number. Parse a valid frame, edit the tree, pack it again.
// pack() writes the smallest encoding of each value, like the codec does, so an
// unedited tree packs back to the bytes it came from.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <functional>
#include <msgpack.hpp>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

namespace cascade::wire {

struct Node;
using Array = std::vector<Node>;
using Map = std::vector<std::pair<Node, Node>>;
struct Nil {
  bool operator==(const Nil&) const = default;
};
// A MessagePack bin (revision 6: config values), not a str.
struct Bin {
  std::string bytes;
  bool operator==(const Bin&) const = default;
};

struct Node {
  std::variant<Nil, bool, std::uint64_t, std::int64_t, double, std::string, Bin, Array, Map> v;

  Node() = default;
  template <typename T>
  Node(T value) : v(std::move(value)) {}  // NOLINT: implicit on purpose, trees read as literals
  Node(int value) : v(static_cast<std::int64_t>(value)) {
    if (value >= 0) v = static_cast<std::uint64_t>(value);
  }
  Node(const char* s) : v(std::string(s)) {}

  Array& array() { return std::get<Array>(v); }
  Node& operator[](std::size_t i) { return array().at(i); }
  bool operator==(const Node&) const = default;
};

inline Node from_object(const msgpack::object& o) {
  switch (o.type) {
    case msgpack::type::NIL:
      return Nil{};
    case msgpack::type::BOOLEAN:
      return o.via.boolean;
    case msgpack::type::POSITIVE_INTEGER:
      return o.via.u64;
    case msgpack::type::NEGATIVE_INTEGER:
      return o.via.i64;
    case msgpack::type::FLOAT32:
    case msgpack::type::FLOAT64:
      return o.via.f64;
    case msgpack::type::STR:
      return std::string(o.via.str.ptr, o.via.str.size);
    case msgpack::type::BIN:
      return Bin{std::string(o.via.bin.ptr, o.via.bin.size)};
    case msgpack::type::ARRAY: {
      Array a;
      for (std::uint32_t i = 0; i < o.via.array.size; ++i)
        a.push_back(from_object(o.via.array.ptr[i]));
      return a;
    }
    case msgpack::type::MAP: {
      Map m;
      for (std::uint32_t i = 0; i < o.via.map.size; ++i)
        m.emplace_back(from_object(o.via.map.ptr[i].key), from_object(o.via.map.ptr[i].val));
      return m;
    }
    default:
      ADD_FAILURE() << "wire_tree: unsupported MessagePack type " << o.type;
      return Nil{};
  }
}

// Parses a frame that is known to be valid MessagePack (a golden sample).
inline Node parse(std::string_view bytes) {
  const auto handle = msgpack::unpack(bytes.data(), bytes.size());
  return from_object(handle.get());
}

struct Sink {
  std::string& out;
  void write(const char* data, std::size_t size) { out.append(data, size); }
};

inline void pack_node(msgpack::packer<Sink>& pk, Sink& sink, const Node& n) {
  struct Visitor {
    msgpack::packer<Sink>& pk;
    Sink& sink;
    void operator()(Nil) { pk.pack_nil(); }
    void operator()(bool b) { b ? pk.pack_true() : pk.pack_false(); }
    void operator()(std::uint64_t u) { pk.pack_uint64(u); }
    void operator()(std::int64_t i) { pk.pack_int64(i); }
    // msgpack's pack_double writes 1.0 as the integer 1; a test that means a
    // float must get float 64 (0xcb, big-endian IEEE 754).
    void operator()(double d) {
      std::uint64_t bits = 0;
      std::memcpy(&bits, &d, sizeof bits);
      char raw[9] = {'\xcb'};
      for (int i = 0; i < 8; ++i)
        raw[1 + i] = static_cast<char>(bits >> (56 - 8 * i));
      sink.write(raw, sizeof raw);
    }
    void operator()(const std::string& s) {
      pk.pack_str(static_cast<std::uint32_t>(s.size()));
      pk.pack_str_body(s.data(), static_cast<std::uint32_t>(s.size()));
    }
    void operator()(const Bin& b) {
      pk.pack_bin(static_cast<std::uint32_t>(b.bytes.size()));
      pk.pack_bin_body(b.bytes.data(), static_cast<std::uint32_t>(b.bytes.size()));
    }
    void operator()(const Array& a) {
      pk.pack_array(static_cast<std::uint32_t>(a.size()));
      for (const auto& item : a)
        pack_node(pk, sink, item);
    }
    void operator()(const Map& m) {
      pk.pack_map(static_cast<std::uint32_t>(m.size()));
      for (const auto& [k, val] : m) {
        pack_node(pk, sink, k);
        pack_node(pk, sink, val);
      }
    }
  };
  std::visit(Visitor{pk, sink}, n.v);
}

inline std::string pack(const Node& n) {
  std::string out;
  Sink sink{out};
  msgpack::packer<Sink> pk(sink);
  pack_node(pk, sink, n);
  return out;
}

// Calls fn on every node below the root (array items, map keys and values), in
// pre-order; the visit order is stable, so an index names the same node in two
// copies of a tree.
inline void for_each_below(Node& root, const std::function<void(Node&)>& fn) {
  if (auto* a = std::get_if<Array>(&root.v)) {
    for (auto& item : *a) {
      fn(item);
      for_each_below(item, fn);
    }
  } else if (auto* m = std::get_if<Map>(&root.v)) {
    for (auto& [k, val] : *m) {
      fn(k);
      for_each_below(k, fn);
      fn(val);
      for_each_below(val, fn);
    }
  }
}

inline std::size_t count_below(Node root) {
  std::size_t n = 0;
  for_each_below(root, [&](Node&) { ++n; });
  return n;
}

// A copy of `root` with its index-th node (for_each_below order) replaced by edit(node).
inline Node with_edited_node(Node root, std::size_t index,
                             const std::function<Node(const Node&)>& edit) {
  std::size_t i = 0;
  for_each_below(root, [&](Node& n) {
    if (i++ == index) n = edit(n);
  });
  return root;
}

// Nodes reached by a path of array indices, where kEvery stands for every item
// of that array: {8, kEvery, 7, kEvery} = every upsert of every update of a DownBeat.
inline constexpr std::size_t kEvery = static_cast<std::size_t>(-1);

inline void for_each_at(Node& node, std::span<const std::size_t> path,
                        const std::function<void(Node&)>& fn) {
  if (std::holds_alternative<Nil>(node.v)) return;  // an absent optional record
  if (path.empty()) return fn(node);
  auto& items = node.array();
  const auto rest = path.subspan(1);
  if (path[0] != kEvery) return for_each_at(items.at(path[0]), rest, fn);
  for (auto& item : items)
    for_each_at(item, rest, fn);
}

}  // namespace cascade::wire
