#include "cascade/metrics/process_metrics.hpp"

#include <unistd.h>

#include <array>
#include <charconv>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <system_error>

namespace cascade::metrics {

namespace {

// Indexes into families() and the values of one scrape.
enum Slot : std::size_t {
  kCpuSeconds,
  kOpenFds,
  kMaxFds,
  kVirtualBytes,
  kResidentBytes,
  kStartTimeSeconds,
  kThreads,
  kFamilies
};

// Names and help texts as the Prometheus client libraries write them.
const std::vector<FamilyInfo>& process_families() {
  static const std::vector<FamilyInfo> families{
      {"process_cpu_seconds_total", "Total user and system CPU time spent in seconds.",
       MetricType::kCounter},
      {"process_open_fds", "Number of open file descriptors.", MetricType::kGauge},
      {"process_max_fds", "Maximum number of open file descriptors.", MetricType::kGauge},
      {"process_virtual_memory_bytes", "Virtual memory size in bytes.", MetricType::kGauge},
      {"process_resident_memory_bytes", "Resident memory size in bytes.", MetricType::kGauge},
      {"process_start_time_seconds", "Start time of the process since unix epoch in seconds.",
       MetricType::kGauge},
      {"process_threads", "Number of OS threads in the process.", MetricType::kGauge},
  };
  return families;
}

using Values = std::array<std::optional<double>, kFamilies>;

std::optional<std::string> read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::ostringstream text;  // procfs files report size 0: read to the end
  text << in.rdbuf();
  return std::move(text).str();
}

std::optional<double> number(std::string_view text) {
  double value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc{} || end == text.data()) return std::nullopt;
  return value;
}

// The whitespace-separated words of `text`.
std::vector<std::string_view> words(std::string_view text) {
  std::vector<std::string_view> found;
  std::size_t start = text.find_first_not_of(" \t\n");
  while (start != std::string_view::npos) {
    const std::size_t end = text.find_first_of(" \t\n", start);
    found.push_back(text.substr(start, end - start));
    start = text.find_first_not_of(" \t\n", end);
  }
  return found;
}

// The value after `key` on the line that starts with it: "btime 1700000000"
// in /proc/stat, "Max open files  1024  4096  files" in /proc/self/limits
// (the soft limit, the one the process meets).
std::optional<double> keyed_number(std::string_view text, std::string_view key) {
  for (std::size_t line = 0; line < text.size();) {
    std::size_t end = text.find('\n', line);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view row = text.substr(line, end - line);
    if (row.starts_with(key)) {
      const auto after = words(row.substr(key.size()));
      return after.empty() ? std::nullopt : number(after.front());
    }
    line = end + 1;
  }
  return std::nullopt;
}

// /proc/self/stat (proc(5)): "PID (COMM) STATE PPID ...". COMM may hold
// spaces and parentheses, so fields are counted from the last ')': field 3,
// the state, is the first word after it.
void read_stat(std::string_view stat, std::optional<double> boot_time,
               const ProcessMetricsConfig& config, Values& values) {
  const std::size_t comm_end = stat.rfind(')');
  if (comm_end == std::string_view::npos) return;
  const auto fields = words(stat.substr(comm_end + 1));
  const auto field = [&fields](std::size_t number_in_proc5) -> std::optional<double> {
    const std::size_t index = number_in_proc5 - 3;
    return index < fields.size() ? number(fields[index]) : std::nullopt;
  };
  const auto ticks = static_cast<double>(config.ticks_per_second);
  const auto user = field(14), system = field(15), start = field(22);
  if (user && system) values[kCpuSeconds] = (*user + *system) / ticks;
  values[kThreads] = field(20);
  if (start && boot_time) values[kStartTimeSeconds] = *boot_time + *start / ticks;
  values[kVirtualBytes] = field(23);
  if (const auto pages = field(24))
    values[kResidentBytes] = *pages * static_cast<double>(config.page_bytes);
}

// Entries of /proc/self/fd, as the Go client counts them: the directory's own
// descriptor, open while it is listed, is one of them.
std::optional<double> open_fds(const std::filesystem::path& fd_dir) {
  std::error_code error;
  std::filesystem::directory_iterator it(fd_dir, error);
  if (error) return std::nullopt;
  double count = 0;
  for (; it != std::filesystem::directory_iterator(); it.increment(error))
    ++count;
  if (error) return std::nullopt;  // a failed step ends the listing early
  return count;
}

}  // namespace

ProcessMetrics::ProcessMetrics(ProcessMetricsConfig config) : config_(std::move(config)) {
  if (config_.ticks_per_second <= 0) config_.ticks_per_second = ::sysconf(_SC_CLK_TCK);
  if (config_.page_bytes <= 0) config_.page_bytes = ::sysconf(_SC_PAGESIZE);
}

std::vector<FamilyInfo> ProcessMetrics::families() const {
  return process_families();
}

void ProcessMetrics::collect(TextWriter& out) const {
  const auto self = config_.proc / "self";
  Values values;
  if (const auto stat = read_text(self / "stat")) {
    const auto system_stat = read_text(config_.proc / "stat");
    const auto boot_time =
        system_stat ? keyed_number(*system_stat, "btime") : std::optional<double>{};
    read_stat(*stat, boot_time, config_, values);
  }
  values[kOpenFds] = open_fds(self / "fd");
  if (const auto limits = read_text(self / "limits"))
    values[kMaxFds] = keyed_number(*limits, "Max open files");

  const auto& families = process_families();
  for (std::size_t i = 0; i < kFamilies; ++i) {
    if (!values[i]) continue;
    out.family(families[i]);
    out.sample("", "", *values[i]);
  }
}

}  // namespace cascade::metrics
