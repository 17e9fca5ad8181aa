#include "cascade/sim/lock_step.hpp"

#include <limits>
#include <utility>

namespace cascade::sim {

namespace {
constexpr std::uint64_t kStop = std::numeric_limits<std::uint64_t>::max();
constexpr int kSpinsBeforeYield = 4096;
}  // namespace

LockStep::LockStep(Window first, Window second, bool threaded)
    : first_(std::move(first)), second_(std::move(second)) {
  if (threaded) worker_ = std::thread([this] { work(); });
}

LockStep::~LockStep() {
  if (!worker_.joinable()) return;
  posted_.store(kStop, std::memory_order_release);
  worker_.join();
}

// Both windows run whatever the other throws (on one thread as on two);
// the first partition's failure is the one rethrown when both fail.
void LockStep::run(MonoTime until) {
  until_ = until;
  const std::uint64_t window = done_.load(std::memory_order_relaxed) + 1;
  if (worker_.joinable()) posted_.store(window, std::memory_order_release);  // publishes until_
  std::exception_ptr mine;
  try {
    first_(until);
  } catch (...) {
    mine = std::current_exception();
  }
  ++balance_.windows;
  if (worker_.joinable()) {
    if (done_.load(std::memory_order_relaxed) < window) ++balance_.first_waited;
    wait_for(done_, window, balance_.first_wait);  // acquires what the worker wrote
  } else {
    run_second(window);
  }
  if (mine) std::rethrow_exception(mine);
  if (failure_) std::rethrow_exception(std::exchange(failure_, nullptr));
}

void LockStep::run_second(std::uint64_t window) {
  try {
    second_(until_);
  } catch (...) {
    failure_ = std::current_exception();
  }
  balance_.second_wait = second_wait_;  // published with done_
  done_.store(window, std::memory_order_release);
}

void LockStep::work() {
  for (std::uint64_t window = 1;; ++window) {
    wait_for(posted_, window, second_wait_);
    if (posted_.load(std::memory_order_acquire) == kStop) return;
    run_second(window);
  }
}

// Until `value` reaches `expected` (or the stop mark, which is larger). The
// clock is read only when the value is not there yet.
void LockStep::wait_for(const std::atomic<std::uint64_t>& value, std::uint64_t expected,
                        std::chrono::nanoseconds& waited) {
  if (value.load(std::memory_order_acquire) >= expected) return;
  const auto start = std::chrono::steady_clock::now();
  for (int spins = 0; value.load(std::memory_order_acquire) < expected;)
    if (++spins >= kSpinsBeforeYield) std::this_thread::yield();
  waited += std::chrono::steady_clock::now() - start;
}

}  // namespace cascade::sim
