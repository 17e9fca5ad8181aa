#include "cascade/common/log.hpp"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/sinks/stdout_sinks.h>

namespace cascade {

bool parse_log_level(std::string_view text, spdlog::level::level_enum& out) {
  const auto level = spdlog::level::from_str(std::string(text));
  // from_str maps unknown names to "off"; only accept "off" when asked for.
  if (level == spdlog::level::off && text != "off") return false;
  out = level;
  return true;
}

void init_logging(std::string_view program, spdlog::level::level_enum level, LogFormat format) {
  auto logger = format == LogFormat::kJson ? spdlog::stderr_logger_mt(std::string(program))
                                           : spdlog::stderr_color_mt(std::string(program));
  logger->set_formatter(make_log_formatter(format));
  set_log_fields_formatted(true);
  logger->set_level(level);
  spdlog::set_default_logger(logger);
}

}  // namespace cascade
