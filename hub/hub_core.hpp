#pragma once
// The hub's registry logic as a deterministic state machine.
//
// HubCore takes (now, message) and returns the reply; tick(now) expires
// leases; take_persist_batch() hands over what must be written. It never reads
// a clock, touches a socket or a file, so leases and versions are tested with
// a fake clock and thousands of hubs can run in one simulated process.
// Thread-safety: none; one owning thread drives it (hub/hub_server.hpp).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/clock.hpp"
#include "common/codec.hpp"
#include "common/protocol.hpp"
#include "hub/departed_nodes.hpp"
#include "hub/lease_queue.hpp"
#include "hub/metrics.hpp"
#include "hub/node_index.hpp"
#include "hub/registry.hpp"
#include "hub/store.hpp"

namespace cascade::hub {

struct HubCoreConfig {
  std::string hub_id = "hub";
  std::uint32_t tier = 1;
  Duration lease{6000};                          // an agent that misses this long is expired
  std::size_t change_log_per_service = 256;      // deltas reach back this many changes
  std::size_t max_expirations_per_tick = 10000;  // bounds the work of one tick
  std::size_t max_registrations_per_node = 10000;
};

struct HandleResult {
  proto::Message reply;
  // True when the reply acknowledges a state change: the server must commit
  // the pending PersistBatch before sending it ("nothing acknowledged is lost").
  bool durable = false;
};

class HubCore {
 public:
  HubCore(HubCoreConfig config, std::uint64_t hub_epoch, MonoTime started);

  // Loads a persisted snapshot. Every restored agent gets one full lease of
  // grace from `now`: a crashed agent expires after it, a live one renews.
  void restore(const HubSnapshot& snapshot, MonoTime now);

  HandleResult handle(MonoTime now, const proto::Message& message);
  // Starts loading what handle() will need for this message into the CPU
  // cache. For a batch: call it for every message first, then handle them.
  void prefetch(const proto::Message& message) const;
  // A message that failed to decode: counted, answered with an ErrorReply.
  proto::ErrorReply on_decode_failure(const proto::DecodeFailure& failure);

  // Expires leases whose deadline is <= now (at most max_expirations_per_tick).
  void tick(MonoTime now);
  // When tick() next has work; nullopt when no lease is held.
  std::optional<MonoTime> next_deadline() const;

  PersistBatch take_persist_batch();
  // Marks everything in a batch that failed to commit dirty again, so the
  // next batch writes its current values.
  void requeue(const PersistBatch& failed);

  const HubCounters& counters() const { return counters_; }
  const Registry& registry() const { return registry_; }
  std::size_t node_count() const { return nodes_.size(); }
  std::size_t subscription_count() const;
  std::uint64_t epoch() const { return epoch_; }
  const HubCoreConfig& config() const { return config_; }

 private:
  struct OwnedInstance {
    ServiceEntry* service;
    std::string id;
    auto operator<=>(const OwnedInstance&) const = default;
  };
  struct Node {
    std::string id;
    std::uint64_t epoch = 0;
    std::uint64_t last_seq = 0;
    std::uint64_t digest = 0;
    bool set_known = false;            // the hub holds the set that `digest` names
    std::vector<OwnedInstance> owned;  // sorted
    std::vector<const ServiceEntry*> uses;
    LeaseQueue<Node*>::Handle lease;
  };
  struct NodeIdOf {
    std::string_view operator()(const Node& node) const { return node.id; }
  };

  HandleResult on_upbeat(MonoTime now, const proto::UpBeat& beat);
  HandleResult on_query(const proto::Query& query);
  HandleResult on_deregister(MonoTime now, const proto::Deregister& msg);
  proto::StatusReply status(MonoTime now, std::uint64_t request_id) const;
  proto::ServicesReply services(std::uint64_t request_id) const;
  HandleResult reject(proto::ErrorCode code, std::string message, std::uint64_t ref);

  // The node of this beat (`known`, or a new one), its lease renewed.
  Node& admit(MonoTime now, const proto::UpBeat& beat, Node* known, bool& state_changed);
  bool apply_registration_set(Node& node, std::vector<proto::Registration> regs);
  void collect_updates(Node& node, const std::vector<proto::ServiceUse>& uses,
                       std::vector<proto::ServiceUpdate>& out);
  // Removes the node and its instances (its lease must already be gone); returns the count.
  std::size_t drop_node(Node& node);

  HubCoreConfig config_;
  std::uint64_t epoch_;
  MonoTime started_;
  Registry registry_;
  std::unordered_map<std::string, Node> nodes_;  // owns the nodes; node-based: Node* stays valid
  NodeIndex<Node, NodeIdOf> index_;              // the beat path's lookup into nodes_
  LeaseQueue<Node*> leases_;
  HubCounters counters_;
  std::vector<std::string> dirty_nodes_;
  DepartedNodes departed_;
};

}  // namespace cascade::hub
