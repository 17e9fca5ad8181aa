#pragma once
// Small helpers for the benchmark programs: latency percentiles, machine
// notes (load average, CPU model), a temporary directory, number formatting,
// target verdicts and instance addresses. Header-only; nothing here touches the product.

#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>
#include <vector>

#include "cascade/common/log.hpp"

namespace cascade::bench {

// A progress line on stderr (stdout carries only the results), tagged with
// the bench and its pid so a profiler can be attached at the right moment.
inline void progress(const char* bench, const std::string& what) {
  std::fprintf(stderr, "[%s pid %d] %s\n", bench, static_cast<int>(getpid()), what.c_str());
}

// The main() of a benchmark program: a bad option exits 2, a failure while
// running exits 1 (after what was printed so far), both with one line on stderr.
template <typename Options, typename Parse, typename Run>
int bench_main(int argc, char** argv, const char* program, std::string_view log_name, Parse parse,
               Run run) {
  Options options;
  try {
    options = parse(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 2;
  }
  init_logging(log_name, spdlog::level::warn);
  try {
    return run(options);
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "%s: %s\n", program, e.what());
    return 1;
  }
}

// Resident set of a process in KiB, from /proc/PID/status.
inline std::uint64_t rss_kib(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtoull(line.c_str() + 6, nullptr, 10);
  throw std::runtime_error("no VmRSS for pid " + std::to_string(pid));
}

struct Percentiles {
  std::size_t count = 0;
  double p50 = 0;
  double p99 = 0;
  double max = 0;
  double mean = 0;
};

// Nearest-rank percentiles of `values` (sorted in place), in their own unit.
inline Percentiles percentiles(std::vector<double>& values) {
  Percentiles p;
  p.count = values.size();
  if (values.empty()) return p;
  std::sort(values.begin(), values.end());
  auto at = [&](double q) {
    const auto rank = static_cast<std::size_t>(q * static_cast<double>(values.size()) + 0.999999);
    return values[std::clamp<std::size_t>(rank, 1, values.size()) - 1];
  };
  p.p50 = at(0.50);
  p.p99 = at(0.99);
  p.max = values.back();
  double sum = 0;
  for (double v : values)
    sum += v;
  p.mean = sum / static_cast<double>(values.size());
  return p;
}

inline std::string load_average() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return one + " " + five + " " + fifteen;
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// A fresh directory under the system temp directory, removed with its content.
class TempDir {
 public:
  explicit TempDir(const std::string& prefix) {
    std::string pattern = (std::filesystem::temp_directory_path() / (prefix + "-XXXXXX")).string();
    if (mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// 1234 -> "1234", 12345 -> "12.3k", 1234567 -> "1.23M".
inline std::string si(double v) {
  char buf[32];
  if (v >= 1e9)
    std::snprintf(buf, sizeof buf, "%.2fG", v / 1e9);
  else if (v >= 1e6)
    std::snprintf(buf, sizeof buf, "%.2fM", v / 1e6);
  else if (v >= 1e4)
    std::snprintf(buf, sizeof buf, "%.1fk", v / 1e3);
  else if (v >= 100)
    std::snprintf(buf, sizeof buf, "%.0f", v);
  else
    std::snprintf(buf, sizeof buf, "%.1f", v);
  return buf;
}

// Prints one PASS/MISS line per target and counts the misses.
struct Verdicts {
  int misses = 0;
  void line(bool pass, const std::string& what) {
    std::printf("%s  %s\n", pass ? "PASS" : "MISS", what.c_str());
    if (!pass) ++misses;
  }
};

// "10.a.b.c:port", distinct for every n below 2^24 within one `port`: the
// addresses of the instances the benchmarks register.
inline std::string address(std::size_t n, int port) {
  return "10." + std::to_string((n >> 16) & 255) + "." + std::to_string((n >> 8) & 255) + "." +
         std::to_string(n & 255) + ":" + std::to_string(port);
}

// In a forked child: stdout and stderr to `log` (appended to, or truncated),
// then `args` (args[0] is the program path); exit code 127 when exec fails.
[[noreturn]] inline void exec_logged(std::vector<std::string>& args,
                                     const std::filesystem::path& log, bool append) {
  const int fd = open(log.c_str(), O_WRONLY | O_CREAT | (append ? O_APPEND : O_TRUNC), 0644);
  if (fd >= 0) {
    dup2(fd, STDOUT_FILENO);
    dup2(fd, STDERR_FILENO);
  }
  std::vector<char*> argv;
  for (auto& a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  execv(argv[0], argv.data());
  _exit(127);
}

inline double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

}  // namespace cascade::bench
