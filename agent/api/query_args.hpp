#pragma once
// The arguments of the agent's HTTP endpoints, parsed with errors that say
// what is wrong (they become 400 responses): blocking-query index and wait,
// Go durations; service names and flags as every API reads them.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/http/query_args.hpp"

namespace cascade::agent::api {

// Shared with every cascade HTTP API (http/query_args.hpp).
using http::error_of;
using http::parse_flag;
using http::Parsed;
using http::service_key_of;

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

}  // namespace cascade::agent::api
