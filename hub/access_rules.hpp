#pragma once
// What a key may make a hub do (docs/security.md): the role, scope and claim
// checks that need nothing but the message and the key. The checks that need
// registry state (whose node is this?) live with that state in HubCore.
//
// Sans-IO and stateless: the transport proved which key sent the message
// (CurveZMQ, the ZAP handler, the authorised-keys file); these functions only
// read the Principal it found. A hub without keys passes no Principal and
// every message is taken as it claims (plaintext on loopback, or --insecure).

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "cascade/common/access.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::hub {

// Why a message is refused: kUnauthenticated or kForbidden, and what for.
struct Refusal {
  proto::ErrorCode code = proto::ErrorCode::kForbidden;
  std::string message;
};

// Who a message acts as. For most keys, the key itself. A proxy's key vouches
// for the agents behind it: a message it forwards names the agent's key
// (on_behalf_of, set by the proxy after its own handshake with the agent) and
// acts as that agent, within the proxy's scopes.
struct Caller {
  const access::Principal* key = nullptr;  // nullptr: the hub runs without keys
  std::string_view name{};                 // binds nodes, signs reports and audit records
  access::Role role = access::Role::kAgent;

  bool open() const { return key == nullptr; }
  bool may_register(std::string_view service) const {
    return open() || key->register_scope.allows(service);
  }
  bool may_query(std::string_view service) const {
    return open() || key->query_scope.allows(service);
  }
  bool hub_with_query_scope() const {
    return !open() && role == access::Role::kHub && !key->query_scope.all();
  }
};

// The caller `message` acts as when it came with `key`, or why its claim to
// act for someone else is refused. The Caller views `key` and `message` (its
// name is in one of them): use it while both live.
std::variant<Caller, Refusal> caller_of(const access::Principal* key,
                                        const proto::Message& message);

// Role, scope and claim checks: nullopt when `caller` may send `message` to a
// hub of tier `own_tier`. Node ownership is checked by the core.
std::optional<Refusal> check_message(const Caller& caller, const proto::Message& message,
                                     std::uint32_t own_tier);

}  // namespace cascade::hub
