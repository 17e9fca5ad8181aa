#pragma once
// What every program's option parser returns, and the checks they share.
// (The CLI11 side lives in common/cli.hpp, included only by option parsers.)

#include <optional>
#include <string>
#include <string_view>

namespace cascade {

// A config to run with, or an exit code and the text to print (the help, or
// a clear error: exit code 2).
template <typename Config>
struct ParsedOptions {
  std::optional<Config> config;
  int exit_code = 0;
  std::string message;

  static ParsedOptions usage_error(std::string_view program, std::string_view error) {
    return {std::nullopt, 2, std::string(program) + ": " + std::string(error)};
  }
};

inline bool is_zmq_endpoint(std::string_view s) {
  return s.starts_with("tcp://") || s.starts_with("ipc://") || s.starts_with("inproc://");
}

// "" when `value` is a ZeroMQ endpoint, else the message naming `flag`.
inline std::string check_endpoint(std::string_view flag, std::string_view value) {
  if (is_zmq_endpoint(value)) return {};
  return std::string(flag) + " must be a ZeroMQ endpoint such as tcp://127.0.0.1:7400 (got '" +
         std::string(value) + "')";
}

}  // namespace cascade
