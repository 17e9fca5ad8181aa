#pragma once
// The test's own line to a running hub: a ZeroMQ DEALER that speaks the wire
// protocol (common/codec.hpp) directly. Used where a test polls the hub often
// (lease timing) or must send bytes no well-behaved client would.
// Thread-safety: none.

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>
#include <zmq.hpp>

#include "cascade/common/curve_keys.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::integration {

class HubProbe {
 public:
  explicit HubProbe(std::string endpoint);
  // Speaks CurveZMQ as `own` to a hub whose public key is `hub_public_z85`:
  // any client that holds a key, well-behaved or hostile.
  HubProbe(std::string endpoint, const curve::KeyPair& own, const std::string& hub_public_z85);
  HubProbe(const HubProbe&) = delete;
  HubProbe& operator=(const HubProbe&) = delete;

  const std::string& endpoint() const { return endpoint_; }

  // Sends `request` (which carries a request id) and waits for the reply with
  // that id, or an ErrorReply naming it; replies to earlier requests that
  // timed out are skipped. nullopt when nothing matching came in time.
  std::optional<proto::Message> request(const proto::Message& request,
                                        std::chrono::milliseconds timeout);
  std::optional<proto::StatusReply> status(std::chrono::milliseconds timeout);
  std::optional<proto::QueryReply> query(const std::string& service,
                                         std::chrono::milliseconds timeout);
  // Sends `message` as it is and returns the first message that comes back:
  // for those without a request id (UpBeat, Deregister), whose answer is a
  // DownBeat, a DeregisterAck or an ErrorReply naming their seq.
  std::optional<proto::Message> exchange(const proto::Message& message,
                                         std::chrono::milliseconds timeout);

  // Raw access: one message of these frames, and the next frame that comes back.
  void send_frames(const std::vector<std::string>& frames);
  std::optional<std::string> receive_frame(std::chrono::milliseconds timeout);

 private:
  std::string endpoint_;
  zmq::context_t context_;
  zmq::socket_t socket_;
  std::uint64_t next_request_id_ = 1;
};

// The value of a hub counter by name; nullopt when the hub does not report it.
std::optional<std::uint64_t> counter(const proto::StatusReply& status, const std::string& name);

// True when `reply` lists an instance with this address.
bool has_address(const proto::QueryReply& reply, const std::string& address);

}  // namespace cascade::integration
