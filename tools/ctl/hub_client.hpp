#pragma once
// cascadectl's request/reply transport: one request frame to a hub, one reply
// frame back.
//
// Wire shape: a DEALER connects to the hub's ROUTER and sends ONE frame holding
// one encoded message (proto::encode, no empty delimiter frame). The hub answers
// with one frame. A reply belongs to the request when its request_id equals the
// request's (an ErrorReply matches on `ref`, or on ref == 0 which the hub uses
// when it could not read the id). Anything else that arrives (stale replies,
// undecodable or multi-part frames, batches without a matching item) is counted
// and skipped, and the wait goes on until the deadline.

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <zmq.hpp>

#include "cascade/common/clock.hpp"
#include "cascade/common/curve_keys.hpp"
#include "cascade/common/handshake_monitor.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::ctl {

// What the commands need from a hub. HubClient is the real one; tests use fakes.
class Requester {
 public:
  virtual ~Requester() = default;

  // Sends `request` and waits at most `timeout` for its reply.
  // @return the matching reply, or nullopt when none arrived in time (why: see
  //         failure()).
  virtual std::optional<proto::Message> request(const proto::Message& request,
                                                Duration timeout) = 0;

  // One line for the operator explaining the last nullopt from request().
  virtual std::string failure() const = 0;
  // True when that nullopt was the hub refusing this tool's key (CurveZMQ
  // handshake refused by its ZAP handler), not a silent hub.
  virtual bool key_refused() const { return false; }
};

// The tool's CurveZMQ identity towards one hub (--secret-key, --hub-public-key).
struct CurveCredentials {
  curve::KeyPair own;
  std::string hub_public_z85;
};

// The request id a request or reply carries: request_id for Status/Services/
// Query/FailureReport/Admin and their replies, `ref` for ErrorReply; nullopt
// for the beat messages.
std::optional<std::uint64_t> request_id_of(const proto::Message& m);

// True when `reply` answers a request with id `request_id` (see the file comment).
bool is_reply_to(const proto::Message& reply, std::uint64_t request_id);

// ZeroMQ DEALER client. Single-threaded: use from one thread only.
//
// Socket options and why:
//  - ZMQ_LINGER 0: a request nobody took must not keep the process alive at exit.
//  - ZMQ_IMMEDIATE 1: the request is queued only on a finished connection, so
//    when nothing answers the connect, send never becomes possible and the
//    failure can say "no connection" instead of "no reply"; it also keeps a
//    request from sitting in a pipe for a hub that is not there. Both cases
//    still end at the one deadline.
class HubClient final : public Requester {
 public:
  // Connects (asynchronously, as ZeroMQ does) to `endpoint`, e.g.
  // "tcp://hub.example:7400". `context` must outlive the client.
  // @throws zmq::error_t when the endpoint is malformed (EINVAL) or its
  //         transport is unsupported.
  // With `curve`, the connection is a CurveZMQ client's, and a hub refusing
  // the key ends a request at once (key_refused()).
  HubClient(zmq::context_t& context, const std::string& endpoint,
            const std::optional<CurveCredentials>& curve = std::nullopt);

  std::optional<proto::Message> request(const proto::Message& request, Duration timeout) override;
  std::string failure() const override { return failure_; }
  bool key_refused() const override { return key_refused_; }

  // Frames received and skipped since construction (not ours / not usable).
  std::uint64_t discarded() const { return discarded_; }

 private:
  // Waits until `events` are possible on the socket (true), or the deadline
  // passes or the hub refuses the key (false).
  bool wait_for(short events, std::chrono::steady_clock::time_point deadline);

  zmq::socket_t socket_;
  std::unique_ptr<HandshakeMonitor> monitor_;  // with Curve only; after socket_, which it watches
  std::string endpoint_;
  std::string failure_;
  bool key_refused_ = false;
  std::uint64_t discarded_ = 0;
};

}  // namespace cascade::ctl
