#pragma once
// Runs two partitions of a simulation in lock step: window after window, the
// first on the calling thread and the second on a worker thread of its own,
// or both on the calling thread one after the other (the same run: each
// partition sees only its own state and what crossed at earlier barriers).
//
// The caller makes the windows no longer than the shortest delay between the
// partitions, so that nothing one does in a window can reach the other within
// it; what they sent each other crosses while both wait (the caller's work
// between two run() calls).
//
// The hand-off spins (the worker has a core to itself) and yields when a spin
// lasts: a window is a millisecond of simulated time, well under one of
// real time, and a futex wake per window would cost more than the window.
// Thread-safety: one thread calls run(); the worker runs only `second`.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <thread>

#include "cascade/common/clock.hpp"

namespace cascade::sim {

class LockStep {
 public:
  using Window = std::function<void(MonoTime until)>;

  LockStep(Window first, Window second, bool threaded);
  ~LockStep();  // stops and joins the worker
  LockStep(const LockStep&) = delete;
  LockStep& operator=(const LockStep&) = delete;

  // Runs both partitions' windows up to `until`; returns when both are done.
  // What the second threw is rethrown here.
  void run(MonoTime until);

  // How the work splits, threaded: in how many windows the first partition
  // finished before the second and waited for it, and how long each thread
  // waited in all (the worker also while the caller works between windows).
  // Measured for the report only: nothing in a run depends on it.
  struct Balance {
    std::uint64_t windows = 0;
    std::uint64_t first_waited = 0;
    std::chrono::nanoseconds first_wait{0};
    std::chrono::nanoseconds second_wait{0};
  };
  Balance balance() const { return balance_; }

 private:
  void work();
  void run_second(std::uint64_t window);  // records what it threw, then marks the window done
  // Spins, then yields, until `value` reaches `expected`; adds the time it took to `waited`.
  static void wait_for(const std::atomic<std::uint64_t>& value, std::uint64_t expected,
                       std::chrono::nanoseconds& waited);

  Window first_;
  Window second_;
  MonoTime until_{};
  Balance balance_{};
  std::chrono::nanoseconds second_wait_{0};  // the worker's; into balance_ at each window's end
  std::exception_ptr failure_;
  std::atomic<std::uint64_t> posted_{0};  // the window the worker is to run; kStop ends it
  std::atomic<std::uint64_t> done_{0};    // the last window the worker finished
  std::thread worker_;                    // not started unless threaded
};

}  // namespace cascade::sim
