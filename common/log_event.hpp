#pragma once
// Log lines as events: what happened and the ids it involves, one line each.
//
//   log_event(spdlog::level::info, "agent expired",
//             {{"node", node.id}, {"lease_ms", lease.count()}, {"instances", removed}});
//
// prints, with --log-format text (the default),
//   2026-12-02T05:44:31.589 info [hub] agent expired node=n1 lease_ms=6000 instances=3
// and with --log-format json, one object per line for log shippers,
//   {"time":"2026-12-02T05:44:31.589Z","level":"info","program":"hub",
//    "msg":"agent expired","node":"n1","lease_ms":"6000","instances":"3"}
//
// The fields travel inside the spdlog message, each after a unit separator
// (0x1f), so any logger call site can carry them and the sink's formatter
// (text or JSON) lays them out. Values come from the network (node ids,
// service names): both formats escape control characters, so a crafted id
// cannot forge a log line. Plain spdlog::info() calls print as before.

#include <spdlog/spdlog.h>

#include <concepts>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>

namespace cascade {

struct LogField {
  LogField(std::string_view field_key, std::string_view field_value)
      : key(field_key), value(field_value) {}
  LogField(std::string_view field_key, const std::string& field_value)
      : key(field_key), value(field_value) {}
  LogField(std::string_view field_key, const char* field_value)
      : key(field_key), value(field_value) {}
  template <std::integral T>
  LogField(std::string_view field_key, T field_value)
      : key(field_key), value(std::to_string(field_value)) {}

  std::string_view key;  // a literal: [a-z_]+
  std::string value;
};

inline constexpr char kLogFieldSeparator = '\x1f';

// `what` and its fields as one spdlog message: with the separators the
// formatters of init_logging() lay out, or, for any other logger (an
// application's, with the agent library), as the finished text line.
std::string log_message(std::string_view what, std::initializer_list<LogField> fields);
// Always with the separators.
std::string encoded_message(std::string_view what, std::initializer_list<LogField> fields);
// Called by init_logging(): its formatters lay the fields out.
void set_log_fields_formatted(bool formatted);

inline void log_event(spdlog::level::level_enum level, std::string_view what,
                      std::initializer_list<LogField> fields) {
  if (spdlog::should_log(level)) spdlog::log(level, "{}", log_message(what, fields));
}

enum class LogFormat { kText, kJson };

// "text" or "json"; false when unknown.
bool parse_log_format(std::string_view text, LogFormat& out);

// The formatter of the default logger's sink for `format`.
std::unique_ptr<spdlog::formatter> make_log_formatter(LogFormat format);

}  // namespace cascade
