#include "cascade/hub/proxy_server.hpp"

#include <algorithm>
#include <zmq_addon.hpp>

#include "cascade/common/zmq_util.hpp"
#include "cascade/hub/frame_pass.hpp"

namespace cascade::hub {

namespace {
constexpr Duration kMaxPollWait{100};
constexpr int kHighWaterMark = 100'000;
// An agent that reconnects gets a new ZeroMQ routing id: forget ids that have
// been silent this long, so the maps cannot grow with reconnections.
constexpr Duration kPeerIdle{std::chrono::minutes(10)};
constexpr Duration kPeerSweep{std::chrono::minutes(1)};
}  // namespace

ProxyServer::ProxyServer(const ProxyServerConfig& config, const Clock& clock,
                         zmq::context_t& context)
    : config_(config),
      clock_(clock),
      gate_(config.security, context),
      downstream_(context, zmq::socket_type::router),
      connections_(downstream_, context, config.connections, "proxy"),
      upstream_(context, zmq::socket_type::dealer),
      core_(config.core) {
  limits_.max_frame_bytes = config.max_frame_bytes;
  for (auto* s : {&downstream_, &upstream_}) {
    s->set(zmq::sockopt::linger, 1000);
    s->set(zmq::sockopt::rcvhwm, kHighWaterMark);
    s->set(zmq::sockopt::sndhwm, kHighWaterMark);
  }
  // A dead upstream connection is found and made again within an uplink
  // interval; batches meanwhile are dropped, not queued (see dispatch()).
  configure_link(upstream_, config.link);
  downstream_.set(zmq::sockopt::maxmsgsize,
                  static_cast<std::int64_t>(config.max_frame_bytes) + 1024);
  apply_listen_options(downstream_, config.connections);
  gate_.serve_on(downstream_);
  gate_.dial_upstream(upstream_, config_.upstream);
}

std::string ProxyServer::bind() {
  downstream_.bind(config_.listen);
  upstream_.connect(config_.upstream);
  return downstream_.get(zmq::sockopt::last_endpoint);
}

void ProxyServer::run(const std::atomic<bool>& stop, std::atomic<bool>* reload_requested) {
  spdlog::info("proxy forwarding to {} (batch {} messages or {} ms)", config_.upstream,
               config_.core.max_batch, config_.core.max_delay.count());
  while (!stop.load(std::memory_order_relaxed)) {
    if (reload_requested != nullptr && reload_requested->exchange(false)) gate_.reload();
    zmq::pollitem_t items[] = {{downstream_.handle(), 0, ZMQ_POLLIN, 0},
                               {upstream_.handle(), 0, ZMQ_POLLIN, 0},
                               connections_.poll_item(),
                               mailbox_.poll_item()};
    auto wait = kMaxPollWait;
    if (auto deadline = core_.next_deadline())
      wait = std::clamp(*deadline - clock_.now(), Duration{0}, kMaxPollWait);
    poll_ignoring_signals(items, 4, wait);
    connections_.drain_events(clock_.now());  // a connection's messages follow its accept
    if (items[3].revents & ZMQ_POLLIN) mailbox_.run_pending();
    if (items[0].revents & ZMQ_POLLIN) from_downstream();
    if (items[1].revents & ZMQ_POLLIN) from_upstream();
    dispatch(core_.on_timer(clock_.now()));
    forget_idle_peers(clock_.now());
    connections_.tick(clock_.now());
  }
  spdlog::info("proxy stopped");
}

PeerToken ProxyServer::token_for(const zmq::message_t& routing_id) {
  auto [it, inserted] = tokens_.try_emplace(routing_id.to_string(), next_token_);
  if (inserted) peers_.emplace(next_token_++, Peer{it->first, {}});
  peers_[it->second].last_seen = clock_.now();
  return it->second;
}

void ProxyServer::forget_idle_peers(MonoTime now) {
  if (now < next_peer_sweep_) return;
  next_peer_sweep_ = now + kPeerSweep;
  std::erase_if(peers_, [&](const auto& entry) {
    if (now - entry.second.last_seen < kPeerIdle) return false;
    tokens_.erase(entry.second.routing_id);
    return true;
  });
}

void ProxyServer::from_downstream() {
  std::vector<zmq::message_t> frames;
  for (FramePass pass(clock_); pass.another();) {
    frames.clear();
    if (!zmq::recv_multipart(downstream_, std::back_inserter(frames), zmq::recv_flags::dontwait))
      return;
    if (frames.size() != 2)
      continue;  // [routing id, payload] from a DEALER; nothing else is spoken here
    if (!metrics_) {
      handle_downstream(frames);
      continue;
    }
    const auto timer = metrics_->frame_received(frames[1].size());
    handle_downstream(frames);
    metrics_->frame_handled(timer);
  }
}

void ProxyServer::handle_downstream(std::vector<zmq::message_t>& frames) {
  const PeerToken peer = token_for(frames[0]);
  const auto auth = gate_.authenticate(frames[1], clock_.now());
  if (!auth.passed) {
    dispatch({{}, {}, {Downstream{peer, CurveGate::unauthenticated_reply()}}});
    return;
  }
  auto decoded = proto::decode_frame(frames[1].to_string_view(), limits_);
  if (const auto kind = peer_kind(decoded, auth.principal))
    connections_.valid_message(frames[1], clock_.now(), *kind);
  for (auto& item : decoded.items) {
    if (auto* failure = std::get_if<proto::DecodeFailure>(&item)) {
      log_bad_input(*failure);
      dispatch({{}, {}, {Downstream{peer, proto::to_error_reply(*failure)}}});
      continue;
    }
    accept(peer, std::move(std::get<proto::Message>(item)), auth.principal);
  }
}

// The principal is what this proxy vouches for when it forwards the message
// (protocol revision 5, on_behalf_of; ProxyCore::accept).
void ProxyServer::accept(PeerToken peer, proto::Message message,
                         const access::Principal* principal) {
  dispatch(core_.accept(clock_.now(), peer, std::move(message), principal));
}

void ProxyServer::from_upstream() {
  zmq::message_t frame;
  for (FramePass pass(clock_);
       pass.another() && upstream_.recv(frame, zmq::recv_flags::dontwait);) {
    std::vector<proto::Message> replies;
    for (auto& item : proto::decode_frame(frame.to_string_view(), limits_).items) {
      if (auto* message = std::get_if<proto::Message>(&item))
        replies.push_back(std::move(*message));
      else
        log_bad_input(std::get<proto::DecodeFailure>(item));
    }
    dispatch(core_.on_upstream_reply(clock_.now(), std::move(replies)));
  }
}

void ProxyServer::dispatch(ProxyActions actions) {
  for (const auto& batch : actions.upstream_batches) {
    const auto bytes = proto::encode_batch(batch);
    // Not connected or over the high-water mark: the batch is lost like a
    // dropped datagram; agents retry, and the core times the routes out.
    [[maybe_unused]] auto sent = upstream_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
  for (const auto& message : actions.upstream_now) {
    const auto bytes = proto::encode(message);
    [[maybe_unused]] auto sent = upstream_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
  for (const auto& out : actions.downstream) {
    auto peer = peers_.find(out.peer);
    if (peer == peers_.end()) continue;
    const auto bytes = proto::encode(out.message);
    std::array<zmq::const_buffer, 2> frames{zmq::buffer(peer->second.routing_id),
                                            zmq::buffer(bytes)};
    const auto sent = zmq::send_multipart(downstream_, frames, zmq::send_flags::dontwait);
    if (metrics_ && sent) {
      metrics_->reply(out.message);
      metrics_->frame_sent(bytes.size());
    }
  }
}

void ProxyServer::enable_metrics(metrics::Registry& registry,
                                 std::chrono::milliseconds sample_timeout) {
  metrics_ = std::make_unique<ShellMetrics>(registry, "cascade_proxy");
  add_hub_info(registry, "cascade_proxy",
               {{"upstream", config_.upstream}, {"security", std::string(gate_.mode())}});
  auto sampled = std::make_unique<metrics::SampledFamilies>([this, sample_timeout] {
    return ask<metrics::SampledFamilies::Sample>(
        mailbox_, [this] { return metrics_sample(); }, sample_timeout);
  });
  add_proxy_state_families(*sampled);
  registry.add(std::move(sampled));
}

metrics::SampledFamilies::Sample ProxyServer::metrics_sample() const {
  auto counters = core_.counters().list();
  connections_.append_counters(counters);
  gate_.append_counters(counters);
  return sample_of(counters);
}

void ProxyServer::log_bad_input(const proto::DecodeFailure& failure) {
  if (metrics_) metrics_->decode_error(failure.code);
  std::uint64_t suppressed = 0;
  if (bad_input_log_.allow(clock_.now(), suppressed))
    spdlog::warn("proxy rejected a message: {} ({}) [{} more suppressed]", failure.what,
                 proto::to_string(failure.code), suppressed);
}

}  // namespace cascade::hub
