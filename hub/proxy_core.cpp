#include "cascade/hub/proxy_core.hpp"

#include <algorithm>
#include <cassert>
#include <limits>
#include <type_traits>

namespace cascade::hub {

namespace {
constexpr std::size_t kMaxKnownNodes = 1'000'000;
}  // namespace

std::string check_proxy_config(const ProxyCoreConfig& config) {
  if (config.max_batch < 1 || config.max_batch > proto::kMaxBatchMessages)
    return "max_batch must be between 1 and " + std::to_string(proto::kMaxBatchMessages) +
           " messages, got " + std::to_string(config.max_batch);
  if (config.max_delay < Duration{0} || config.max_delay > kMaxProxyDelay)
    return "max_delay must be between 0 and " + std::to_string(kMaxProxyDelay.count()) +
           " ms, got " + std::to_string(config.max_delay.count()) + " ms";
  if (config.reply_timeout <= config.max_delay)
    return "reply_timeout (" + std::to_string(config.reply_timeout.count()) +
           " ms) must be longer than max_delay (" + std::to_string(config.max_delay.count()) +
           " ms)";
  return {};
}

ProxyCore::ProxyCore(ProxyCoreConfig config) : config_(config) {
  assert(check_proxy_config(config_).empty());
  pending_.reserve(config_.max_batch);
}

std::variant<ProxyCore, std::string> ProxyCore::create(ProxyCoreConfig config) {
  if (auto error = check_proxy_config(config); !error.empty()) return error;
  return ProxyCore(config);
}

namespace {

// Stamps the name a message acts as on the fields the hub reads it from.
void stamp(proto::Message& message, std::string_view name) {
  std::visit(
      [&](auto& m) {
        if constexpr (requires { m.on_behalf_of; }) m.on_behalf_of = std::string(name);
      },
      message);
}

}  // namespace

std::optional<Refusal> ProxyCore::vouch(const access::Principal& key, proto::Message& msg) {
  auto who = caller_of(&key, msg);
  if (auto* refusal = std::get_if<Refusal>(&who)) return std::move(*refusal);
  const auto& caller = std::get<Caller>(who);
  // Tier claims are the hub's to judge: it knows its tier.
  constexpr auto kAnyTier = std::numeric_limits<std::uint32_t>::max();
  if (auto refusal = check_message(caller, msg, kAnyTier)) return refusal;
  stamp(msg, caller.name);
  return std::nullopt;
}

ProxyActions ProxyCore::accept(MonoTime now, PeerToken peer, proto::Message msg,
                               const access::Principal* key) {
  ProxyActions out;
  if (key != nullptr) {
    if (auto refusal = vouch(*key, msg)) {
      ++counters_.forbidden;
      out.downstream.push_back(
          {peer, proto::ErrorReply{refusal->code, proto::clip_message(std::move(refusal->message)),
                                   proto::ref_of(msg)}});
      return out;
    }
  }
  Pending p;
  p.id = next_id_++;
  p.route.peer = peer;
  if (auto* report = std::get_if<proto::FailureReport>(&msg)) {
    forward_report(peer, std::move(*report), out);
    return out;
  }
  if (auto* beat = std::get_if<proto::UpBeat>(&msg)) {
    p.route.kind = Kind::kUpBeat;
    p.route.node_id = beat->node_id;
    p.route.seq = beat->seq;
    if (node_peers_.size() >= kMaxKnownNodes) node_peers_.clear();
    node_peers_[beat->node_id] = peer;
  } else if (auto* dereg = std::get_if<proto::Deregister>(&msg)) {
    p.route.kind = Kind::kDeregister;
    p.route.node_id = dereg->node_id;
    p.route.seq = dereg->seq;
  } else if (auto* query = std::get_if<proto::Query>(&msg)) {
    p.route.kind = Kind::kQuery;
    p.route.request = std::exchange(query->request_id, p.id);
  } else if (auto* status = std::get_if<proto::StatusRequest>(&msg)) {
    p.route.kind = Kind::kStatus;
    p.route.request = std::exchange(status->request_id, p.id);
  } else if (auto* services = std::get_if<proto::ServicesRequest>(&msg)) {
    p.route.kind = Kind::kServices;
    p.route.request = std::exchange(services->request_id, p.id);
  } else {
    ++counters_.rejected;
    out.downstream.push_back({peer, proto::ErrorReply{proto::ErrorCode::kUnknownType,
                                                      std::string("a proxy does not forward ") +
                                                          proto::to_string(proto::type_of(msg)),
                                                      0}});
    return out;
  }
  p.message = std::move(msg);
  if (pending_.empty()) oldest_pending_ = now;
  pending_.push_back(std::move(p));
  ++counters_.forwarded;
  // A shell that fired its timer late must not hold the batch any longer.
  if (pending_.size() >= config_.max_batch || now >= oldest_pending_ + config_.max_delay)
    flush(now, out);
  return out;
}

ProxyActions ProxyCore::on_timer(MonoTime now) {
  ProxyActions out;
  if (!pending_.empty() && now >= oldest_pending_ + config_.max_delay) flush(now, out);
  expire(now);
  return out;
}

std::optional<MonoTime> ProxyCore::next_deadline() const {
  std::optional<MonoTime> deadline;
  if (!pending_.empty()) deadline = oldest_pending_ + config_.max_delay;
  if (!in_flight_.empty()) {
    const MonoTime expiry = in_flight_.begin()->second.sent_at + config_.reply_timeout;
    deadline = deadline ? std::min(*deadline, expiry) : expiry;
  }
  return deadline;
}

void ProxyCore::flush(MonoTime now, ProxyActions& out) {
  assert(pending_.size() <= config_.max_batch);
  if (pending_.empty()) return;
  SentBatch sent{now, {}};
  sent.ids.reserve(pending_.size());
  std::vector<proto::Message> batch;
  batch.reserve(pending_.size());
  for (Pending& p : pending_) {
    p.route.sent_at = now;
    if (p.route.kind == Kind::kUpBeat || p.route.kind == Kind::kDeregister)
      beats_[BeatKey{p.route.node_id, p.route.seq}] = p.id;  // the newest duplicate wins
    sent.ids.push_back(p.id);
    batch.push_back(std::move(p.message));
    in_flight_.emplace(p.id, std::move(p.route));
  }
  pending_.clear();
  sent_.push_back(std::move(sent));
  out.upstream_batches.push_back(std::move(batch));
  ++counters_.batches;
}

void ProxyCore::expire(MonoTime now) {
  while (!in_flight_.empty() && in_flight_.begin()->second.sent_at + config_.reply_timeout <= now) {
    forget(in_flight_.begin()->first);
    ++counters_.timed_out;
  }
  while (!sent_.empty() && sent_.front().sent_at + config_.reply_timeout <= now)
    sent_.pop_front();
}

// Failure reports are urgent and answer nothing: no batching, no route. A
// tool's request for an ack is answered here ("forwarded").
void ProxyCore::forward_report(PeerToken peer, proto::FailureReport report, ProxyActions& out) {
  ++counters_.reports;
  if (report.request_id != 0) {
    proto::ReportAck ack;
    ack.request_id = std::exchange(report.request_id, 0);
    ack.forwarded = static_cast<std::uint32_t>(report.signals.size());
    out.downstream.push_back({peer, ack});
  }
  out.upstream_now.push_back(std::move(report));
}

bool ProxyCore::route_push(const proto::Message& message, ProxyActions& out) {
  const auto* down = std::get_if<proto::DownBeat>(&message);
  if (down == nullptr || !down->push) return false;
  auto it = node_peers_.find(down->node_id);
  if (it == node_peers_.end()) {
    ++counters_.pushes_unroutable;
    return true;
  }
  out.downstream.push_back({it->second, message});
  ++counters_.pushes_routed;
  return true;
}

ProxyActions ProxyCore::on_upstream_reply(MonoTime /*now*/, std::vector<proto::Message> replies) {
  ProxyActions out;
  // A push travels in a frame of its own, never inside a batch's reply.
  if (replies.size() == 1 && route_push(replies.front(), out)) return out;
  if (!sent_.empty() && sent_.front().ids.size() == replies.size()) {
    // The expected case: the reply frame of the oldest batch, item by item.
    SentBatch batch = std::move(sent_.front());
    sent_.pop_front();
    for (std::size_t i = 0; i < replies.size(); ++i)
      if (!route_positional(batch.ids[i], replies[i], out) && !route_by_identity(replies[i], out))
        ++counters_.unmatched_replies;
  } else if (!sent_.empty() && sent_.front().ids.size() > 1 && replies.size() == 1 &&
             std::holds_alternative<proto::ErrorReply>(replies[0]) &&
             std::get<proto::ErrorReply>(replies[0]).ref == 0) {
    // The hub rejected the whole frame (too large, malformed) or shed it
    // (busy): everyone in the batch gets the error, naming its own message.
    SentBatch batch = std::move(sent_.front());
    sent_.pop_front();
    for (std::uint64_t id : batch.ids) {
      auto it = in_flight_.find(id);
      if (it == in_flight_.end()) continue;
      auto error = std::get<proto::ErrorReply>(replies[0]);
      const bool beat = it->second.kind == Kind::kUpBeat || it->second.kind == Kind::kDeregister;
      error.ref = beat ? it->second.seq : id;  // deliver() turns our id into the asker's
      deliver(id, std::move(error), out);
    }
  } else {
    for (proto::Message& reply : replies)
      if (!route_by_identity(reply, out)) ++counters_.unmatched_replies;
  }
  drop_answered_batches();
  return out;
}

bool ProxyCore::route_positional(std::uint64_t id, proto::Message& reply, ProxyActions& out) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end() || !answers(it->second, id, reply)) return false;
  deliver(id, std::move(reply), out);
  return true;
}

