#include "cascade/hub/hub_server.hpp"

#include <malloc.h>

#include <algorithm>
#include <zmq_addon.hpp>

#include "cascade/common/codec.hpp"
#include "cascade/common/frame_peek.hpp"
#include "cascade/common/message_parts.hpp"
#include "cascade/common/zmq_util.hpp"
#include "cascade/hub/frame_pass.hpp"
#include "cascade/hub/sqlite_store.hpp"

namespace cascade::hub {

namespace {

constexpr Duration kMaxPollWait{100};  // how soon a stop request is noticed
constexpr int kReceiveHighWaterMark = 100'000;
// How long expiry (and the core's other timers) may wait while a backlog of
// frames drains: a renewal queued behind them must not find its lease gone.
constexpr Duration kMaxTickDeferral{500};
constexpr int kUpstreamHighWaterMark = 1000;
constexpr Duration kRoutePruneInterval{60'000};  // routes of departed nodes are dropped this often
// The least room a reply in a large batch gets before its list goes in parts.
constexpr std::size_t kMinPartBytes = 16 * 1024;

// The payloads a reply frame goes out as: the frame itself, then the parts of
// any list in it too large for one frame, each in a frame of its own
// (protocol section 5.13). Only a frame over kMaxPartBytes pays for the split.
std::vector<proto::Bytes> payloads_of(std::vector<proto::Message> messages, bool batched) {
  auto frame = [&] {
    return batched ? proto::encode_batch(messages) : proto::encode(messages.front());
  };
  auto bytes = frame();
  if (bytes.size() <= proto::kMaxPartBytes) return {std::move(bytes)};
  const auto budget = std::max(proto::kMaxPartBytes / messages.size(), kMinPartBytes);
  std::vector<proto::Bytes> payloads(1);
  for (auto& message : messages) {
    auto parts = proto::split_into_parts(std::move(message), budget);
    message = std::move(parts.front());
    for (std::size_t i = 1; i < parts.size(); ++i)
      payloads.push_back(proto::encode(parts[i]));
  }
  payloads.front() = frame();
  return payloads;
}

using Frames = std::vector<zmq::message_t>;  // HubServer::Multipart

// One multipart message per payload, each with `envelope`'s routing frames.
std::vector<Frames> addressed(Frames& envelope, std::vector<proto::Bytes> payloads) {
  std::vector<Frames> out;
  for (const auto& payload : payloads) {
    auto& frames = out.emplace_back();
    for (std::size_t i = 0; i + 1 < envelope.size(); ++i)
      frames.emplace_back().copy(envelope[i]);
    frames.emplace_back(payload.data(), payload.size());
  }
  return out;
}

HubCore make_core(const HubConfig& config, const Clock& clock, HubStore& store) {
  const auto epoch = store.next_epoch();
  HubCore core(config.core_config(), epoch, clock.now());
  const auto started = clock.now();
  auto snapshot = store.load();
  const auto loaded = clock.now();
  core.restore(snapshot, loaded);
  spdlog::info("read the store in {} ms ({} agents, {} instances), restored them in {} ms",
               (loaded - started).count(), snapshot.nodes.size(), snapshot.instances.size(),
               (clock.now() - loaded).count());
  snapshot = {};
  // The snapshot (the instance rows packed, every other row as heap strings)
  // is freed by now; hand its pages back. Left to the allocator they stayed
  // in the RSS: at 1M instances a restarted hub took 785 MiB against 401
  // before the restart (docs/benchmarks.md, "Hub restart at 1M instances").
  ::malloc_trim(0);
  return core;
}

// The hub's own queue holds at least a few of the largest frames it accepts.
InboundLimits inbound_limits(const HubConfig& config) {
  auto limits = config.inbound;
  limits.max_bytes = std::max(limits.max_bytes, 4 * config.max_frame_bytes);
  return limits;
}

// What a peer's nodes fail together through, for eviction protection: its
// /24 subnet on a network (all agents behind one proxy share the proxy's), or
// the connection itself on loopback, where a subnet means nothing (a proxy's
// agents still share its connection). `peer`: the frame's Peer-Address, as
// the gate read it ("" for inproc and ipc peers: the connection, then).
std::string source_of(const std::vector<zmq::message_t>& frames, const std::string& peer) {
  const bool ipv4 = !peer.empty() && peer.find(':') == std::string::npos;
  if (ipv4 && !peer.starts_with("127.")) return peer.substr(0, peer.rfind('.')) + ".0/24";
  if (!peer.empty() && !ipv4 && peer != "::1") return peer;
  const auto id = frames.front().to_string_view();
  std::string hex = "conn:";
  for (unsigned char c : id)
    hex += fmt::format("{:02x}", c);
  return hex;
}

}  // namespace

HubServer::HubServer(const HubConfig& config, const Clock& clock, HubStore& store,
                     zmq::context_t& context)
    : config_(config),
      clock_(clock),
      gate_(config.security, context),
      socket_(context, zmq::socket_type::router),
      connections_(socket_, context, config.connections, "hub " + config.id),
      core_(make_core(config, clock, store)),
      inbound_(inbound_limits(config)),
      probes_(config.probe_runner),
      writer_(store),
      last_flush_(clock.now()),
      next_route_prune_(clock.now() + kRoutePruneInterval),
      upstream_links_(config.upstreams.size()) {
  limits_.max_frame_bytes = config.max_frame_bytes;
  socket_.set(zmq::sockopt::linger, 1000);
  socket_.set(zmq::sockopt::rcvhwm, kReceiveHighWaterMark);
  socket_.set(zmq::sockopt::sndhwm, kReceiveHighWaterMark);
  // ZeroMQ drops a peer that sends a larger message before we ever see it; the
  // decoder enforces the exact limit for anything smaller.
  socket_.set(zmq::sockopt::maxmsgsize, static_cast<std::int64_t>(config.max_frame_bytes) + 1024);
  apply_listen_options(socket_, config.connections);
  gate_.serve_on(socket_);
  connect_upstreams(context);
}

void HubServer::connect_upstreams(zmq::context_t& context) {
  for (const auto& endpoint : config_.upstreams) {
    auto& s = upstreams_.emplace_back(context, zmq::socket_type::dealer);
    // Heartbeats and reconnects paced by the uplink's beats: after a cut the
    // link is made again within one uplink interval of the heal.
    configure_link(s, LinkTiming::for_beat_interval(config_.effective_uplink_interval()));
    s.set(zmq::sockopt::sndhwm, kUpstreamHighWaterMark);
    gate_.dial_upstream(s, endpoint);
    s.connect(endpoint);
    spdlog::info("tier {} hub {}: upstream {}", config_.tier, config_.id, endpoint);
  }
}

std::string HubServer::bind() {
  socket_.bind(config_.listen);
  return socket_.get(zmq::sockopt::last_endpoint);
}

void HubServer::run(const std::atomic<bool>& stop, std::atomic<bool>* reload_requested) {
  spdlog::info("hub {} (tier {}, epoch {}) serving; lease {} ms; security {}", config_.id,
               config_.tier, core_.epoch(), core_.config().lease.count(), gate_.mode());
  std::vector<zmq::pollitem_t> items;
  items.push_back({socket_.handle(), 0, ZMQ_POLLIN, 0});
  for (auto& up : upstreams_)
    items.push_back({up.handle(), 0, ZMQ_POLLIN, 0});
  items.push_back(connections_.poll_item());
  const std::size_t mailbox_item = items.size();
  items.push_back(mailbox_.poll_item());
  const std::size_t writer_item = items.size();
  items.push_back(writer_.poll_item());
  while (!stop.load(std::memory_order_relaxed)) {
    if (reload_requested != nullptr && reload_requested->exchange(false)) reload_all();
    upstream_links_.set_poll_events(items.data() + 1);  // items[0] is the ROUTER
    poll_ignoring_signals(items.data(), items.size(), poll_timeout());
    // Busy time in microseconds, from the steady clock itself: most passes
    // of a hub that keeps up take less than the Clock's millisecond.
    const auto woke = std::chrono::steady_clock::now();
    // Accepts and closes first: a connection's messages follow its accept.
    connections_.drain_events(clock_.now());
    for (std::size_t i = 1; i <= upstreams_.size(); ++i)
      if (items[i].revents & ZMQ_POLLIN) receive_from_upstream(i - 1);
    if (items[mailbox_item].revents & ZMQ_POLLIN) mailbox_.run_pending();
    if (items[writer_item].revents & ZMQ_POLLIN)
      if (auto outcome = writer_.take_outcome()) finish_commit(std::move(*outcome));
    for (const auto index : upstream_links_.links_back(upstreams_))
      core_.on_upstream_link_up(clock_.now(), index);
    const bool backlog = serve_pending_frames((items[0].revents & ZMQ_POLLIN) != 0);
    // With frames still queued, a renewal may be waiting behind them: expire
    // nothing until the queue is drained, for a bounded number of passes.
    if (!backlog || clock_.now() - last_tick_ >= kMaxTickDeferral) {
      last_tick_ = clock_.now();
      core_.tick(last_tick_);
      connections_.tick(last_tick_);
    }
    run_probes();
    route_core_output();
    if (commit_due(backlog)) flush();
    core_.on_serving_pass(clock_.now(),
                          std::chrono::duration_cast<std::chrono::microseconds>(
                              std::chrono::steady_clock::now() - woke),
                          backlog);
  }
  commit_remaining();
  spdlog::info("hub {} stopped", config_.id);
}

std::chrono::milliseconds HubServer::poll_timeout() const {
  if (!inbound_.empty()) return std::chrono::milliseconds{0};
  const auto now = clock_.now();
  auto wake = now + kMaxPollWait;
  // While the writer commits, its poll item wakes the loop when it is done.
  if (!writer_.busy()) wake = std::min(wake, last_flush_ + config_.flush_interval);
  if (auto lease = core_.next_deadline()) wake = std::min(wake, *lease);
  return std::max(Duration{0}, wake - now);
}

bool HubServer::serve_pending_frames(bool readable) {
  if (readable) read_queued_frames();
  bool shed_any = false;
  for (FramePass pass(clock_); !inbound_.empty() && pass.another();) {
    auto next = inbound_.pop(clock_.now());
    if (next->shed && next->frames.size() >= 2 && next->frames.size() <= 3) {
      shed(*next);
      shed_any = true;
      continue;
    }
    if (!metrics_) {
      handle(next->frames);
      continue;
    }
    const auto timer = metrics_->frame_received(next->frames.back().size());
    handle(next->frames);
    metrics_->frame_handled(timer);
  }
  // Shedding is falling behind too, even when it emptied the queue.
  return shed_any || !inbound_.empty();
}

// Everything ZeroMQ holds for us, while the queue has room: what waits in
// ZeroMQ's queues cannot be told apart by age, what waits in ours can.
void HubServer::read_queued_frames() {
  const auto now = clock_.now();
  while (inbound_.has_room()) {
    Multipart frames;
    if (!zmq::recv_multipart(socket_, std::back_inserter(frames), zmq::recv_flags::dontwait))
      return;
    inbound_.push(now, std::move(frames));
  }
}

// A frame past the queue bound, answered busy without being decoded: its
// seq or request id read from its first bytes, so its sender knows which
// of its messages to send again later (protocol section 5.18). A batch's
// busy names no message: a proxy takes it for its oldest unanswered batch,
// so it must not overtake the replies that wait for a commit.
void HubServer::shed(InboundQueue::Next& next) {
  const auto ref = proto::peek_ref(next.frames.back().to_string_view());
  reply(next.frames, {core_.on_frame_shed(clock_.now(), ref, next.waited)}, false, behind_commit());
}

// frames = [routing id, (empty delimiter from a REQ peer,) payload]. The
// reply reuses the envelope, so DEALER and REQ peers both get their answer.
void HubServer::handle(Multipart& frames) {
  if (frames.size() < 2 || frames.size() > 3) {
    log_bad_input(
        proto::DecodeFailure{proto::ErrorCode::kMalformed, "unexpected number of frames", 0});
    core_.on_decode_failure({});
    return;
  }
  const auto now = clock_.now();
  const auto auth = gate_.authenticate(frames.back(), now);
  if (!auth.passed) {
    // Never reaches the core: whatever it says, its key no longer speaks here.
    reply(frames, {CurveGate::unauthenticated_reply()}, false, false);
    return;
  }
  const auto payload = frames.back().to_string_view();
  auto decoded = proto::decode_frame(payload, limits_);
  note_valid_input(decoded, frames, auth.principal);
  const auto source = source_of(frames, auth.address);
  std::vector<proto::Message> replies;
  replies.reserve(decoded.items.size());
  bool durable = false;
  for (const auto& item : decoded.items)
    if (const auto* message = std::get_if<proto::Message>(&item)) core_.prefetch(*message);
  for (auto& item : decoded.items) {
    if (auto* failure = std::get_if<proto::DecodeFailure>(&item)) {
      log_bad_input(*failure);
      replies.emplace_back(core_.on_decode_failure(*failure));
      continue;
    }
    const auto& message = std::get<proto::Message>(item);
    auto result = core_.handle(now, message, Peer{source, auth.principal, auth.address});
    // Only a beat the core accepted says where its node is now: a refused
    // one (another key's node) must not take that node's pushes.
    if (std::holds_alternative<proto::DownBeat>(result.reply)) learn_route(message, frames);
    if (result.reload_keys) reload_keys(result.reply);
    if (auto* status = std::get_if<proto::StatusReply>(&result.reply)) complete_status(*status);
    durable |= result.durable;
    if (result.no_reply) continue;
    if (result.deferred != 0) {
      // Answered by the upper tier, later, in a frame of its own (matched by
      // request id): the other replies of a batch do not wait for it.
      Multipart envelope;
      for (std::size_t i = 0; i < frames.size(); ++i)
        envelope.emplace_back().copy(frames[i]);
      deferred_envelopes_.emplace(result.deferred, std::move(envelope));
      continue;
    }
    replies.push_back(std::move(result.reply));
  }
  // An empty batch is answered by an empty batch (protocol section 3.12);
  // otherwise a frame whose messages all want no answer gets none.
  const bool empty_batch = decoded.batched && decoded.items.empty();
  if (replies.empty() && !empty_batch) return;
  reply(frames, std::move(replies), decoded.batched, durable);
}

void HubServer::reload_keys(proto::Message& reply) {
  const auto outcome = reload_all();
  core_.complete_keys_reload(outcome.ok, outcome.message);
  if (auto* admin = std::get_if<proto::AdminReply>(&reply)) {
    admin->ok = outcome.ok;
    admin->message = outcome.message;
  }
}

void HubServer::add_reload(std::function<ReloadOutcome()> reload) {
  reloads_.push_back(std::move(reload));
}

// A hub without keys has no key file to re-read: it says so only when there
// is nothing else to reload either (reload-keys is refused then).
HubServer::ReloadOutcome HubServer::reload_all() {
  std::vector<ReloadOutcome> outcomes;
  if (config_.security.has_keys() || reloads_.empty()) outcomes.push_back(gate_.reload());
  for (const auto& reload : reloads_)
    outcomes.push_back(reload());
  ReloadOutcome all{true, {}};
  for (const auto& outcome : outcomes) {
    all.ok = all.ok && outcome.ok;
    all.message += (all.message.empty() ? "" : "; ") + outcome.message;
  }
  return all;
}

HandleResult HubServer::handle_operator_command(const proto::AdminRequest& request,
                                                std::string_view peer_address) {
  // With keys the core checks the caller's role: the interface vouches for
  // this operator as the transport vouches for a key.
  std::optional<access::Principal> principal;
  if (config_.security.has_keys())
    principal = access::Principal{request.actor, access::Role::kOperator, {}, {}};
  auto result = core_.handle(clock_.now(), request,
                             Peer{"operator", principal ? &*principal : nullptr, peer_address});
  if (result.reload_keys) reload_keys(result.reply);
  return result;
}

void HubServer::after_commit(std::function<void(bool committed)> then) {
  gathering_.waiters.push_back(std::move(then));
}

bool HubServer::commit_due(bool backlog) const {
  if (writer_.busy()) return false;
  const auto since = clock_.now() - last_flush_;
  // Under a backlog: as soon as the writer is free and a flush interval
  // passed, so a batch holds what came in during the commit before it (group
  // commit: the batches grow when commits slow down). This was 250 ms while
  // the serving thread committed itself (commit 1358d04); since the writer
  // has its own thread and rows are appended by integer key, the long wait
  // only held acks back: registration at 1M went from ~80k to ~125k/s
  // (docs/benchmarks.md, "Registration with durable acks").
  if (backlog) return since >= config_.flush_interval;
  return !gathering_.replies.empty() || !gathering_.waiters.empty() ||
         since >= config_.flush_interval;
}

bool HubServer::behind_commit() const {
  return !gathering_.replies.empty() || !committing_.replies.empty();
}

proto::StatusReply HubServer::status() const {
  auto status = core_.status(clock_.now());
  complete_status(status);
  return status;
}

void HubServer::complete_status(proto::StatusReply& status) const {
  connections_.append_counters(status.counters);
  gate_.append_counters(status.counters);
  status.security = gate_.mode();
}

void HubServer::enable_metrics(metrics::Registry& registry,
                               std::chrono::milliseconds sample_timeout) {
  metrics_ = std::make_unique<ShellMetrics>(registry, "cascade_hub");
  store_metrics_ = std::make_unique<StoreMetrics>(registry);
  add_hub_info(registry, "cascade_hub",
               {{"hub_id", config_.id},
                {"tier", std::to_string(config_.tier)},
                {"zone", config_.zone},
                {"security", std::string(gate_.mode())}});
  auto sampled = std::make_unique<metrics::SampledFamilies>([this, sample_timeout] {
    return ask<metrics::SampledFamilies::Sample>(
        mailbox_, [this] { return metrics_sample(); }, sample_timeout);
  });
  add_hub_state_families(*sampled, config_.upstreams);
  registry.add(std::move(sampled));
}

metrics::SampledFamilies::Sample HubServer::metrics_sample() const {
  return sample_of(status());
}

void HubServer::note_valid_input(const proto::DecodedFrame& decoded, Multipart& frames,
                                 const access::Principal* key) {
  if (const auto kind = peer_kind(decoded, key))
    connections_.valid_message(frames.back(), clock_.now(), *kind);
}

void HubServer::reply(Multipart& frames, std::vector<proto::Message> replies, bool batched,
                      bool durable) {
  if (metrics_)
    for (const auto& message : replies)
      metrics_->reply(message);
  for (auto& out : addressed(frames, payloads_of(std::move(replies), batched))) {
    if (durable)
      gathering_.replies.push_back(std::move(out));
    else
      send_now(out);
  }
}

void HubServer::learn_route(const proto::Message& message, const Multipart& frames) {
  const auto* beat = std::get_if<proto::UpBeat>(&message);
  if (beat == nullptr || !HubCore::may_push_to(*beat)) return;  // no route worth keeping
  auto& route = node_routes_[beat->node_id];
  const auto hops = frames.size() - 1;  // all but the payload
  bool same = route.size() == hops;
  for (std::size_t i = 0; same && i < hops; ++i)
    same = route[i] == frames[i].to_string_view();
  if (same) return;
  route.clear();
  for (std::size_t i = 0; i < hops; ++i)
    route.emplace_back(frames[i].to_string_view());
}

void HubServer::send_to_node(const NodeMessage& out) {
  auto it = node_routes_.find(out.node_id);
  if (it == node_routes_.end()) return;  // never beat here reading: its beats will carry it
  Multipart envelope;
  for (const auto& hop : it->second)
    envelope.emplace_back(hop.data(), hop.size());
  envelope.emplace_back();  // the payload's place
  // Behind the replies that wait for a commit, the latest batch's first.
  CommitGroup* behind = !gathering_.replies.empty() ? &gathering_ : nullptr;
  if (behind == nullptr && (!committing_.replies.empty() || !committing_.pushes.empty()))
    behind = &committing_;
  for (auto& frames : addressed(envelope, payloads_of({out.message}, false))) {
    if (behind == nullptr)
      send_now(frames);
    else
      behind->pushes.push_back(std::move(frames));
  }
}

void HubServer::receive_from_upstream(std::size_t index) {
  Multipart frames;
  for (FramePass pass(clock_); pass.another();) {
    frames.clear();
    if (!zmq::recv_multipart(upstreams_[index], std::back_inserter(frames),
                             zmq::recv_flags::dontwait))
      break;
    auto decoded = proto::decode_frame(frames.back().to_string_view(), limits_);
    for (auto& item : decoded.items) {
      if (auto* failure = std::get_if<proto::DecodeFailure>(&item)) {
        log_bad_input(*failure);
        core_.on_decode_failure(*failure);
        continue;
      }
      core_.on_upstream_message(clock_.now(), index, std::get<proto::Message>(item));
    }
  }
  route_core_output();
}

// Results of the probes made since the last pass (an expiry they cause goes
// out with this pass's output), and the probes the core wants next.
void HubServer::run_probes() {
  for (const auto& result : probes_.take_results())
    core_.on_probe_result(clock_.now(), result);
  probes_.submit(core_.take_probes());
}

void HubServer::route_core_output() {
  for (auto& out : core_.take_upstream_messages()) {
    const auto bytes = proto::encode(out.message);
    // Not connected or over the high-water mark: dropped; the uplink retries.
    upstreams_.at(out.upstream).send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  }
  for (const auto& deferred : core_.take_deferred_replies())
    send_deferred(deferred);
  for (const auto& out : core_.take_node_messages())
    send_to_node(out);
}

void HubServer::send_deferred(const DeferredReply& deferred) {
  auto it = deferred_envelopes_.find(deferred.token);
  if (it == deferred_envelopes_.end()) return;
  auto envelope = std::move(it->second);
  deferred_envelopes_.erase(it);
  if (metrics_) metrics_->reply(deferred.reply);
  for (auto& frames : addressed(envelope, payloads_of({deferred.reply}, false)))
    send_now(frames);
}

void HubServer::send_now(Multipart& frames) {
  // A peer that vanished or is over its high-water mark loses the reply; it
  // will beat again. ROUTER never blocks here.
  const auto bytes = frames.back().size();  // sending empties the frames
  if (zmq::send_multipart(socket_, frames, zmq::send_flags::dontwait) && metrics_)
    metrics_->frame_sent(bytes);
}

void HubServer::flush() {
  last_flush_ = clock_.now();
  if (clock_.now() >= next_route_prune_) {
    next_route_prune_ = clock_.now() + kRoutePruneInterval;
    std::erase_if(node_routes_, [&](const auto& kv) { return !core_.knows_node(kv.first); });
  }
  // The commit's wall time: of the batch's audit records and config changes.
  auto batch = core_.take_persist_batch(clock_.wall_ms());
  if (batch.empty()) {
    release(gathering_, true);  // what it waited for is in batches committed before
    return;
  }
  committing_ = std::exchange(gathering_, {});
  writer_.submit(std::move(batch));
}

void HubServer::finish_commit(StoreWriter::Outcome outcome) {
  const bool committed = !outcome.error.has_value();
  if (committed) {
    if (store_metrics_)
      store_metrics_->committed(std::chrono::duration<double>(outcome.took).count(),
                                outcome.batch.rows());
  } else {
    if (store_metrics_) store_metrics_->commit_failed();
    core_.requeue(outcome.batch);  // nothing of it is on disk: dirty again for the next batch
    std::uint64_t suppressed = 0;
    if (store_error_log_.allow(clock_.now(), suppressed))
      spdlog::critical("could not persist registry changes: {} [{} more suppressed]",
                       *outcome.error, suppressed);
  }
  core_.reuse(std::move(outcome.batch));
  // Without the commit the acks it would release are dropped: agents that
  // get no ack resend (the set stays "unacknowledged" on their side). An
  // interface's operator is told (its HTTP answer says the change is not
  // yet durable).
  release(committing_, committed);
}

void HubServer::release(CommitGroup& group, bool committed) {
  auto done = std::exchange(group, {});
  if (committed)
    for (auto& frames : done.replies)
      send_now(frames);
  for (auto& frames : done.pushes)
    send_now(frames);
  for (auto& then : done.waiters)
    then(committed);
}

void HubServer::commit_remaining() {
  if (writer_.busy()) finish_commit(writer_.wait());
  flush();
  if (writer_.busy()) finish_commit(writer_.wait());
}

void HubServer::log_bad_input(const proto::DecodeFailure& failure) {
  if (metrics_) metrics_->decode_error(failure.code);
  std::uint64_t suppressed = 0;
  if (bad_input_log_.allow(clock_.now(), suppressed))
    spdlog::warn("rejected a message: {} ({}){}", failure.what, proto::to_string(failure.code),
                 suppressed ? fmt::format(" [{} more suppressed]", suppressed) : std::string());
}

}  // namespace cascade::hub
