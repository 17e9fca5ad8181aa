#include "cascade/common/handshake_monitor.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cstring>

namespace cascade {

namespace {

// Unique per monitor in the process: several sockets may be watched at once.
std::string monitor_endpoint() {
  static std::atomic<std::uint64_t> next{0};
  return fmt::format("inproc://cascade-handshake-monitor-{}", next.fetch_add(1));
}

}  // namespace

HandshakeMonitor::HandshakeMonitor(zmq::context_t& context, zmq::socket_t& socket)
    : socket_(socket), monitor_(context, zmq::socket_type::pair) {
  const auto endpoint = monitor_endpoint();
  if (zmq_socket_monitor(socket_.handle(), endpoint.c_str(), ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) != 0)
    throw zmq::error_t();
  monitor_.set(zmq::sockopt::linger, 0);
  monitor_.connect(endpoint);
}

HandshakeMonitor::~HandshakeMonitor() {
  zmq_socket_monitor(socket_.handle(), nullptr, 0);  // stops the events
}

std::uint64_t HandshakeMonitor::take_refusals() {
  std::uint64_t refused = 0;
  // An event is two frames: 16-bit event number and 32-bit value, then the
  // endpoint.
  zmq::message_t event;
  while (monitor_.recv(event, zmq::recv_flags::dontwait)) {
    std::uint16_t number = 0;
    if (event.size() >= sizeof(number)) std::memcpy(&number, event.data(), sizeof(number));
    while (event.more() && monitor_.recv(event, zmq::recv_flags::dontwait)) {
    }
    if (number == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH) ++refused;
  }
  refusals_ += refused;
  return refused;
}

}  // namespace cascade
