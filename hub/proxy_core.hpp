#pragma once
// The sans-IO heart of a cascading proxy (docs/design-tiers.md, "Proxy"): a
// hub role with no registry. It takes messages from many downstream peers
// (agents, tools), forwards them upstream in batch frames, and fans the
// replies of each batch back out to the peers that asked.
//
// Why these rules:
// - Batching: messages wait until `max_batch` are pending or the oldest has
//   waited `max_delay` (never more than kMaxProxyDelay), whichever is first.
//   A short, bounded delay buys one frame per many beats upstream.
// - Identity: UpBeat and Deregister carry (node_id, seq), echoed by DownBeat
//   (ack_seq) and DeregisterAck (seq), so their replies are routed by it.
//   Request ids of Query / StatusRequest / ServicesRequest are chosen by each
//   peer and may collide: the proxy rewrites each to a proxy-unique id and
//   restores the original in the reply.
// - Matching: the hub answers a batch with a batch of replies in the same
//   order, so a reply frame is matched by position to the oldest batch still
//   waiting, and every item is checked against the identity it must echo. An
//   item that fails the check, or every item of a frame whose count differs
//   from that batch, is matched by identity alone. An ErrorReply carries only
//   a `ref`, which cannot tell a seq from a request id: it is routed only by
//   position (or fanned out to the whole batch when the hub rejected the frame
//   as a whole: one ErrorReply with ref 0 for a batch of several).
// - Bounded state: a forwarded message waits for its reply `reply_timeout`
//   after its batch was sent; on_timer drops it after that and counts it. A
//   reply that matches nothing is counted and dropped, never delivered.
//
// Sans-IO: time comes in as `now`; the I/O shell encodes upstream batches with
// proto::encode_batch, decodes reply frames with proto::decode_frame and sends
// the downstream messages. Thread-safety: none; one owning thread drives it.

#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <variant>
#include <vector>

#include "cascade/common/access.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/access_rules.hpp"

namespace cascade::hub {

// Opaque handle of a downstream connection, chosen by the I/O shell (for
// example the ZeroMQ routing id mapped to a number).
using PeerToken = std::uint64_t;

// The longest a message may wait in the proxy before it is sent upstream.
inline constexpr Duration kMaxProxyDelay{50};

struct ProxyCoreConfig {
  std::size_t max_batch = 256;   // messages per upstream batch, 1..proto::kMaxBatchMessages
  Duration max_delay{20};        // ms the oldest pending message may wait, 0..kMaxProxyDelay
  Duration reply_timeout{5000};  // ms a sent message waits for its reply, > max_delay
};

// "" when the configuration is acceptable, else what is wrong with it.
std::string check_proxy_config(const ProxyCoreConfig& config);

struct ProxyCounters {
  std::uint64_t forwarded = 0;          // messages accepted for upstream
  std::uint64_t rejected = 0;           // messages of a type a proxy does not forward
  std::uint64_t forbidden = 0;          // messages their key may not send (refused here)
  std::uint64_t batches = 0;            // upstream batches emitted
  std::uint64_t replies_routed = 0;     // downstream messages produced from upstream replies
  std::uint64_t unmatched_replies = 0;  // upstream replies no in-flight message was waiting for
  std::uint64_t timed_out = 0;          // in-flight messages dropped after reply_timeout
  std::uint64_t reports = 0;            // failure reports sent on at once
  std::uint64_t pushes_routed = 0;      // hub pushes delivered to the node they name
  std::uint64_t pushes_unroutable = 0;  // ... for a node that never beat through this proxy

  // By name, as metrics sample them (hub/hub_metrics.hpp).
  std::vector<std::pair<std::string, std::uint64_t>> list() const {
    return {{"forwarded", forwarded},           {"rejected", rejected},
            {"forbidden", forbidden},           {"batches", batches},
            {"replies_routed", replies_routed}, {"unmatched_replies", unmatched_replies},
            {"timed_out", timed_out},           {"reports", reports},
            {"pushes_routed", pushes_routed},   {"pushes_unroutable", pushes_unroutable}};
  }
};

struct Downstream {
  PeerToken peer = 0;
  proto::Message message;
};

// What the shell must do after a call: send each upstream batch as one batch
// frame (in order), and each downstream message to its peer.
struct ProxyActions {
  std::vector<std::vector<proto::Message>> upstream_batches;
  // Fire-and-forget messages (failure reports): sent upstream at once, each
  // as a frame of its own, and never waited for.
  std::vector<proto::Message> upstream_now;
  std::vector<Downstream> downstream;
};

class ProxyCore {
 public:
  // `config` must pass check_proxy_config (asserted); use create() for
  // configuration that comes from a user.
  explicit ProxyCore(ProxyCoreConfig config);
  static std::variant<ProxyCore, std::string> create(ProxyCoreConfig config);

