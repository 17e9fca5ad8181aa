#include "cascade/tools/ctl/hub_client.hpp"

#include <chrono>
#include <type_traits>

#include "cascade/common/codec.hpp"
#include "cascade/common/message_parts.hpp"

namespace cascade::ctl {
namespace {

// The wait itself is real I/O, so the deadline reads the real steady clock
// (this adapter is one of the places allowed to).
using SteadyClock = std::chrono::steady_clock;

Duration remaining(SteadyClock::time_point deadline) {
  const auto left = std::chrono::duration_cast<Duration>(deadline - SteadyClock::now());
  return left.count() > 0 ? left : Duration{0};
}

}  // namespace

std::optional<std::uint64_t> request_id_of(const proto::Message& m) {
  return std::visit(
      [](const auto& msg) -> std::optional<std::uint64_t> {
        using T = std::decay_t<decltype(msg)>;
        if constexpr (std::is_same_v<T, proto::ErrorReply>) {
          return msg.ref;
        } else if constexpr (requires { msg.request_id; }) {
          return msg.request_id;
        } else {
          return std::nullopt;
        }
      },
      m);
}

// The reply once every part of it came (a QueryReply or ConfigReply larger
// than a frame comes in parts, protocol 5.13); nullopt while parts are missing.
std::optional<proto::Message> assemble(proto::PartAssembler& parts, const proto::Message& reply) {
  if (const auto* query = std::get_if<proto::QueryReply>(&reply)) {
    const auto* whole = parts.add(*query);
    return whole ? std::optional<proto::Message>(*whole) : std::nullopt;
  }
  if (const auto* config = std::get_if<proto::ConfigReply>(&reply)) {
    const auto* whole = parts.add(*config);
    return whole ? std::optional<proto::Message>(*whole) : std::nullopt;
  }
  return reply;
}

bool is_reply_to(const proto::Message& reply, std::uint64_t request_id) {
  switch (proto::type_of(reply)) {
    case proto::MsgType::kStatusReply:
    case proto::MsgType::kServicesReply:
    case proto::MsgType::kQueryReply:
    case proto::MsgType::kReportAck:
    case proto::MsgType::kAdminReply:
    case proto::MsgType::kConfigReply:
      return request_id_of(reply) == request_id;
    case proto::MsgType::kError: {
      const auto ref = request_id_of(reply);
      return ref == request_id || ref == std::uint64_t{0};
    }
    default:
      return false;
  }
}

HubClient::HubClient(zmq::context_t& context, const std::string& endpoint,
                     const std::optional<CurveCredentials>& curve)
    : socket_(context, zmq::socket_type::dealer), endpoint_(endpoint) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.set(zmq::sockopt::immediate, 1);
  if (curve) {
    curve::make_curve_client(socket_, curve->own, curve->hub_public_z85);
    monitor_ = std::make_unique<HandshakeMonitor>(context, socket_);
  }
  socket_.connect(endpoint_);
}

bool HubClient::wait_for(short events, SteadyClock::time_point deadline) {
  zmq::pollitem_t items[2] = {{socket_.handle(), 0, events, 0}, {}};
  if (monitor_) items[1] = monitor_->poll_item();
  const int count = monitor_ ? 2 : 1;
  for (;;) {
    const Duration left = remaining(deadline);
    if (zmq::poll(items, count, left) > 0) {
      if ((items[0].revents & events) != 0) return true;
      if (monitor_ && monitor_->take_refusals() > 0) {
        key_refused_ = true;
        failure_ = "the hub at " + endpoint_ + " does not know this key (" +
                   "is its public key in the hub's authorised keys?)";
        return false;
      }
    }
    if (left.count() == 0) return false;
  }
}

std::optional<proto::Message> HubClient::request(const proto::Message& request, Duration timeout) {
  const auto deadline = SteadyClock::now() + timeout;
  const std::uint64_t id = request_id_of(request).value_or(0);
  const std::string within = " within " + std::to_string(timeout.count()) + " ms";
  failure_.clear();
  key_refused_ = false;

  if (!wait_for(ZMQ_POLLOUT, deadline)) {
    if (!key_refused_) failure_ = "no connection to the hub at " + endpoint_ + within;
    return std::nullopt;
  }
  const proto::Bytes frame = proto::encode(request);
  if (!socket_.send(zmq::buffer(frame), zmq::send_flags::dontwait)) {
    failure_ = "could not send to the hub at " + endpoint_;
    return std::nullopt;
  }

  std::uint64_t skipped = 0;
  proto::PartAssembler parts;  // a list larger than a frame comes in parts (protocol 5.13)
  while (wait_for(ZMQ_POLLIN, deadline)) {
    zmq::message_t part;
    if (!socket_.recv(part, zmq::recv_flags::dontwait)) continue;
    if (part.more()) {
      // Not the one-frame shape: drop the whole multi-part message.
      while (part.more() && socket_.recv(part, zmq::recv_flags::dontwait)) {
      }
      ++skipped;
      continue;
    }
    const proto::DecodedFrame decoded = proto::decode_frame(part.to_string_view());
    bool used = false;
    for (const auto& item : decoded.items) {
      const auto* message = std::get_if<proto::Message>(&item);
      if (message == nullptr || !is_reply_to(*message, id)) continue;
      used = true;
      auto whole = assemble(parts, *message);
      if (!whole) continue;  // more parts to come
      discarded_ += skipped;
      return whole;
    }
    if (!used) ++skipped;
  }
  discarded_ += skipped;
  if (key_refused_) return std::nullopt;
  failure_ = "no reply from the hub at " + endpoint_ + within;
  if (skipped > 0) {
    failure_ +=
        " (skipped " + std::to_string(skipped) + " unusable frame" + (skipped == 1 ? ")" : "s)");
  }
  return std::nullopt;
}

}  // namespace cascade::ctl
