#pragma once
// Peak virtual memory of this process, for tests that show a decoder reserves
// no more than its input can hold (run them in a fresh process: EXPECT_EXIT).

#include <cstdint>
#include <fstream>
#include <string>

namespace cascade::test_support {

// VmPeak from /proc/self/status, in KiB (0 where unavailable).
inline std::uint64_t vm_peak_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmPeak:", 0) == 0) return std::stoull(line.substr(7));
  return 0;
}

}  // namespace cascade::test_support
