#pragma once
// Who may do what: the principals the transport authenticates, and the
// service-name scopes that bound them (docs/security.md).
//
// A principal is one line of a hub's authorised-keys file: a name, a role and
// two scopes. The transport (CurveZMQ and the ZAP handler, adapters around
// the cores) proves which key a message came with; the cores decide from the
// principal alone, so every rule is tested without a socket or a key.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cascade::access {

enum class Role : std::uint8_t {
  kAgent,     // registers its own instances, uses services, reports failures
  kHub,       // a hub of a lower tier beating upstream with its tier's aggregate
  kProxy,     // forwards its agents' messages and vouches for their names
  kOperator,  // operator commands (cascadectl), and everything a reader may do
  kReader,    // status, service lists and resolves; changes nothing
};

std::string_view to_string(Role role);
std::optional<Role> parse_role(std::string_view text);

// Whether `text` matches a glob `pattern`: `*` any run of characters (also
// none), `?` exactly one, anything else itself. No allocation, no recursion
// deeper than one level: linear in practice for registry names.
bool glob_match(std::string_view pattern, std::string_view text);

// Which service names a key may register or query: globs, any of which must
// match. No globs at all: every service.
class ServiceScope {
 public:
  ServiceScope() = default;
  explicit ServiceScope(std::vector<std::string> globs) : globs_(std::move(globs)) {}

  bool allows(std::string_view service) const {
    if (globs_.empty()) return true;
    for (const auto& glob : globs_)
      if (glob_match(glob, service)) return true;
    return false;
  }
  bool all() const { return globs_.empty(); }
  const std::vector<std::string>& globs() const { return globs_; }
  bool operator==(const ServiceScope&) const = default;

 private:
  std::vector<std::string> globs_;
};

struct Principal {
  std::string name;  // the key's name: what node bindings, reports and audit records name
  Role role = Role::kAgent;
  ServiceScope register_scope;  // seed 004's whitelist: what this key may register
  ServiceScope query_scope;     // seed 000's authorised access: what it may resolve or use
  bool operator==(const Principal&) const = default;
};

}  // namespace cascade::access
