#pragma once
// Config edits made through the agent's HTTP API (Consul KV PUT and DELETE),
// sent to the hub the agent beats to as an operator's AdminRequest
// (config_edit), the way `cascadectl config set` sends them, with the agent's
// own CurveZMQ key when it has one. A hub with security on decides whether
// that key may edit (an agent's key may not, unless the operator allows it):
// a refusal comes back as kForbidden with the hub's reason.
//
// Why a thread of its own: the edit is answered after the hub committed it,
// which may take a while; no HTTP server thread may wait for that. Edits are
// queued (at most `max_queued`; more are refused at once, counted) and sent
// one at a time from this editor's thread, each answered through its `done`
// on that thread.

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cascade/agent/client.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent::api {

struct EditOutcome {
  enum class Result {
    kApplied,     // the hub committed it (or it changed nothing)
    kRefused,     // the hub refused the edit itself (a limit, a bad key): the message says why
    kForbidden,   // the hub refused this agent's key, or the key may not edit config
    kUnanswered,  // no hub answered in time
    kOverflow,    // too many edits queued at this agent
  };
  Result result = Result::kApplied;
  std::string message;  // the hub's, or why there was none
};

struct HubEditorCounters {
  std::atomic<std::uint64_t> sent{0};
  std::atomic<std::uint64_t> applied{0};
  std::atomic<std::uint64_t> refused{0};     // kRefused and kForbidden
  std::atomic<std::uint64_t> unanswered{0};  // kUnanswered
  std::atomic<std::uint64_t> overflowed{0};  // kOverflow
};

class HubEditor {
 public:
  using Done = std::function<void(const EditOutcome&)>;

  // `client` tells the hub beaten to and the keys; it must outlive the
  // editor. `timeout`: how long one edit waits for the hub's answer.
  HubEditor(const Client& client, Duration timeout, std::size_t max_queued = 256);
  // Waits for the edit in flight (at most `timeout`); queued ones are dropped
  // unanswered (their Responders' server answers them when it stops).
  ~HubEditor();
  HubEditor(const HubEditor&) = delete;
  HubEditor& operator=(const HubEditor&) = delete;

  // Any thread. `actor` names who asked, for the hub's audit log.
  void edit(std::string group, std::vector<proto::ConfigEdit> edits, std::string actor, Done done);

  const HubEditorCounters& counters() const { return counters_; }

 private:
  struct Job {
    std::string group;
    std::vector<proto::ConfigEdit> edits;
    std::string actor;
    Done done;
  };
  class Link;  // hub_editor.cpp: the connection to the current hub
  void run();
  EditOutcome send(const Job& job);
  void count_and_log(const Job& job, const EditOutcome& outcome);

  const Client& client_;
  const Duration timeout_;
  const std::size_t max_queued_;
  HubEditorCounters counters_;
  std::unique_ptr<Link> link_;  // the editor's thread only
  std::uint64_t next_request_id_ = 1;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Job> queue_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace cascade::agent::api
