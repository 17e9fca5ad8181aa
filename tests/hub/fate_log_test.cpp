// A mass event logs a bounded number of lines: the hub writes one line per
// node that expires, is held or is confirmed again, but at most 20 of each
// per 10 s, and the next line it writes says how many it left out. (At 1M
// instances a restart's 200,000 held agents wrote 200,000 lines while the
// serving thread handled them: docs/benchmarks.md, "Hub restart at 1M".)

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>

#include <sstream>
#include <string>

#include "cascade/common/log_event.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

constexpr Duration kLease{6000};

// The default logger writes into `lines` while it lives, fields formatted.
class CapturedLog {
 public:
  CapturedLog() : previous_(spdlog::default_logger()) {
    auto sink = std::make_shared<spdlog::sinks::ostream_sink_mt>(lines_);
    auto logger = std::make_shared<spdlog::logger>("hub", sink);
    logger->set_level(spdlog::level::info);
    spdlog::set_default_logger(logger);
    set_log_fields_formatted(true);
  }
  ~CapturedLog() {
    set_log_fields_formatted(false);
    spdlog::set_default_logger(previous_);
  }
  std::size_t count(const std::string& text) const {
    std::size_t n = 0;
    std::istringstream in(lines_.str());
    for (std::string line; std::getline(in, line);)
      n += line.find(text) != std::string::npos;
    return n;
  }

 private:
  std::ostringstream lines_;
  std::shared_ptr<spdlog::logger> previous_;
};

TEST(FateLog, AMassExpiryLogsTwentyLinesAndTheNextLineCountsTheRest) {
  FakeClock clock;
  HubCoreConfig config{"hub-a", 1, kLease};
  config.eviction.enabled = false;  // every silent agent expires
  HubCore hub{config, /*epoch=*/7, clock.now()};
  for (int i = 0; i < 200; ++i) {
    const auto node = "n" + std::to_string(i);
    hub.handle(clock.now(), beat_with_set(node, 1, {reg("svc", node, "10.0.0.1:80")}));
  }

  CapturedLog log;
  for (int step = 0; step < 8; ++step) {
    clock.advance(Duration{1000});
    hub.tick(clock.now());  // the 200 leases run out at 6 s
  }
  EXPECT_EQ(hub.counters().nodes_expired, 200u);
  EXPECT_EQ(log.count("agent expired"), 20u);

  hub.handle(clock.now(), beat_with_set("late", 1, {reg("svc", "late", "10.0.0.2:80")}));
  clock.advance(Duration{9000});  // its lease ran out at 14 s; the next window opened at 16 s
  hub.tick(clock.now());
  EXPECT_EQ(log.count("agent expired"), 21u);
  EXPECT_EQ(log.count("node=late"), 1u);
  EXPECT_EQ(log.count("suppressed=180"), 1u) << "the line after the burst counts what it left out";
}

}  // namespace
}  // namespace cascade::hub
