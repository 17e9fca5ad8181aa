#pragma once
// Times one piece of work for a histogram. What the metrics time (handling a
// frame, a commit) takes microseconds, below the millisecond of the loops'
// Clock, so it reads the steady clock itself; it measures the process, it
// decides nothing, so no core or test depends on it.

#include <chrono>

namespace cascade::metrics {

class Stopwatch {
 public:
  Stopwatch() : started_(std::chrono::steady_clock::now()) {}
  double seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
  }

 private:
  std::chrono::steady_clock::time_point started_;
};

}  // namespace cascade::metrics
