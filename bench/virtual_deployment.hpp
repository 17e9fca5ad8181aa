#pragma once
// HubCores wired into tiers and AgentCores beating to them, in one thread on
// a virtual clock, with a network that delivers at once and never loses
// anything. The bench uses it to count what an upper tier receives from a
// large deployment without running a million sockets: every message that
// reaches a hub is encoded with the real codec to count its bytes.
//
// The deployment plays the adapters: it fires each agent's timer at its
// next_deadline, hands agents' messages to their hub and the replies back,
// ticks each hub at its next_deadline, carries each hub's uplink traffic to
// its upstream (and deferred answers down), and takes every hub's persist
// batch every flush interval (there is no disk: the batch is dropped).
// Thread-safety: none.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_core.hpp"

namespace cascade::bench {

// What one hub received (from agents and from lower-tier hubs) and answered,
// since the last reset.
struct Traffic {
  std::uint64_t from_agents = 0;    // messages from agents
  std::uint64_t from_hubs = 0;      // messages from lower-tier hubs' uplinks
  std::uint64_t bytes_in = 0;       // encoded size of every message received
  std::uint64_t bytes_out = 0;      // encoded size of every reply
  std::uint64_t carrying_sets = 0;  // UpBeats with a full set or a delta
  std::uint64_t registrations = 0;  // registrations and removals carried by them
  std::uint64_t queries = 0;        // Query messages received
  std::uint64_t send_full = 0;      // replies that asked for the whole set
  std::uint64_t errors = 0;         // ErrorReply answers
  // Thread CPU time inside HubCore::handle (only for hubs chosen with time_hub).
  std::uint64_t handle_ns = 0;
  std::uint64_t handle_ns_sets = 0;       // ... of which for the beats carrying sets or deltas
  std::uint64_t handle_ns_max = 0;        // the most expensive single message
  std::vector<std::uint64_t> per_window;  // messages received per window (see reset_traffic)

  std::uint64_t messages() const { return from_agents + from_hubs; }
};

class VirtualDeployment {
 public:
  explicit VirtualDeployment(MonoTime start, Duration flush_interval = Duration{20});

  // A hub; `upstream` is the hub its uplink beats to (its config must then
  // have an uplink with one endpoint). Returns its index.
  std::size_t add_hub(hub::HubCoreConfig config, std::optional<std::size_t> upstream);
  // An agent of `hub`, first beating at `first_beat`. Returns its index.
  std::size_t add_agent(std::size_t hub, agent::AgentCoreConfig config,
                        const std::vector<proto::Registration>& registrations,
                        const std::vector<proto::ServiceKey>& pinned, std::uint64_t seed,
                        MonoTime first_beat);

  // Registration changes of an agent; they beat at once, like the library's.
  void add_registration(std::size_t agent, proto::Registration reg);
  void remove_registration(std::size_t agent, const proto::InstanceKey& key);

  // Runs every timer and message due up to `until`; the clock ends there.
  void run_until(MonoTime until);
  MonoTime now() const { return now_; }

  hub::HubCore& hub(std::size_t index) { return *hubs_.at(index).core; }
  const agent::AgentCore& agent(std::size_t index) const { return agents_.at(index)->core; }
  std::size_t agent_count() const { return agents_.size(); }

  const Traffic& traffic(std::size_t hub) const { return hubs_.at(hub).traffic; }
  // Measures the CPU `hub` spends in HubCore::handle: a system call per
  // reading in this VM (~2 us), worth it only for hubs that get few messages.
  void time_hub(std::size_t hub) { hubs_.at(hub).timed = true; }
  // Clears every hub's counters; from now on messages are also counted per
  // window of `window` starting now (0: no windows).
  void reset_traffic(Duration window = Duration{0});

 private:
  struct HubSlot {
    std::unique_ptr<hub::HubCore> core;
    std::optional<std::size_t> upstream;
    Traffic traffic;
    bool timed = false;
  };
  struct AgentSlot {
    AgentSlot(agent::AgentCoreConfig config, std::uint64_t seed) : core(std::move(config), seed) {}
    agent::AgentCore core;
    std::size_t hub = 0;
    bool queued = false;      // has an entry in due_ for `scheduled_at`
    MonoTime scheduled_at{};  // older entries of this agent are stale
  };
  struct DeferredTarget {
    bool to_hub = false;       // a lower-tier hub's uplink asked (else an agent)
    std::size_t index = 0;     // hub or agent index
    std::size_t upstream = 0;  // the uplink's endpoint index (hubs)
  };
  struct Due {
    MonoTime at;
    std::size_t agent;
    bool operator>(const Due& other) const {
      return at != other.at ? at > other.at : agent > other.agent;
    }
  };

  bool process_due();
  MonoTime next_event() const;
  void schedule(std::size_t agent);
  void deliver(std::size_t agent, agent::AgentActions actions);
  // Counts `message` as received by `hub` and hands it to its core.
  hub::HandleResult receive(std::size_t hub, const proto::Message& message, bool from_hub);
  void answered(std::size_t hub, const proto::Message& reply);
  // Carries uplink messages up and deferred answers down until nothing moves.
  void settle();

  MonoTime now_;
  Duration flush_interval_;
  MonoTime next_flush_;
  std::vector<HubSlot> hubs_;
  std::vector<std::unique_ptr<AgentSlot>> agents_;
  std::vector<Due> due_;  // min-heap by time; stale entries are skipped
  std::map<std::pair<std::size_t, std::uint64_t>, DeferredTarget> deferred_;
  Duration window_{0};
  MonoTime window_start_{};
};

}  // namespace cascade::bench
