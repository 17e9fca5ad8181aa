#pragma once
// The arguments of the agent's HTTP endpoints, parsed with errors that say
// what is wrong (they become 400 responses): service names, blocking-query
// index and wait, flags.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent::api {

template <typename T>
using Parsed = std::variant<T, std::string>;  // the value, or what is wrong

template <typename T>
const std::string* error_of(const Parsed<T>& parsed) {
  return std::get_if<std::string>(&parsed);
}

// NAME from the path and ?group= (default "default"), checked as a hub would.
Parsed<proto::ServiceKey> service_key_of(std::string_view name,
                                         std::optional<std::string_view> group);

// ?index=: a version held (decimal), nullopt when absent.
Parsed<std::optional<std::uint64_t>> parse_index(std::optional<std::string_view> text);

// How long a blocking query waits at most (Consul's format): "30s", "5m",
// "250ms", "1h", or a number of seconds. Absent: `fallback`. Longer than
// `longest`: `longest` (as Consul caps it).
struct WaitLimits {
  Duration fallback{std::chrono::minutes(5)};
  Duration longest{std::chrono::minutes(10)};
};
Parsed<Duration> parse_wait(std::optional<std::string_view> text, WaitLimits limits = {});

// The arguments of a blocking query: ?index= (nullopt: answer at once) and ?wait=.
struct BlockingArgs {
  std::optional<std::uint64_t> index;
  Duration wait{};
};
Parsed<BlockingArgs> parse_blocking(std::optional<std::string_view> index,
                                    std::optional<std::string_view> wait);

// A duration in Go's format, as Consul's bodies carry them ("10s", "1m30s",
// "1.5s", "250ms"), rounded up to whole milliseconds; nullopt when malformed.
std::optional<Duration> parse_go_duration(std::string_view text);

// A flag argument: "?all", "?all=1" or "?all=true" are on; "0" and "false" off.
Parsed<bool> parse_flag(std::optional<std::string_view> text, std::string_view name);

}  // namespace cascade::agent::api
