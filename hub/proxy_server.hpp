#pragma once
// The I/O shell of a cascading proxy (`cascade-hub --proxy --upstream EP`):
// a ROUTER for the agents below, a DEALER to the hub above, and a ProxyCore
// between them. One thread owns all three. Agents talk to a proxy exactly as
// to a hub; the hub above sees one batch frame per batching delay instead of
// one frame per agent beat. Identity travels in the messages, so nothing
// about the agents changes upstream.

#include <atomic>
#include <string>
#include <unordered_map>
#include <zmq.hpp>

#include "cascade/common/clock.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/link_timing.hpp"
#include "cascade/common/log.hpp"
#include "cascade/hub/connection_monitor.hpp"
#include "cascade/hub/curve_gate.hpp"
#include "cascade/hub/hub_metrics.hpp"
#include "cascade/hub/owner_mailbox.hpp"
#include "cascade/hub/proxy_core.hpp"

namespace cascade::hub {

struct ProxyServerConfig {
  std::string listen = "tcp://127.0.0.1:7401";
  std::string upstream = "tcp://127.0.0.1:7400";
  ProxyCoreConfig core;
  std::size_t max_frame_bytes = proto::kDefaultMaxFrameBytes;
  // Heartbeats and reconnects of the upstream connection (cascade-hub derives
  // them from its uplink interval).
  LinkTiming link = LinkTiming::for_beat_interval(std::chrono::milliseconds{1000});
  ListenConfig connections;  // the downstream ROUTER's, as a hub's
  // Curve on both sides, as a hub's: agents below are checked against the
  // authorised keys; the upstream hub is dialled with upstream_public_key.
  SecurityConfig security;
};

class ProxyServer {
 public:
  ProxyServer(const ProxyServerConfig& config, const Clock& clock, zmq::context_t& context);

  // Binds the downstream endpoint and connects upstream; returns the bound
  // endpoint. Throws zmq::error_t (e.g. EADDRINUSE).
  std::string bind();

  // Serves until `stop` is set; reloads the authorised keys whenever
  // `reload_requested` is set (SIGHUP), clearing it.
  void run(const std::atomic<bool>& stop, std::atomic<bool>* reload_requested = nullptr);

  // Registers the proxy's metrics in `registry` (which must outlive the
  // proxy), as HubServer::enable_metrics does; before run().
  void enable_metrics(metrics::Registry& registry,
                      std::chrono::milliseconds sample_timeout = std::chrono::seconds(2));

  const ProxyCore& core() const { return core_; }

 private:
  // What a scrape shows of the counters; on the owning thread.
  metrics::SampledFamilies::Sample metrics_sample() const;
  void from_downstream();
  // One frame from an agent: [routing id, payload].
  void handle_downstream(std::vector<zmq::message_t>& frames);
  void from_upstream();
  // One message from an agent, sent with `principal`'s key (nullptr without keys).
  void accept(PeerToken peer, proto::Message message, const access::Principal* principal);
  void dispatch(ProxyActions actions);
  PeerToken token_for(const zmq::message_t& routing_id);
  void forget_idle_peers(MonoTime now);
  void log_bad_input(const proto::DecodeFailure& failure);

  ProxyServerConfig config_;
  const Clock& clock_;
  CurveGate gate_;  // before the sockets: the ZAP handler must be up before bind()
  zmq::socket_t downstream_;
  ConnectionMonitor connections_;  // of downstream_: limit, idle timeout
  zmq::socket_t upstream_;
  ProxyCore core_;
  proto::DecodeLimits limits_;
  // ZeroMQ routing ids of the agents below, as the tokens ProxyCore keeps.
  std::unordered_map<std::string, PeerToken> tokens_;
  struct Peer {
    std::string routing_id;
    MonoTime last_seen{};
  };
  std::unordered_map<PeerToken, Peer> peers_;
  MonoTime next_peer_sweep_{};
  PeerToken next_token_ = 1;
  RateLimit bad_input_log_{10, Duration{10'000}};
  OwnerMailbox mailbox_;
  std::unique_ptr<ShellMetrics> metrics_;  // null: --metrics not given
};

}  // namespace cascade::hub
