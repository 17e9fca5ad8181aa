#pragma once
// One hub process of a simulation: a HubCore, its disk, its timers, and the
// part of the hub server that routes what the core produces.
//
// Like hub/hub_server.cpp it ticks the core at next_deadline(), flushes the
// PersistBatch every flush interval and holds each durable reply until the
// batch holding its change is on disk. For a tiered hub it also carries the
// uplink's messages to the upstream hubs' addresses, hands what those hubs
// send back to on_upstream_message (a message from an upstream's address is a
// reply to the uplink; anything else is a request), and sends each deferred
// reply to whoever asked, once the core releases it. Every handle, tick and
// upstream message is followed by draining the core's outputs.
//
// Messages the core addresses to a node (HubCore::take_node_messages: pushes
// to consumers, failure reports on their way down to a lower-tier hub) go the
// way that node's last beat came in, as the hub server sends them: from this
// hub's address to the address that beat came from. A lower-tier hub beats
// with its hub id as node id, and takes what comes from its upstream's
// address as an upstream message. A node that has not beaten this
// incarnation has no route: its message is dropped and counted.
//
// Each request is handled with the `source` config.source_of names for its
// sender (eviction protection groups the nodes of one source).
//
// With an audit interval, the core's running totals (what its status reads in
// O(1)) are recomputed by walking its state (HubCore::recount_mismatch) after
// each restore and after the first handle or tick at least one interval past
// the last audit; a difference is counted in the stats (the first is logged,
// with when). It adds no event of its own, so a run's events are the same
// with or without audits.
//
// A crash loses the core's memory, the replies it held and the questions it
// had deferred; a restart builds a new core from the disk with a new epoch.
// Thread-safety: none.

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/sim/core_time.hpp"
#include "cascade/sim/event_queue.hpp"
#include "cascade/sim/memory_hub_store.hpp"
#include "cascade/sim/network.hpp"

namespace cascade::sim {

enum class HubCrash : std::uint8_t {
  kAfterFlush,            // the last batch reached the disk before the crash
  kLosingUnflushedBatch,  // changes since the last flush, and the replies they held, are lost
};

struct HubProcessConfig {
  hub::HubCoreConfig core{};
  Duration flush_interval{20};  // the hub's write-behind period
  Address address = 0;
  std::vector<Address> upstreams{};  // by index of core.uplink->endpoints
  // What a request from `from` came through, for eviction protection (a rack,
  // a proxy); empty function or "": the sender is its own source.
  // Valid until the next event (no copy per request).
  std::function<std::string_view(Address from)> source_of{};
  // Simulated time between audits of the core's running totals; 0: never.
  // O(nodes + instances) each: for tests, not for large simulations.
  Duration audit_interval{0};
  // Times the core's handle, on_upstream_message and tick calls (HubProcessStats::core_time).
  bool time_core = false;
};

// Called after the event they name; each may be empty.
struct HubHooks {
  // A message was handled (a request, or a reply from upstream). May crash the hub.
  std::function<void(Address from, const proto::Message&)> received{};
  std::function<void()> ticked{};   // tick() ran because a deadline was due
  std::function<void()> started{};  // an incarnation restored the disk and serves
};

struct HubProcessStats {
  std::uint64_t restarts = 0;
  std::uint64_t lost_while_down = 0;  // messages that reached the hub while it was not running
  std::uint64_t replies_lost_in_crash = 0;
  std::uint64_t deferred_lost_in_crash = 0;    // questions waiting for the upper tier
  std::uint64_t node_messages_sent = 0;        // pushes and reports sent down, by node
  std::uint64_t node_messages_unroutable = 0;  // for a node that has not beaten here
  std::uint64_t audits = 0;                    // recounts of the core's running totals
  std::uint64_t audit_failures = 0;            // ... that found a total had drifted
  std::string first_audit_failure{};           // what the first of them found, and when
  CoreTime core_time{};                        // with HubProcessConfig::time_core
};

class HubProcess {
 public:
  HubProcess(HubProcessConfig config, EventQueue& events, Network& network, HubHooks hooks);
  HubProcess(const HubProcess&) = delete;
  HubProcess& operator=(const HubProcess&) = delete;

  void boot();  // the first incarnation (separate from construction: hooks may need the owner)
  // Crashes the hub and starts a new one (epoch + 1) from the disk after `downtime`.
  // May be called from HubHooks::received: the crash then hits right after that
  // message was handled, before any flush.
  void restart(HubCrash crash, Duration downtime = Duration{0});

  // The network delivered `message` from `from` to this hub's address.
  void receive(Address from, const proto::Message& message);
  // An operator's edit of this hub's keys of a config group, made on the
  // hub's host (HubCore::edit_config): pushed to the group's followers at
  // once, its history written by the next flush. The hub must be up.
  hub::ConfigGroups::Outcome edit_config(std::string_view group,
                                         const std::vector<proto::ConfigEdit>& edits,
                                         const std::string& author);

  bool up() const { return core_ != nullptr; }
  const hub::HubCore& core() const { return *core_; }  // valid while up()
  const MemoryHubStore& disk() const { return disk_; }
  const HubProcessConfig& config() const { return config_; }
  const HubProcessStats& stats() const { return stats_; }
  // The registry's list of the service as consumers are served it (the hub's
  // health verdicts and operator marks applied; empty while down), sorted by id.
  std::vector<proto::Instance> instances(const proto::ServiceKey& service) const;
  bool has(const proto::ServiceKey& service, const std::string& instance_id) const;

 private:
  struct HeldReply {
    Address to;
    proto::Message message;
  };

  MonoTime now() const { return events_.now(); }
  std::optional<std::size_t> upstream_index(Address from) const;
  void send(Address to, const proto::Message& message) {
    network_.send(config_.address, to, message);
  }
  void route_core_output();
  void flush();
  void schedule_flush();
  void arm_timer();
  void on_timer(std::uint64_t gen);
  // Recounts the core's running totals when an audit is due (or `force`d).
  void audit_totals(bool force = false);

  HubProcessConfig config_;
  EventQueue& events_;
  Network& network_;
  HubHooks hooks_;
  MemoryHubStore disk_;
  std::unique_ptr<hub::HubCore> core_;
  std::uint64_t life_ = 0;
  std::uint64_t timer_gen_ = 0;
  std::optional<MonoTime> armed_;
  std::optional<MonoTime> next_audit_;   // nullopt: audits are off
  std::vector<HeldReply> held_replies_;  // durable replies waiting for the next flush
  std::unordered_map<std::uint64_t, Address> deferred_;  // token -> who asked
  std::unordered_map<std::string, Address>
      routes_;  // node id -> its last beat's sender (may_push_to)
  HubProcessStats stats_;
};

}  // namespace cascade::sim
