#pragma once
// CPU time of threads and of the process, for the benchmark programs that
// tell the hub's share of a figure from their own: read from a CPU clock (a
// thread's, or CLOCK_PROCESS_CPUTIME_ID), by kernel thread id (threads the
// program did not start itself, such as ZeroMQ's I/O threads, found by name
// in /proc/self/task), or from a thread started to be measured.
// Header-only; nothing here touches the product.

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace cascade::bench {

// CPU seconds a CPU clock reads (pthread_getcpuclockid's, or a CLOCK_*_CPUTIME_ID).
inline double cpu_seconds(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// The same in whole nanoseconds, for sums of many short spans.
inline std::uint64_t cpu_ns(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<std::uint64_t>(ts.tv_sec) * 1'000'000'000ULL +
         static_cast<std::uint64_t>(ts.tv_nsec);
}

// CPU seconds of one thread of this process, by its kernel id (the clock id
// pthread_getcpuclockid builds: ~tid << 3 | CPUCLOCK_PERTHREAD | CPUCLOCK_SCHED).
inline double thread_cpu_seconds(pid_t tid) {
  return cpu_seconds(static_cast<clockid_t>((~static_cast<clockid_t>(tid) << 3) | 6));
}

// Calls visit(name, tid) for every thread of this process, named as in
// /proc/self/task/TID/comm (15 characters at most).
template <typename Visit>
void for_each_thread(Visit&& visit) {
  for (const auto& task : std::filesystem::directory_iterator("/proc/self/task")) {
    std::ifstream comm(task.path() / "comm");
    std::string name;
    std::getline(comm, name);
    visit(name, static_cast<pid_t>(std::stol(task.path().filename().string())));
  }
}

// CPU seconds used so far by this process's threads whose name starts with
// one of `prefixes`, per prefix.
inline std::vector<double> threads_cpu(const std::vector<std::string>& prefixes) {
  std::vector<double> out(prefixes.size(), 0.0);
  for_each_thread([&](const std::string& name, pid_t tid) {
    for (std::size_t i = 0; i < prefixes.size(); ++i) {
      if (!name.starts_with(prefixes[i])) continue;
      out[i] += thread_cpu_seconds(tid);
      break;
    }
  });
  return out;
}

// CPU seconds of the I/O thread of a ZeroMQ context whose threads were named
// with ZMQ_THREAD_NAME_PREFIX `prefix` ("N/ZMQbg/IO/0"); 0 for prefix 0
// (unnamed: not told apart from other contexts' threads).
inline double zmq_io_thread_cpu(int prefix) {
  if (prefix == 0) return 0;
  return threads_cpu({std::to_string(prefix) + "/ZMQbg/IO"}).front();
}

// CPU used by one thread: in total (precise) and the part spent in the kernel
// (from /proc, in clock ticks).
struct CpuTime {
  double total = 0;
  double sys = 0;
};

// A named thread whose CPU use can be read while it runs.
class MeasuredThread {
 public:
  // Runs body() on a thread named `name` (its first 15 characters: what
  // perf report --comm and the /proc look-ups above see).
  template <typename Fn>
  void start(const std::string& name, Fn body) {
    thread_ = std::thread([this, name = name.substr(0, 15), body = std::move(body)]() mutable {
      pthread_setname_np(pthread_self(), name.c_str());
      tid_.store(gettid());
      body();
    });
    if (pthread_getcpuclockid(thread_.native_handle(), &clock_) != 0)
      throw std::runtime_error("no CPU clock for thread " + name);
    while (tid_.load() == 0)
      std::this_thread::yield();
  }
  void join() { thread_.join(); }

  // Total CPU seconds only: one clock read, no /proc.
  double cpu_seconds() const { return bench::cpu_seconds(clock_); }

  CpuTime cpu() const {
    CpuTime t;
    t.total = cpu_seconds();
    std::ifstream in("/proc/self/task/" + std::to_string(tid_.load()) + "/stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::istringstream fields(stat.substr(stat.rfind(')') + 2));
    std::string field;
    for (int i = 3; i <= 15 && fields >> field; ++i)  // field 15 is stime
      if (i == 15) t.sys = std::stod(field) / static_cast<double>(sysconf(_SC_CLK_TCK));
    return t;
  }

 private:
  std::thread thread_;
  std::atomic<pid_t> tid_{0};
  clockid_t clock_{};
};

}  // namespace cascade::bench
