#pragma once
// Time spent inside a core's calls (HubCore, AgentCore), for benchmarks that
// report the cost of each core per message. Off unless a world's config asks
// for it: a timed call reads the steady clock twice (~0.1 us here), a thread
// CPU clock would cost a system call (~5 us) per read on this kind of VM.
// On a simulation's one thread the time inside a call is its CPU time, except
// where the machine's other load preempted it.
// Thread-safety: none.

#include <chrono>
#include <cstdint>

namespace cascade::sim {

struct CoreTime {
  std::uint64_t calls = 0;  // timed calls into the core
  std::uint64_t ns = 0;     // steady-clock nanoseconds inside them
};

// Runs `call` and returns its result; adds its duration to `total` when `on`.
template <typename Call>
decltype(auto) timed_call(bool on, CoreTime& total, Call&& call) {
  if (!on) return call();
  struct Stopwatch {
    CoreTime& total;
    std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
    ~Stopwatch() {
      ++total.calls;
      total.ns += static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                                 std::chrono::steady_clock::now() - start)
                                                 .count());
    }
  } stopwatch{total};
  return call();
}

}  // namespace cascade::sim
