#pragma once
// A simulated datagram network between numbered node addresses.
//
// Every message is encoded with proto::encode when sent and decoded with
// proto::decode_frame when delivered, so the codec sits on every path of a
// simulation. A message is lost with `drop_probability`, is lost when its link
// is cut at the moment it is sent, and otherwise arrives after a delay drawn
// uniformly from [min_delay, max_delay]; a fault script can override both
// for chosen messages. Independent delays mean messages on
// one link may overtake each other, as datagrams and reconnecting streams do,
// unless NetworkConfig::in_order keeps each link in order.
// All draws come from one seeded Rng: the same seed and the same sends give
// the same deliveries.

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/common/random.hpp"
#include "cascade/sim/event_queue.hpp"
#include "cascade/sim/link_arrivals.hpp"

namespace cascade::sim {

struct NetworkConfig {
  double drop_probability = 0.05;
  Duration min_delay{1};
  Duration max_delay{50};
  // Each link delivers in the order sent, as one TCP connection (ZeroMQ)
  // does: a message never overtakes an earlier one from the same sender to
  // the same receiver (its delay grows to arrive after it). Off: datagrams.
  bool in_order = false;
};

struct NetworkStats {
  std::uint64_t sent = 0;
  std::uint64_t dropped = 0;  // lost at random or to the scripted fault
  std::uint64_t cut = 0;      // lost to a partition
  std::uint64_t delivered = 0;
  std::uint64_t bytes = 0;            // encoded bytes of every message sent
  std::uint64_t decode_failures = 0;  // a frame the codec could not read back: a codec bug

  NetworkStats& operator+=(const NetworkStats& o) {
    sent += o.sent;
    dropped += o.dropped;
    cut += o.cut;
    delivered += o.delivered;
    bytes += o.bytes;
    decode_failures += o.decode_failures;
    return *this;
  }
};

class Network {
 public:
  // Called at delivery time with the decoded message.
  using Receiver = std::function<void(Address from, Address to, const proto::Message&)>;
  // A scripted fault decides one message's fate instead of chance.
  struct Fault {
    bool lose = false;
    std::optional<Duration> delay;  // deliver after exactly this, whatever chance says
  };
  using FaultScript = std::function<Fault(Address from, Address to, const proto::Message&)>;
  // Told of every message sent, with its encoded size, whatever its fate (for
  // benchmarks that count messages and bytes per link).
  using SendTap = std::function<void(Address from, Address to, std::size_t bytes)>;

  Network(NetworkConfig config, std::uint64_t seed, EventQueue& events, Receiver receiver);

  void send(Address from, Address to, const proto::Message& message);

  // Partitions. cut(a, b) loses everything sent from a to b; heal(a, b) undoes it.
  void cut(Address from, Address to) { cut_links_.insert({from, to}); }
  void heal(Address from, Address to) { cut_links_.erase({from, to}); }
  void cut_both_ways(Address a, Address b);
  void heal_both_ways(Address a, Address b);
  void heal_all() { cut_links_.clear(); }
  bool is_cut(Address from, Address to) const { return cut_links_.contains({from, to}); }

  void set_fault_script(FaultScript script) { script_ = std::move(script); }  // empty: none
  void set_send_tap(SendTap tap) { tap_ = std::move(tap); }                   // empty: none

  // ---- between partitions (TieredWorld's lock step, sim/lock_step.hpp)
  // A message sent to another partition's network, not yet handed over.
  struct Crossing {
    MonoTime arrival{};
    Address from = 0;
    Address to = 0;
    proto::Bytes bytes;
  };
  // The shortest delay a crossing message may have: the lock step's window.
  static constexpr Duration kMinCrossingDelay{1};
  // Messages to the addresses `remote` names leave through outbox() instead
  // of this network's queue (empty function: none), after the same draws,
  // trace and in-order delay as any other; a delay under kMinCrossingDelay
  // is a logic_error.
  void set_remote(std::function<bool(Address)> remote) { remote_ = std::move(remote); }
  // What was sent to remote addresses since clear_outbox(); the buffers stay
  // the network's (accept() swaps them), so crossing allocates nothing once warm.
  std::span<Crossing> outbox() { return {outbox_.data(), outbox_used_}; }
  void clear_outbox() { outbox_used_ = 0; }
  // Delivers a message another partition's network sent, at its arrival.
  void accept(Crossing& crossing);

  NetworkConfig& config() { return config_; }  // may be changed between events
  const NetworkStats& stats() const { return stats_; }
  // FNV-1a over every send: time, endpoints, bytes and fate. Equal hashes mean equal runs.
  std::uint64_t trace_hash() const { return trace_hash_; }

 private:
  // A message in flight: its endpoints and encoded bytes, in a reused slot.
  struct InFlight {
    Address from = 0;
    Address to = 0;
    proto::Bytes bytes;
  };
  std::uint32_t hold(Address from, Address to, proto::Bytes& bytes);  // swaps bytes into a slot
  void cross(Address from, Address to, Duration delay);               // scratch_ into the outbox
  void deliver(std::uint32_t slot);
  void trace(Address from, Address to, const proto::Bytes& bytes, std::int64_t fate);
  Duration in_order_delay(Address from, Address to, Duration delay);

  NetworkConfig config_;
  Rng rng_;
  EventQueue& events_;
  Receiver receiver_;
  FaultScript script_;
  SendTap tap_;
  LinkArrivals arrivals_;  // with config_.in_order
  proto::Bytes scratch_;   // the message being sent
  std::vector<InFlight> in_flight_;
  std::vector<std::uint32_t> free_slots_;
  std::function<bool(Address)> remote_;
  std::vector<Crossing> outbox_;
  std::size_t outbox_used_ = 0;
  std::set<std::pair<Address, Address>> cut_links_;
  NetworkStats stats_;
  std::uint64_t trace_hash_ = 0xcbf29ce484222325ULL;
};

}  // namespace cascade::sim
