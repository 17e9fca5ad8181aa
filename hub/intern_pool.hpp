#pragma once
// One shared copy of values many records repeat.
//
// A registry of a million instances holds a few dozen distinct zones and a
// few hundred distinct metadata sets: a std::map of two pairs per instance
// was 157 bytes of each instance's ~800 (docs/benchmarks.md, "Where an
// instance's bytes go"). Interned, each instance holds a 16-byte reference
// and each distinct value lives once.
//
// The pool keeps weak references only, so a value lives exactly as long as
// some record holds it: a value no record uses any more is freed with its
// last reference, and its pool slot is reused by the next value of the same
// hash or dropped by the next prune (run when the pool doubled since the
// last one), so a stream of distinct values never grows the pool beyond
// twice what is in use. Single-threaded, like the registry that owns it.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>

namespace cascade::hub {

template <typename T, typename Hash = std::hash<T>>
class InternPool {
 public:
  using Ref = std::shared_ptr<const T>;

  // The shared copy of `value`, made on its first use.
  Ref intern(const T& value) {
    const std::size_t h = Hash{}(value);
    auto [first, last] = slots_.equal_range(h);
    auto free_slot = slots_.end();
    for (auto it = first; it != last; ++it) {
      if (Ref held = it->second.lock()) {
        if (*held == value) return held;
      } else {
        free_slot = it;
      }
    }
    Ref made = std::make_shared<const T>(value);
    if (free_slot != slots_.end()) {
      free_slot->second = made;
      return made;
    }
    slots_.emplace(h, made);
    if (slots_.size() >= prune_at_) prune();
    return made;
  }

  // Slots held, live or not yet pruned (for tests and diagnostics).
  std::size_t slots() const { return slots_.size(); }

 private:
  static constexpr std::size_t kFirstPrune = 64;

  void prune() {
    std::erase_if(slots_, [](const auto& slot) { return slot.second.expired(); });
    prune_at_ = std::max(kFirstPrune, slots_.size() * 2);
  }

  std::unordered_multimap<std::size_t, std::weak_ptr<const T>> slots_;
  std::size_t prune_at_ = kFirstPrune;
};

// A string held through an InternPool<std::string>: 16 bytes however long
// it is and however many hold it, nothing allocated for "".
class SharedText {
 public:
  SharedText() = default;
  SharedText(std::string_view text, InternPool<std::string>& pool)
      : ref_(text.empty() ? nullptr : pool.intern(std::string(text))) {}
  const std::string& str() const { return ref_ ? *ref_ : empty_text(); }
  bool empty() const { return ref_ == nullptr; }
  friend bool operator==(const SharedText& a, std::string_view b) { return a.str() == b; }
  // The one empty string the registry's entries refer to for "".
  static const std::string& empty_text() {
    static const std::string kEmpty;
    return kEmpty;
  }

 private:
  InternPool<std::string>::Ref ref_;
};

}  // namespace cascade::hub
