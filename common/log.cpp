#include "cascade/common/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>

namespace cascade {

bool parse_log_level(std::string_view text, spdlog::level::level_enum& out) {
  const auto level = spdlog::level::from_str(std::string(text));
  // from_str maps unknown names to "off"; only accept "off" when asked for.
  if (level == spdlog::level::off && text != "off") return false;
  out = level;
  return true;
}

void init_logging(std::string_view program, spdlog::level::level_enum level) {
  auto logger = spdlog::stderr_color_mt(std::string(program));
  logger->set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %v");
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

}  // namespace cascade