bool ProxyCore::route_by_identity(proto::Message& reply, ProxyActions& out) {
  auto id = identity_of(reply);
  if (!id) return false;
  deliver(*id, std::move(reply), out);
  return true;
}

std::optional<std::uint64_t> ProxyCore::identity_of(const proto::Message& reply) const {
  auto beat = [&](const std::string& node, std::uint64_t seq,
                  Kind kind) -> std::optional<std::uint64_t> {
    auto it = beats_.find(BeatKey{node, seq});
    if (it == beats_.end() || in_flight_.at(it->second).kind != kind) return std::nullopt;
    return it->second;
  };
  auto request = [&](std::uint64_t id, Kind kind) -> std::optional<std::uint64_t> {
    auto it = in_flight_.find(id);
    if (it == in_flight_.end() || it->second.kind != kind) return std::nullopt;
    return id;
  };
  if (auto* down = std::get_if<proto::DownBeat>(&reply))
    return beat(down->node_id, down->ack_seq, Kind::kUpBeat);
  if (auto* ack = std::get_if<proto::DeregisterAck>(&reply))
    return beat(ack->node_id, ack->seq, Kind::kDeregister);
  if (auto* q = std::get_if<proto::QueryReply>(&reply)) return request(q->request_id, Kind::kQuery);
  if (auto* s = std::get_if<proto::StatusReply>(&reply))
    return request(s->request_id, Kind::kStatus);
  if (auto* s = std::get_if<proto::ServicesReply>(&reply))
    return request(s->request_id, Kind::kServices);
  return std::nullopt;  // an ErrorReply's ref is ambiguous without its position
}

