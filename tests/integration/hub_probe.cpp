#include "cascade/tests/integration/hub_probe.hpp"

#include <algorithm>
#include <zmq_addon.hpp>

#include "cascade/common/codec.hpp"
#include "cascade/tools/ctl/hub_client.hpp"  // request_id_of: the same matching as cascadectl

namespace cascade::integration {

namespace {

using SteadyClock = std::chrono::steady_clock;

proto::Message with_request_id(proto::Message message, std::uint64_t id) {
  std::visit(
      [id](auto& m) {
        if constexpr (requires { m.request_id; }) m.request_id = id;
      },
      message);
  return message;
}

}  // namespace

HubProbe::HubProbe(std::string endpoint)
    : endpoint_(std::move(endpoint)), context_(1), socket_(context_, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, 0);
  socket_.connect(endpoint_);
}

HubProbe::HubProbe(std::string endpoint, const curve::KeyPair& own,
                   const std::string& hub_public_z85)
    : endpoint_(std::move(endpoint)), context_(1), socket_(context_, zmq::socket_type::dealer) {
  socket_.set(zmq::sockopt::linger, 0);
  curve::make_curve_client(socket_, own, hub_public_z85);
  socket_.connect(endpoint_);
}

std::optional<proto::Message> HubProbe::request(const proto::Message& request,
                                                std::chrono::milliseconds timeout) {
  const std::uint64_t id = next_request_id_++;
  send_frames({proto::encode(with_request_id(request, id))});
  const auto deadline = SteadyClock::now() + timeout;
  for (;;) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    auto frame = receive_frame(std::max(left, std::chrono::milliseconds{0}));
    if (!frame) return std::nullopt;
    auto decoded = proto::decode_frame(*frame);
    if (decoded.batched || decoded.items.size() != 1) continue;
    auto* message = std::get_if<proto::Message>(&decoded.items.front());
    if (message != nullptr && ctl::request_id_of(*message) == id) return std::move(*message);
  }
}

std::optional<proto::StatusReply> HubProbe::status(std::chrono::milliseconds timeout) {
  auto reply = request(proto::StatusRequest{}, timeout);
  if (!reply) return std::nullopt;
  if (auto* s = std::get_if<proto::StatusReply>(&*reply)) return std::move(*s);
  return std::nullopt;
}

std::optional<proto::QueryReply> HubProbe::query(const std::string& service,
                                                 std::chrono::milliseconds timeout) {
  proto::Query q;
  q.node_id = "integration-probe";
  q.service.name = service;
  auto reply = request(q, timeout);
  if (!reply) return std::nullopt;
  if (auto* r = std::get_if<proto::QueryReply>(&*reply)) return std::move(*r);
  return std::nullopt;
}

std::optional<proto::Message> HubProbe::exchange(const proto::Message& message,
                                                 std::chrono::milliseconds timeout) {
  send_frames({proto::encode(message)});
  auto frame = receive_frame(timeout);
  if (!frame) return std::nullopt;
  auto decoded = proto::decode_frame(*frame);
  if (decoded.batched || decoded.items.size() != 1) return std::nullopt;
  auto* reply = std::get_if<proto::Message>(&decoded.items.front());
  if (reply == nullptr) return std::nullopt;
  return std::move(*reply);
}

void HubProbe::send_frames(const std::vector<std::string>& frames) {
  std::vector<zmq::const_buffer> parts;
  for (const auto& f : frames)
    parts.push_back(zmq::buffer(f));
  (void)zmq::send_multipart(socket_, parts, zmq::send_flags::dontwait);
}

std::optional<std::string> HubProbe::receive_frame(std::chrono::milliseconds timeout) {
  zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, timeout) <= 0) return std::nullopt;
  zmq::message_t frame;
  if (!socket_.recv(frame, zmq::recv_flags::dontwait)) return std::nullopt;
  return frame.to_string();
}

std::optional<std::uint64_t> counter(const proto::StatusReply& status, const std::string& name) {
  for (const auto& [key, value] : status.counters)
    if (key == name) return value;
  return std::nullopt;
}

bool has_address(const proto::QueryReply& reply, const std::string& address) {
  return std::any_of(reply.instances.begin(), reply.instances.end(),
                     [&](const proto::Instance& in) { return in.address == address; });
}

}  // namespace cascade::integration
