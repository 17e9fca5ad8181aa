#pragma once
// Test doubles for cascadectl: a hub that answers with canned frames, and a
// TCP port that is reserved but refuses connections.

#include <atomic>
#include <cerrno>
#include <functional>
#include <iterator>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>
#include <vector>
#include <zmq.hpp>
#include <zmq_addon.hpp>

#include "cascade/common/codec.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/tests/common/refusing_port.hpp"

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

  // The one request the hub received, if there was exactly one and it is a T.
  template <typename T>
  std::optional<T> sole_request() const {
    const auto all = requests();
    if (all.size() != 1 || !std::holds_alternative<T>(all.front())) return std::nullopt;
    return std::get<T>(all.front());
  }

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
  r.isolated = 1;
  r.unconfirmed = 2;
  r.eviction_protection = true;
  r.notify_share_percent = 10;
  return r;
}

inline proto::ServicesReply canned_services(std::uint64_t request_id) {
  proto::ServicesReply r;
  r.request_id = request_id;
  r.services = {{{"orders", "default"}, 7, 2, 2}, {{"payments", "blue"}, 12, 3, 1}};
  return r;
}

inline constexpr const char* kIsolatedReason = "isolated: 5 reports from 2 callers";
inline constexpr const char* kUnconfirmedReason = "lease ran out 12 s ago; eviction protection";

// "orders" in group "default" has two healthy instances; "payments" in group
// "default" has one of each health (ok, isolated, unconfirmed); every other
// service is unknown.
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
  if (q.service == proto::ServiceKey{"payments", "default"}) {
    r.found = true;
    r.version = 12;
    proto::Instance ok;
    ok.id = "pay-1";
    ok.address = "10.0.1.1:9090";
    proto::Instance isolated;
    isolated.id = "pay-2";
    isolated.address = "10.0.1.2:9090";
    isolated.health = proto::Health::kIsolated;
    isolated.health_reason = kIsolatedReason;
    proto::Instance unconfirmed;
    unconfirmed.id = "pay-3";
    unconfirmed.address = "10.0.1.3:9090";
    unconfirmed.health = proto::Health::kUnconfirmed;
    unconfirmed.health_reason = kUnconfirmedReason;
    r.instances = {ok, isolated, unconfirmed};
  }
  return r;
}

// The fake hub's answer to a failure report: a signal for an address of
// "orders" is counted (and isolates the instance from 5 failures on); an
// address of "remote" is forwarded; everything else is unknown.
inline proto::ReportAck canned_ack(const proto::FailureReport& report) {
  proto::ReportAck ack;
  ack.request_id = report.request_id;
  for (const auto& signal : report.signals) {
    if (signal.service.name == "orders" &&
        (signal.address == "10.0.0.1:8080" || signal.address == "10.0.0.2:8080")) {
      ++ack.accepted;
      if (signal.count >= 5) ++ack.isolated;
    } else if (signal.service.name == "remote") {
      ++ack.forwarded;
    } else {
      ++ack.unknown;
    }
  }
  return ack;
}

// The fake hub's answer to an operator command: refused for instance "ghost",
// else done, with a message naming the operation, its target and the actor.
inline proto::AdminReply canned_admin(const proto::AdminRequest& request) {
  proto::AdminReply reply;
  reply.request_id = request.request_id;
  if (request.instance_id == "ghost") {
    reply.ok = false;
    reply.message = "no instance ghost in " + request.service.name;
    return reply;
  }
  reply.ok = true;
  reply.message = std::string(proto::to_string(request.op)) + " " + request.service.name + "/" +
                  request.instance_id + " by " + request.actor;
  return reply;
}

// Answers Status, Services, Query, FailureReport (when it asks for an ack)
// and AdminRequest like a healthy hub; "forbidden" queries and reports get an
// ErrorReply (code invalid).
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
  if (const auto* r = std::get_if<proto::FailureReport>(&request)) {
    if (r->request_id == 0) return {};  // fire and forget
    if (!r->signals.empty() && r->signals.front().service.name == "forbidden") {
      return {frame_of(
          proto::ErrorReply{proto::ErrorCode::kInvalid, "reports not allowed", r->request_id})};
    }
    return {frame_of(canned_ack(*r))};
  }
  if (const auto* a = std::get_if<proto::AdminRequest>(&request)) {
    return {frame_of(canned_admin(*a))};
  }
  return {};
}

}  // namespace cascade::ctl::testing
