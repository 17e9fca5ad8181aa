#pragma once
// Test doubles for cascadectl: a hub that answers with canned frames, and a
// TCP port that is reserved but refuses connections.

#include <atomic>
#include <cerrno>
#include <functional>
#include <iterator>
#include <mutex>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "common/codec.hpp"
#include "common/protocol.hpp"
#include "tests/common/refusing_port.hpp"

namespace cascade::ctl::testing {

// One outgoing ZeroMQ message: its frames (the routing id is added by the hub).
using Frames = std::vector<std::string>;

inline Frames frame_of(const proto::Message& m) {
  return Frames{proto::encode(m)};
}

// A ROUTER bound to tcp://127.0.0.1:* on its own thread. For every request frame
// it decodes the first message and sends back whatever `handler` returns (zero or
// more messages, in order). Undecodable requests get no answer.
class FakeHub {
 public:
  using Handler = std::function<std::vector<Frames>(const proto::Message& request)>;

  explicit FakeHub(Handler handler)
      : socket_(context_, zmq::socket_type::router), handler_(std::move(handler)) {
    socket_.set(zmq::sockopt::linger, 0);
    socket_.bind("tcp://127.0.0.1:*");
    endpoint_ = socket_.get(zmq::sockopt::last_endpoint);
    thread_ = std::thread([this] { serve(); });
  }

  FakeHub(const FakeHub&) = delete;
  FakeHub& operator=(const FakeHub&) = delete;

  ~FakeHub() {
    context_.shutdown();  // the blocking recv in serve() ends with ETERM
    thread_.join();
  }

  const std::string& endpoint() const { return endpoint_; }

  std::vector<proto::Message> requests() const {
    std::lock_guard lock(mutex_);
    return requests_;
  }

 private:
  void serve() {
    try {
      for (;;) {
        std::vector<zmq::message_t> parts;
        if (!zmq::recv_multipart(socket_, std::back_inserter(parts))) continue;
        if (parts.size() != 2) continue;  // [routing id, request]
        const auto decoded = proto::decode_frame(parts[1].to_string_view());
        if (decoded.items.empty()) continue;
        const auto* request = std::get_if<proto::Message>(&decoded.items.front());
        if (request == nullptr) continue;
        {
          std::lock_guard lock(mutex_);
          requests_.push_back(*request);
        }
        const std::string routing_id(parts[0].to_string_view());
        for (const Frames& reply : handler_(*request)) {
          std::vector<zmq::const_buffer> out{zmq::buffer(routing_id)};
          for (const auto& frame : reply)
            out.push_back(zmq::buffer(frame));
          (void)zmq::send_multipart(socket_, out);
        }
      }
    } catch (const zmq::error_t& e) {
      if (e.num() != ETERM) throw;
    }
    socket_.close();
  }

  zmq::context_t context_;
  zmq::socket_t socket_;
  Handler handler_;
  std::string endpoint_;
  mutable std::mutex mutex_;
  std::vector<proto::Message> requests_;
  std::thread thread_;
};

// A port that refuses connections, as for a hub that is not running.
using test_support::RefusingPort;

// Canned hub content shared by the client and binary tests.
inline proto::StatusReply canned_status(std::uint64_t request_id) {
  proto::StatusReply r;
  r.request_id = request_id;
  r.hub_id = "hub-a";
  r.tier = 1;
  r.hub_epoch = 42;
  r.uptime_ms = 3'723'000;
  r.nodes = 3;
  r.services = 2;
  r.instances = 5;
  r.counters = {{"beats_received", 1234}, {"queries", 7}};
  return r;
}

inline proto::ServicesReply canned_services(std::uint64_t request_id) {
  proto::ServicesReply r;
  r.request_id = request_id;
  r.services = {{{"orders", "default"}, 7, 2, 2}, {{"payments", "blue"}, 12, 3, 1}};
  return r;
}

// "orders" in group "default" has two instances; every other service is unknown.
inline proto::QueryReply canned_query(const proto::Query& q) {
  proto::QueryReply r;
  r.request_id = q.request_id;
  r.hub_id = "hub-a";
  r.hub_epoch = 42;
  r.service = q.service;
  r.tier = 1;
  if (q.service == proto::ServiceKey{"orders", "default"}) {
    r.found = true;
    r.version = 7;
    proto::Instance a;
    a.id = "orders-1";
    a.address = "10.0.0.1:8080";
    a.zone = "eu-1a";
    a.metadata = {{"build", "abc123"}};
    proto::Instance b;
    b.id = "orders-2";
    b.address = "10.0.0.2:8080";
    b.weight = 50;
    b.zone = "eu-1b";
    b.status = proto::InstanceStatus::kDown;
    r.instances = {a, b};
  }
  return r;
}

// Answers Status, Services and Query like a healthy hub; "forbidden" queries
// get an ErrorReply (code invalid).
inline std::vector<Frames> healthy_hub(const proto::Message& request) {
  if (const auto* s = std::get_if<proto::StatusRequest>(&request)) {
    return {frame_of(canned_status(s->request_id))};
  }
  if (const auto* s = std::get_if<proto::ServicesRequest>(&request)) {
    return {frame_of(canned_services(s->request_id))};
  }
  if (const auto* q = std::get_if<proto::Query>(&request)) {
    if (q->service.name == "forbidden") {
      return {frame_of(proto::ErrorReply{proto::ErrorCode::kInvalid, "service name not allowed",
                                         q->request_id})};
    }
    return {frame_of(canned_query(*q))};
  }
  return {};
}

}  // namespace cascade::ctl::testing
