#pragma once
// Counts the heap allocations made while a piece of code runs, for tests
// that promise an allocation-free (or bounded) path. The replaced global
// operator new and delete live in tests/common/allocation_counter.cpp: a
// test program that uses this links that file once.
//
//   const auto n = test_support::allocations_during([&] { centre.on_beat(...); });
//   EXPECT_EQ(n, 0u);

#include <cstddef>
#include <functional>

namespace cascade::test_support {

// The heap allocations `work` made (on any thread, while it ran).
std::size_t allocations_during(const std::function<void()>& work);

}  // namespace cascade::test_support
