// The process_* metrics: read from a procfs tree the test writes (exact
// values), from no procfs at all (left out), and from this process's own
// /proc (plausible values).

#include "cascade/metrics/process_metrics.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include "cascade/metrics/registry.hpp"
#include "cascade/tests/metrics/samples.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::metrics {
namespace {

namespace fs = std::filesystem;
using testing::sample_value;

class MetricsProcess : public ::testing::Test {
 protected:
  void write(const fs::path& relative, const std::string& text) {
    fs::create_directories((proc_ / relative).parent_path());
    std::ofstream(proc_ / relative) << text;
  }

  store_test::TempDir dir_;
  const fs::path& proc_ = dir_.path();
};

TEST_F(MetricsProcess, FakeProcTreeRendersGoldenText) {
  // A command name with spaces and parentheses: fields count from the last ')'.
  // utime 250 + stime 50 ticks, 7 threads, started 12350 ticks after boot,
  // 100 MiB virtual, 2560 resident pages.
  write("self/stat",
        "4242 (cas (cade)) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 50 0 0 20 0 7 0 12350 "
        "104857600 2560 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n");
  write("stat", "cpu  1 2 3 4\nintr 5\nbtime 1700000000\nprocesses 9\n");
  write("self/limits",
        "Limit                     Soft Limit           Hard Limit           Units     \n"
        "Max cpu time              unlimited            unlimited            seconds   \n"
        "Max open files            1024                 524288               files     \n");
  for (const char* fd : {"0", "1", "2"})
    write(fs::path("self/fd") / fd, "");
  Registry registry;
  registry.add(std::make_unique<ProcessMetrics>(
      ProcessMetricsConfig{.proc = proc_, .ticks_per_second = 100, .page_bytes = 4096}));

  EXPECT_EQ(registry.render(),
            R"(# HELP process_cpu_seconds_total Total user and system CPU time spent in seconds.
# TYPE process_cpu_seconds_total counter
process_cpu_seconds_total 3
# HELP process_open_fds Number of open file descriptors.
# TYPE process_open_fds gauge
process_open_fds 3
# HELP process_max_fds Maximum number of open file descriptors.
# TYPE process_max_fds gauge
process_max_fds 1024
# HELP process_virtual_memory_bytes Virtual memory size in bytes.
# TYPE process_virtual_memory_bytes gauge
process_virtual_memory_bytes 104857600
# HELP process_resident_memory_bytes Resident memory size in bytes.
# TYPE process_resident_memory_bytes gauge
process_resident_memory_bytes 10485760
# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.
# TYPE process_start_time_seconds gauge
process_start_time_seconds 1700000123.5
# HELP process_threads Number of OS threads in the process.
# TYPE process_threads gauge
process_threads 7
)");
}

TEST_F(MetricsProcess, WhatCannotBeReadIsLeftOutOfTheScrape) {
  write("self/stat", "4242 (truncated");  // no ')': no field can be found
  write("self/limits",
        "Max open files            unlimited            unlimited            files\n");
  Registry registry;
  registry.add(std::make_unique<ProcessMetrics>(ProcessMetricsConfig{.proc = proc_}));
  EXPECT_EQ(registry.render(), "");

  Registry without_proc;
  without_proc.add(std::make_unique<ProcessMetrics>(ProcessMetricsConfig{.proc = proc_ / "none"}));
  EXPECT_EQ(without_proc.render(), "");
}

TEST(MetricsProcessLive, ThisProcessHasPlausibleValues) {
  Registry registry;
  registry.add(std::make_unique<ProcessMetrics>());
  const std::string text = registry.render();
  const auto value = [&text](const char* name) {
    const auto found = sample_value(text, name);
    EXPECT_TRUE(found) << name << " missing from:\n" << text;
    return found.value_or(-1);
  };
  EXPECT_GE(value("process_cpu_seconds_total"), 0);
  EXPECT_GT(value("process_resident_memory_bytes"), 0);
  EXPECT_GE(value("process_virtual_memory_bytes"), value("process_resident_memory_bytes"));
  EXPECT_GT(value("process_open_fds"), 0);  // at least stdin, stdout, stderr
  EXPECT_GE(value("process_max_fds"), value("process_open_fds"));
  EXPECT_GE(value("process_threads"), 1);
  // Started before now, and not before the machine booted days ago; the wall
  // clock is read only for this plausibility bound.
  const double now =
      std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  EXPECT_LE(value("process_start_time_seconds"), now + 1);
  EXPECT_GT(value("process_start_time_seconds"), now - 365 * 86400.0);
}

}  // namespace
}  // namespace cascade::metrics
