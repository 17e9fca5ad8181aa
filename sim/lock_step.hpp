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

 private:
  void work();
  void run_second(std::uint64_t window);  // records what it threw, then marks the window done
  static void wait_for(const std::atomic<std::uint64_t>& value, std::uint64_t expected);

  Window first_;
  Window second_;
  MonoTime until_{};
  std::exception_ptr failure_;
  std::atomic<std::uint64_t> posted_{0};  // the window the worker is to run; kStop ends it
  std::atomic<std::uint64_t> done_{0};    // the last window the worker finished
  std::thread worker_;                    // not started unless threaded
};

}  // namespace cascade::sim
