#include "cascade/common/log_event.hpp"

#include <fmt/chrono.h>
#include <spdlog/pattern_formatter.h>

#include <algorithm>
#include <atomic>
#include <chrono>

namespace cascade {

namespace {

// Control characters (a field separator included) as \xNN: one event stays
// one line whatever a peer put in an id.
void append_escaped(spdlog::memory_buf_t& out, std::string_view text, bool json) {
  for (const unsigned char c : text) {
    if (json && (c == '"' || c == '\\')) {
      out.push_back('\\');
      out.push_back(static_cast<char>(c));
    } else if (c < 0x20 || c == 0x7f) {
      if (json) {
        fmt::format_to(std::back_inserter(out), "\\u{:04x}", c);
      } else {
        fmt::format_to(std::back_inserter(out), "\\x{:02x}", c);
      }
    } else {
      out.push_back(static_cast<char>(c));
    }
  }
}

// The text of a message made by log_message(), before its fields.
std::string_view what_of(std::string_view message) {
  return message.substr(0, message.find(kLogFieldSeparator));
}

// Calls `on_field(key, value)` for each field of a message made by log_message().
template <typename OnField>
void for_each_field(std::string_view message, OnField on_field) {
  for (auto next = message.find(kLogFieldSeparator); next != std::string_view::npos;) {
    const auto start = next + 1;
    next = message.find(kLogFieldSeparator, start);
    const auto field = message.substr(start, next == std::string_view::npos ? next : next - start);
    const auto eq = field.find('=');
    on_field(field.substr(0, eq), eq == std::string_view::npos ? "" : field.substr(eq + 1));
  }
}

bool needs_quotes(std::string_view value) {
  return value.empty() || value.find_first_of(" \"=") != std::string_view::npos;
}

// The message as a text line shows it: the text, then its fields as
// key=value (values with spaces, quotes or '=' quoted).
void append_text(spdlog::memory_buf_t& out, std::string_view message) {
  append_escaped(out, what_of(message), false);
  for_each_field(message, [&out](std::string_view key, std::string_view value) {
    out.push_back(' ');
    out.append(key.data(), key.data() + key.size());
    out.push_back('=');
    const bool quoted = needs_quotes(value);
    if (quoted) out.push_back('"');
    append_escaped(out, value, quoted);
    if (quoted) out.push_back('"');
  });
}

// %* in the text pattern: append_text() of the message.
class TextEventFlag final : public spdlog::custom_flag_formatter {
 public:
  void format(const spdlog::details::log_msg& msg, const std::tm&,
              spdlog::memory_buf_t& out) override {
    append_text(out, std::string_view(msg.payload.data(), msg.payload.size()));
  }
  std::unique_ptr<custom_flag_formatter> clone() const override {
    return std::make_unique<TextEventFlag>();
  }
};

// Set once a logger formats events (init_logging): until then, and in
// applications that use the agent library with loggers of their own,
// log_message() writes the finished text instead of separators.
std::atomic<bool> g_fields_formatted{false};

void append_json_pair(spdlog::memory_buf_t& out, std::string_view key, std::string_view value) {
  out.push_back(',');
  out.push_back('"');
  append_escaped(out, key, true);
  out.append(std::string_view("\":\""));
  append_escaped(out, value, true);
  out.push_back('"');
}

// One JSON object per line: time (UTC), level, program, msg, then the fields.
class JsonFormatter final : public spdlog::formatter {
 public:
  void format(const spdlog::details::log_msg& msg, spdlog::memory_buf_t& out) override {
    const auto since_epoch = msg.time.time_since_epoch();
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
    const auto millis =
        std::chrono::duration_cast<std::chrono::milliseconds>(since_epoch - seconds).count();
    const std::time_t t = seconds.count();
    std::tm utc{};
    gmtime_r(&t, &utc);
    fmt::format_to(std::back_inserter(out), "{{\"time\":\"{:%Y-%m-%dT%H:%M:%S}.{:03}Z\"", utc,
                   millis);
    const auto level = spdlog::level::to_string_view(msg.level);
    append_json_pair(out, "level", std::string_view(level.data(), level.size()));
    append_json_pair(out, "program",
                     std::string_view(msg.logger_name.data(), msg.logger_name.size()));
    const std::string_view payload(msg.payload.data(), msg.payload.size());
    append_json_pair(out, "msg", what_of(payload));
    for_each_field(payload, [&out](std::string_view key, std::string_view value) {
      append_json_pair(out, key, value);
    });
    out.append(std::string_view("}\n"));
  }
  std::unique_ptr<spdlog::formatter> clone() const override {
    return std::make_unique<JsonFormatter>();
  }
};

}  // namespace

std::string log_message(std::string_view what, std::initializer_list<LogField> fields) {
  std::string out = encoded_message(what, fields);
  if (g_fields_formatted.load(std::memory_order_relaxed)) return out;
  spdlog::memory_buf_t text;
  append_text(text, out);
  return {text.data(), text.size()};
}

void set_log_fields_formatted(bool formatted) {
  g_fields_formatted.store(formatted, std::memory_order_relaxed);
}

std::string encoded_message(std::string_view what, std::initializer_list<LogField> fields) {
  std::string out(what);
  for (const auto& field : fields) {
    out += kLogFieldSeparator;
    out += field.key;
    out += '=';
    // A separator inside a value would start a field of its own.
    const auto start = out.size();
    out += field.value;
    std::replace(out.begin() + static_cast<std::ptrdiff_t>(start), out.end(), kLogFieldSeparator,
                 '?');
  }
  return out;
}

bool parse_log_format(std::string_view text, LogFormat& out) {
  if (text == "text") {
    out = LogFormat::kText;
  } else if (text == "json") {
    out = LogFormat::kJson;
  } else {
    return false;
  }
  return true;
}

std::unique_ptr<spdlog::formatter> make_log_formatter(LogFormat format) {
  if (format == LogFormat::kJson) return std::make_unique<JsonFormatter>();
  auto text = std::make_unique<spdlog::pattern_formatter>();
  text->add_flag<TextEventFlag>('*').set_pattern("%Y-%m-%dT%H:%M:%S.%e %^%l%$ [%n] %*");
  return text;
}

}  // namespace cascade
