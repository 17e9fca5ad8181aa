#include "cascade/tests/common/allocation_counter.hpp"

#include <atomic>
#include <cstdlib>
#include <new>

namespace {
std::atomic<bool> g_count_allocations{false};
std::atomic<std::size_t> g_allocations{0};

void count_one() {
  if (g_count_allocations.load(std::memory_order_relaxed))
    g_allocations.fetch_add(1, std::memory_order_relaxed);
}
}  // namespace

void* operator new(std::size_t size) {
  count_one();
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  throw std::bad_alloc();
}
// The nothrow form too (std::stable_sort's buffer uses it): a sanitizer's
// runtime replaces every form this file does not, and the delete below would
// then free what the runtime's new allocated (ASan: alloc-dealloc-mismatch).
void* operator new(std::size_t size, const std::nothrow_t&) noexcept {
  count_one();
  return std::malloc(size == 0 ? 1 : size);
}
// GCC sees free() paired with `new` once it inlines this replacement and
// warns; pairing them is exactly what a replaced operator new must do.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
#pragma GCC diagnostic pop

namespace cascade::test_support {

std::size_t allocations_during(const std::function<void()>& work) {
  g_allocations = 0;
  g_count_allocations = true;
  work();
  g_count_allocations = false;
  return g_allocations.load();
}

}  // namespace cascade::test_support
