#pragma once
// The transport security of a hub or proxy (docs/security.md): its
// ROUTER as a CurveZMQ server whose clients the ZAP handler checks against the
// authorised keys, its upstream DEALERs as CurveZMQ clients, and for each
// message received the principal of the key it came with, for the core.
//
// Without keys (plaintext on loopback, or --insecure) every message passes
// with no principal. With keys, a message whose key is no longer authorised
// (removed by a reload since its connection's handshake) does not pass: the
// server answers it with unauthenticated_reply() and it never reaches the
// core. Connections are never dropped by a reload.
//
// Threading: the serving thread only (the ZapHandler has its own thread).

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "cascade/common/access.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/curve_keys.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/authorized_keys.hpp"
#include "cascade/hub/zap_handler.hpp"

namespace cascade::hub {

// --secret-key, --authorized-keys, --upstream-public-key, --insecure.
struct SecurityConfig {
  std::filesystem::path secret_key;       // this hub's key pair (NAME.key); empty: no Curve
  std::filesystem::path authorized_keys;  // who may connect, as whom
  // The public keys of the hubs above: FILE (NAME.pub) for all of them, or
  // ENDPOINT=FILE for the one at ENDPOINT (each hub has its own key pair).
  std::vector<std::string> upstream_public_keys;
  bool insecure = false;  // plain text on a non-loopback endpoint, on purpose

  bool has_keys() const { return !secret_key.empty() || !authorized_keys.empty(); }
};

// "" when `config` is usable for a hub listening on `listen` with
// `upstreams`, else the usage error: a secret key without authorised keys or
// the reverse, an upstream key without a secret key, upstreams of a keyed hub
// without their key, or a non-loopback endpoint in plain text without
// --insecure (common/endpoint_security.hpp).
std::string check_security_config(const SecurityConfig& config, std::string_view listen,
                                  const std::vector<std::string>& upstreams);

// Who sent a message, as far as the transport can tell.
struct Authentication {
  bool passed = true;                            // false: answer unauthenticated_reply()
  const access::Principal* principal = nullptr;  // nullptr without keys
  std::string address;                           // the peer's IP address, "" when not TCP
};

class CurveGate {
 public:
  // Reads the key files and, with keys, binds the ZAP handler on `context`.
  // Throws curve::KeyError or std::runtime_error with a message for the
  // operator (which file, what is wrong).
  CurveGate(const SecurityConfig& config, zmq::context_t& context);

  bool secure() const { return zap_ != nullptr; }
  // "curve", "insecure" (--insecure without keys) or "loopback": StatusReply::security.
  std::string_view mode() const;

  // Makes `router` a CurveZMQ server (with keys). Call before bind().
  void serve_on(zmq::socket_t& router) const;
  // Makes `dealer` a CurveZMQ client of the upper-tier hub at `endpoint`
  // (with keys). Call before connect().
  void dial_upstream(zmq::socket_t& dealer, const std::string& endpoint) const;

  // The key and address a received message came with (any frame of it).
  // A refusal is counted and logged, rate-limited.
  Authentication authenticate(zmq::message_t& frame, MonoTime now);  // gets() is not const
  static proto::ErrorReply unauthenticated_reply();

  // Re-reads the authorised keys. A bad file keeps the keys in use. Logged
  // either way; `ok` and a message for the operator (AdminReply).
  struct ReloadOutcome {
    bool ok = false;
    std::string message;
  };
  ReloadOutcome reload();

  // zap_accepted, zap_refused, unauthenticated (StatusReply::counters).
  void append_counters(std::vector<std::pair<std::string, std::uint64_t>>& out) const;

 private:
  SecurityConfig config_;
  std::optional<curve::KeyPair> own_;
  curve::ServerKeys upstream_public_;
  std::shared_ptr<const AuthorizedKeys> keys_;  // the table this thread checks messages against
  std::unique_ptr<ZapHandler> zap_;             // with keys only
  std::uint64_t unauthenticated_ = 0;
  RateLimit refusal_log_{10, Duration{10'000}};
};

}  // namespace cascade::hub
