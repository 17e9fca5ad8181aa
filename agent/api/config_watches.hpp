#pragma once
// Reads of config groups through the agent's HTTP API (the native
// /api/v1/config/ and Consul's /v1/kv/), answered from the Client's copy or
// parked, never waiting on a server thread:
//   - a group held, no index: answered at once;
//   - a group held, ?index=V: parked until the group's version differs from V
//     or the wait ends (a long poll, like a service's watch);
//   - a group not held yet (not followed, or followed and not answered):
//     followed now and parked until the hub's first answer, or until the
//     Client's query_timeout, when the render is given nothing.
// The parked requests live on a WatchBoard of their own (the board and its
// thread are agent/api/watch_board.hpp's), keyed by group; the Client's
// listener (Client::on_any_config_change) wakes them.
//
// Threading: watch() on any thread (the HTTP threads); on_change() on the
// Client's I/O thread. A Render runs on the calling thread when the answer is
// at hand, else on the board's thread; it is given the group as held when it
// runs (nullptr: still no answer).

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "cascade/agent/api/watch_board.hpp"
#include "cascade/agent/client.hpp"

namespace cascade::agent::api {

class ConfigWatches {
 public:
  using Render = std::function<http::Response(const ConfigSnapshot* now)>;

  // `client` must outlive the watches; `query_timeout` bounds the wait for a
  // group's first answer.
  ConfigWatches(Client& client, const Clock& clock, std::uint64_t seed, Duration query_timeout);

  // Answers `responder` as the file comment says. `group` is a valid group
  // name (the caller checked it); `variant` tells apart the renderings of one
  // group (one is made per group and variant for every watcher a change wakes).
  void watch(const std::string& group, std::optional<std::uint64_t> index, Duration wait,
             std::string variant, Render render, http::ResponderPtr responder);

  // `use` gets the group once it is held: at once, or on the board's thread
  // after the hub's first answer (nullptr at query_timeout). For a handler
  // that acts on a group's keys (a recursive delete) without waiting.
  void when_held(const std::string& group, std::function<void(const ConfigSnapshot*)> use);

  // A followed group's values changed (Client::on_any_config_change).
  void on_change(const ConfigSnapshot& snapshot);

  std::size_t parked() const { return board_.parked(); }

 private:
  WatchSource source();

  Client& client_;
  Duration query_timeout_;
  std::atomic<std::uint64_t> uses_{0};  // tells apart the renders of when_held()
  WatchBoard board_;                    // last: its thread calls source() and the renders
};

}  // namespace cascade::agent::api
