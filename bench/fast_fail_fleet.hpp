#pragma once
// A fleet of AgentCores driven by one thread over ZeroMQ DEALER sockets: the
// consumers, reporters and providers of cascade_fast_fail_bench.
//
// A thousand agent::Clients would bring a thousand I/O threads and measure
// the machine's scheduler, not the product. Here one driver thread owns every
// core and every socket and does what Client's I/O loop does for one: polls
// the sockets, hands each decoded message to its core, fires the cores'
// timers and sends what they produce. Agents either get a DEALER each (a hub
// sees one connection per consumer, as in production) or share a few
// (`sockets`; replies and pushes are routed back by the DownBeat's node id,
// so sharing agents must not send queries).
//
// Threading: the fleet's own thread runs everything; other threads reach the
// cores only through call(), which runs a task on that thread and waits. The
// observer's callbacks run on the driver thread too.

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {

using SteadyTime = std::chrono::steady_clock::time_point;

// One agent of a fleet: its core's configuration, what it registers, and the
// services it keeps fresh (pinned: they stay in its beats' `uses`).
struct FleetAgent {
  agent::AgentCoreConfig config;
  std::vector<proto::Registration> registrations;
  std::vector<proto::ServiceKey> pinned;
  std::vector<std::string> configs{};  // config groups it follows (pinned: never dropped)
};

// The agent's defaults (beat 2 s +-10%, reports batched 5 ms) under a node id
// and an epoch.
inline agent::AgentCoreConfig default_agent_config(std::string node_id, std::uint64_t epoch) {
  agent::AgentCoreConfig c;
  c.node_id = std::move(node_id);
  c.epoch = epoch;
  return c;
}

struct FleetConfig {
  std::string name = "fleet";  // the driver thread's name (15 characters at most are kept)
  std::string endpoint;        // the hub every agent of the fleet beats to
  std::size_t sockets = 0;     // 0: one DEALER per agent; else the agents share this many
  Duration start_spread{0};    // agents start at random moments within this window
  std::uint64_t seed = 1;
  int io_thread_prefix = 0;  // names the ZeroMQ I/O thread "N/ZMQbg/IO/0" (0: unnamed)
};

// Told what the fleet sends and receives, on the driver thread. `at` is
// steady_clock time taken when the frame was received (or sent).
class FleetObserver {
 public:
  virtual ~FleetObserver() = default;
  virtual void on_sent(std::size_t /*agent*/, const proto::Message& /*message*/,
                       SteadyTime /*at*/) {}
  virtual void on_received(std::size_t /*agent*/, const proto::Message& /*message*/,
                           SteadyTime /*at*/) {}
  // The agent's cache entry for `service` changed (after the core applied it).
  virtual void on_changed(std::size_t /*agent*/, const proto::ServiceKey& /*service*/,
                          SteadyTime /*at*/) {}
  // The values of a config group the agent follows changed, or first came
  // (after the core applied them: AgentFleet::core(agent).configs() shows them).
  virtual void on_config_changed(std::size_t /*agent*/, const std::string& /*group*/,
                                 SteadyTime /*at*/) {}
};

struct FleetCounters {
  std::uint64_t frames_received = 0;
  std::uint64_t messages_received = 0;
  std::uint64_t pushes_received = 0;
  std::uint64_t decode_failures = 0;
  std::uint64_t unrouted = 0;     // on a shared socket, naming no agent of the fleet
  std::uint64_t sent = 0;         // messages handed to ZeroMQ
  std::uint64_t not_sent = 0;     // refused by ZeroMQ (not connected, or at the high-water mark)
  std::uint64_t loop_passes = 0;  // driver loop iterations
};

class AgentFleet {
 public:
  // What a task passed to call() may touch, on the driver thread.
  class Access {
   public:
    agent::AgentCore& core(std::size_t agent);
    MonoTime now() const;
    // kill -9: the agent sends nothing more (no Deregister) and ignores what
    // it is sent, so its hub expires it when its lease runs out.
    void silence(std::size_t agent);
    std::size_t size() const;

   private:
    friend class AgentFleet;
    explicit Access(AgentFleet& fleet) : fleet_(fleet) {}
    AgentFleet& fleet_;
  };

  // Starts the driver thread; every agent starts (sends its first beat) at a
  // random moment within config.start_spread. `observer` may be null and must
  // outlive the fleet.
  AgentFleet(FleetConfig config, std::vector<FleetAgent> agents, FleetObserver* observer);
  ~AgentFleet();
  AgentFleet(const AgentFleet&) = delete;
  AgentFleet& operator=(const AgentFleet&) = delete;

  // Runs `task` on the driver thread and returns once it ran; every core's
  // timer is re-read afterwards (the task may have changed any of them).
  // Rethrows what the task threw.
  void call(const std::function<void(Access&)>& task);

  // For observer callbacks (driver thread only).
  const agent::AgentCore& core(std::size_t agent) const { return *agents_[agent].core; }
  std::size_t size() const { return agents_.size(); }
  // A copy taken on the driver thread.
  FleetCounters counters();
  // CPU seconds the driver thread used so far.
  double cpu_seconds() const;

 private:
  struct Agent {
    std::unique_ptr<agent::AgentCore> core;
    std::size_t socket = 0;
    bool started = false;
    bool silenced = false;
    MonoTime scheduled{};  // its entry in timers_
  };
  struct Task {
    const std::function<void(Access&)>* fn;
    std::exception_ptr error;
    bool done = false;
  };

  void run();
  void run_tasks();
  void receive(std::size_t socket);
  void fire_due(MonoTime now);
  void apply(std::size_t agent, agent::AgentActions actions);
  void reschedule(std::size_t agent, MonoTime at);
  void reschedule_all();
  void mark_dirty(std::size_t socket);  // to be read on the next pass

  FleetConfig config_;
  FleetObserver* observer_;
  std::vector<Agent> agents_;
  std::vector<std::vector<std::size_t>> agents_of_socket_;
  std::unordered_map<std::string, std::size_t> by_node_;
  SystemClock clock_;
  zmq::context_t context_{1};
  std::vector<zmq::socket_t> sockets_;  // created and used on the driver thread only
  std::vector<std::size_t> dirty_;      // sockets to read on the next pass
  std::vector<char> is_dirty_;
  std::set<std::pair<MonoTime, std::size_t>> timers_;
  FleetCounters counters_;

  std::mutex mu_;  // guards tasks_
  std::condition_variable done_cv_;
  std::vector<Task*> tasks_;
  int wake_fd_ = -1;
  std::atomic<bool> stop_{false};
  std::atomic<bool> ready_{false};
  clockid_t cpu_clock_{};
  std::thread thread_;  // last: starts after everything it uses
};

}  // namespace cascade::bench
