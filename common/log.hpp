#pragma once
// Logging helpers. Bad input from the network is logged through a RateLimit so
// a peer sending garbage cannot flood the log; everything is still counted.

#include <spdlog/spdlog.h>

#include <cstdint>
#include <mutex>
#include <string_view>

#include "cascade/common/clock.hpp"
#include "cascade/common/log_event.hpp"

namespace cascade {

// Allows `burst` events per `period`; reports how many were suppressed since
// the last allowed one so the log line can say so.
class RateLimit {
 public:
  RateLimit(std::uint32_t burst, Duration period) : burst_(burst), period_(period) {}

  // True when this event may be logged. `suppressed` receives the number of
  // events dropped since the previous allowed one.
  bool allow(MonoTime now, std::uint64_t& suppressed) {
    if (now >= window_start_ + period_) {
      window_start_ = now;
      used_ = 0;
    }
    if (used_ < burst_) {
      ++used_;
      suppressed = suppressed_;
      suppressed_ = 0;
      return true;
    }
    ++suppressed_;
    return false;
  }

 private:
  std::uint32_t burst_;
  Duration period_;
  MonoTime window_start_{};
  std::uint32_t used_ = 0;
  std::uint64_t suppressed_ = 0;
};

// A RateLimit shared by threads, on the steady clock: for adapters whose
// bad-input logs come from several threads (HTTP, DNS).
class SharedRateLimit {
 public:
  SharedRateLimit(std::uint32_t burst, Duration period) : limit_(burst, period) {}
  // True when this event may be logged; `suppressed` as RateLimit::allow's.
  bool allow(std::uint64_t& suppressed) {
    std::lock_guard lock(mu_);
    return limit_.allow(clock_.now(), suppressed);
  }

 private:
  std::mutex mu_;
  SystemClock clock_;
  RateLimit limit_;
};

// Parses "trace|debug|info|warn|error|critical|off"; false when unknown.
bool parse_log_level(std::string_view text, spdlog::level::level_enum& out);

// Sets the default logger's format and level (stderr, so stdout stays for
// data): text lines, or one JSON object per line (common/log_event.hpp).
void init_logging(std::string_view program, spdlog::level::level_enum level,
                  LogFormat format = LogFormat::kText);

}  // namespace cascade