bool ProxyCore::answers(const Route& route, std::uint64_t id, const proto::Message& reply) const {
  if (auto* error = std::get_if<proto::ErrorReply>(&reply)) {
    // ref 0: the hub could not read the message's identity; its position says whose it is.
    const std::uint64_t expected =
        (route.kind == Kind::kUpBeat || route.kind == Kind::kDeregister) ? route.seq : id;
    return error->ref == expected || error->ref == 0;
  }
  switch (route.kind) {
    case Kind::kUpBeat: {
      auto* down = std::get_if<proto::DownBeat>(&reply);
      return down && down->node_id == route.node_id && down->ack_seq == route.seq;
    }
    case Kind::kDeregister: {
      auto* ack = std::get_if<proto::DeregisterAck>(&reply);
      return ack && ack->node_id == route.node_id && ack->seq == route.seq;
    }
    case Kind::kQuery: {
      auto* q = std::get_if<proto::QueryReply>(&reply);
      return q && q->request_id == id;
    }
    case Kind::kStatus: {
      auto* s = std::get_if<proto::StatusReply>(&reply);
      return s && s->request_id == id;
    }
    case Kind::kServices: {
      auto* s = std::get_if<proto::ServicesReply>(&reply);
      return s && s->request_id == id;
    }
  }
  return false;
}

void ProxyCore::deliver(std::uint64_t id, proto::Message reply, ProxyActions& out) {
  const Route& route = in_flight_.at(id);
  const bool is_request =
      route.kind == Kind::kQuery || route.kind == Kind::kStatus || route.kind == Kind::kServices;
  if (is_request) {
    std::visit(
        [&](auto& m) {
          using T = std::decay_t<decltype(m)>;
          if constexpr (std::is_same_v<T, proto::ErrorReply>) {
            if (m.ref == id) m.ref = route.request;
          } else if constexpr (requires { m.request_id; }) {
            m.request_id = route.request;
          }
        },
        reply);
  }
  // A reply in parts (protocol section 5.13) keeps its route until its last part.
  const auto* query = std::get_if<proto::QueryReply>(&reply);
  const bool more = query != nullptr && query->more;
  out.downstream.push_back({route.peer, std::move(reply)});
  ++counters_.replies_routed;
  if (!more) forget(id);
}

void ProxyCore::forget(std::uint64_t id) {
  auto it = in_flight_.find(id);
  if (it == in_flight_.end()) return;
  const Route& route = it->second;
  if (route.kind == Kind::kUpBeat || route.kind == Kind::kDeregister) {
    auto beat = beats_.find(BeatKey{route.node_id, route.seq});
    if (beat != beats_.end() && beat->second == id) beats_.erase(beat);
  }
  in_flight_.erase(it);
}

void ProxyCore::drop_answered_batches() {
  // Batches whose every message was answered (by identity, out of order)
  // would otherwise shadow the position of the next reply frame.
  while (!sent_.empty() && std::none_of(sent_.front().ids.begin(), sent_.front().ids.end(),
                                        [&](std::uint64_t id) { return in_flight_.contains(id); }))
    sent_.pop_front();
}

}  // namespace cascade::hub