  // A message from downstream peer `peer`. Forwardable types (UpBeat, Query,
  // Deregister, StatusRequest, ServicesRequest) are queued for upstream and a
  // batch is emitted when max_batch are pending; any other type is answered
  // at once with an ErrorReply (kUnknownType).
  //
  // `key`: the key the peer authenticated with here (nullptr: the proxy runs
  // without keys). The proxy vouches for its peers (docs/security.md): with
  // keys, a message its key may not send (role, scopes) is refused here with
  // kForbidden, and what goes upstream names the key in `on_behalf_of`, which
  // the hub binds nodes to and signs reports with.
  ProxyActions accept(MonoTime now, PeerToken peer, proto::Message msg,
                      const access::Principal* key = nullptr);

  // Emits the pending batch if its oldest message has waited max_delay, and
  // drops in-flight messages whose reply_timeout has passed.
  ProxyActions on_timer(MonoTime now);

  // When on_timer next has work; nullopt when nothing is pending or in flight.
  std::optional<MonoTime> next_deadline() const;

  // The decoded items of one upstream reply frame, in order. Returns the
  // replies to send downstream, with original request ids restored. A frame
  // holding a hub's push (DownBeat with push set) is not a reply: it goes to
  // the peer the named node last beat from.
  ProxyActions on_upstream_reply(MonoTime now, std::vector<proto::Message> replies);

  const ProxyCounters& counters() const { return counters_; }
  std::size_t pending_count() const { return pending_.size(); }
  std::size_t in_flight_count() const { return in_flight_.size(); }
  const ProxyCoreConfig& config() const { return config_; }

 private:
  enum class Kind : std::uint8_t { kUpBeat, kDeregister, kQuery, kStatus, kServices };

  // Where the reply to one forwarded message goes. `id` is the proxy-unique
  // id of the slot; for requests it is also the request id sent upstream.
  struct Route {
    PeerToken peer = 0;
    Kind kind = Kind::kUpBeat;
    std::string node_id;        // UpBeat / Deregister
    std::uint64_t seq = 0;      // UpBeat / Deregister
    std::uint64_t request = 0;  // the peer's own request id (requests)
    MonoTime sent_at{};
  };
  struct Pending {
    std::uint64_t id = 0;
    Route route;
    proto::Message message;
  };
  struct SentBatch {
    MonoTime sent_at{};
    std::vector<std::uint64_t> ids;  // in the order of the batch
  };
  using BeatKey = std::pair<std::string, std::uint64_t>;  // (node_id, seq)
  struct BeatKeyHash {
    std::size_t operator()(const BeatKey& k) const noexcept {
      return std::hash<std::string>{}(k.first) ^ (std::hash<std::uint64_t>{}(k.second) << 1);
    }
  };

  // Refused when `key` may not send `msg`; else stamps the name it acts as.
  static std::optional<Refusal> vouch(const access::Principal& key, proto::Message& msg);
  void flush(MonoTime now, ProxyActions& out);
  bool route_push(const proto::Message& message, ProxyActions& out);
  void forward_report(PeerToken peer, proto::FailureReport report, ProxyActions& out);
  void expire(MonoTime now);
  // Routes `reply` to the slot `id` if it is the answer that slot waits for.
  bool route_positional(std::uint64_t id, proto::Message& reply, ProxyActions& out);
  bool route_by_identity(proto::Message& reply, ProxyActions& out);
  // The in-flight slot id the reply names by its identity, if any.
  std::optional<std::uint64_t> identity_of(const proto::Message& reply) const;
  bool answers(const Route& route, std::uint64_t id, const proto::Message& reply) const;
  void deliver(std::uint64_t id, proto::Message reply, ProxyActions& out);
  void forget(std::uint64_t id);
  void drop_answered_batches();

  ProxyCoreConfig config_;
  std::uint64_t next_id_ = 1;
  std::vector<Pending> pending_;
  MonoTime oldest_pending_{};
  // Sent, unanswered messages by id. Ids grow in send order, so the first
  // entry is always the next to time out.
  std::map<std::uint64_t, Route> in_flight_;
  std::unordered_map<BeatKey, std::uint64_t, BeatKeyHash> beats_;  // identity index
  std::deque<SentBatch> sent_;  // batches awaiting their reply frame, oldest first
  // The peer each node last beat from, so a hub's push reaches it. Bounded:
  // cleared when it outgrows kMaxKnownNodes (beats refill it within an interval).
  std::unordered_map<std::string, PeerToken> node_peers_;
  ProxyCounters counters_;
};

}  // namespace cascade::hub
