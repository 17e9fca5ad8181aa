#pragma once
// One shared copy of values many records repeat.
//
// A registry of a million instances holds a few dozen distinct zones and a
// few hundred distinct metadata sets: a std::map of two pairs per instance
// was 157 bytes of each instance's ~800 (docs/benchmarks.md, "Where an
// instance's bytes go"). Interned, each instance holds an 8-byte reference
// and each distinct value lives once.
//
// References are counted in the shared value itself (a std::shared_ptr is
// twice the size, and a million records hold two or three each): a value
// lives exactly as long as some record holds it and leaves the pool with its
// last reference, so a stream of distinct values never grows the pool beyond
// what is in use. Single-threaded, like the registry that owns it: neither
// the counts nor the pool are atomic.
//
// A moved pool keeps its values (they point at its slots, which move with it
// as one block); references that outlive the pool keep their value alive and
// free it on their own.

#include <cstddef>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>

namespace cascade::hub {

template <typename T, typename Hash = std::hash<T>>
class InternPool {
  struct Slots;
  // One distinct value and the count of the references to it.
  struct Shared {
    Shared(const T& v, std::size_t h, Slots* s) : value(v), hash(h), slots(s) {}
    const T value;
    const std::size_t hash;
    Slots* slots;  // nullptr once the pool is gone
    std::size_t refs = 0;
  };
  struct Slots {
    std::unordered_multimap<std::size_t, Shared*> by_hash;
    void erase(const Shared* shared) {
      auto [first, last] = by_hash.equal_range(shared->hash);
      for (auto it = first; it != last; ++it) {
        if (it->second == shared) {
          by_hash.erase(it);
          return;
        }
      }
    }
  };

 public:
  // A counted reference to a shared value; nullptr: none.
  class Ref {
   public:
    Ref() = default;
    Ref(std::nullptr_t) {}  // implicit: "no value" reads as nullptr, as for a pointer
    Ref(const Ref& other) : shared_(other.shared_) { acquire(); }
    Ref(Ref&& other) noexcept : shared_(std::exchange(other.shared_, nullptr)) {}
    Ref& operator=(Ref other) noexcept {
      std::swap(shared_, other.shared_);
      return *this;
    }
    ~Ref() { release(); }

    const T& operator*() const { return shared_->value; }
    const T* operator->() const { return &shared_->value; }
    const T* get() const { return shared_ != nullptr ? &shared_->value : nullptr; }
    explicit operator bool() const { return shared_ != nullptr; }
    friend bool operator==(const Ref& ref, std::nullptr_t) { return ref.shared_ == nullptr; }

   private:
    friend class InternPool;
    explicit Ref(Shared* shared) : shared_(shared) { acquire(); }
    void acquire() {
      if (shared_ != nullptr) ++shared_->refs;
    }
    void release() {
      if (shared_ == nullptr || --shared_->refs > 0) return;
      if (shared_->slots != nullptr) shared_->slots->erase(shared_);
      delete shared_;
    }

    Shared* shared_ = nullptr;
  };

  InternPool() = default;
  InternPool(InternPool&&) noexcept = default;
  InternPool& operator=(InternPool&& other) noexcept {
    if (this != &other) {
      orphan();
      slots_ = std::move(other.slots_);
    }
    return *this;
  }
  ~InternPool() { orphan(); }

  // The shared copy of `value`, made on its first use.
  Ref intern(const T& value) {
    if (!slots_) slots_ = std::make_unique<Slots>();
    const std::size_t h = Hash{}(value);
    auto [first, last] = slots_->by_hash.equal_range(h);
    for (auto it = first; it != last; ++it)
      if (it->second->value == value) return Ref(it->second);
    auto* made = new Shared(value, h, slots_.get());
    slots_->by_hash.emplace(h, made);
    return Ref(made);
  }

  // Distinct values held (for tests and diagnostics).
  std::size_t slots() const { return slots_ ? slots_->by_hash.size() : 0; }

 private:
  // The values still referenced outlive the pool: their last reference frees them.
  void orphan() {
    if (!slots_) return;  // moved from
    for (auto& [hash, shared] : slots_->by_hash)
      shared->slots = nullptr;
  }

  std::unique_ptr<Slots> slots_ = std::make_unique<Slots>();
};

// A string held through an InternPool<std::string>: 8 bytes however long
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
