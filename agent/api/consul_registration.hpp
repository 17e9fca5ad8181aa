#pragma once
// A registration of Consul's agent API (PUT /v1/agent/service/register, the
// body of Consul's AgentServiceRegistration) read into a ConsulService, and
// the cascade registration a ConsulService becomes (docs/consul-compat.md).
//
// The mapping:
//   Name                  service name, in group "default"
//   ID                    instance id (default: Name)
//   Address:Port          instance address "host:port" (empty Address: the agent's host)
//   Meta                  instance metadata, as it is
//   Tags                  metadata "consul-tags", a JSON array
//   Weights.Passing       instance weight while its checks pass (default 100, cascade's)
//   Weights.Warning       instance weight while a check warns (default 100; 0 when
//                         Weights is given without it, as in Consul)
//   Check, Checks         TTL checks (agent/api/ttl_checks.hpp); a critical one makes
//                         the instance DOWN, and their worst status is in metadata
//                         "consul-check"
//   (the agent)           metadata "consul-node" (its node id), zone (its zone)
// Consul reserves Meta keys starting "consul-" for itself, so these keys never
// clash with an application's. Field names match as Consul's decoder matches
// them: any case, snake_case aliases. Fields Consul has but cascade does not
// use are accepted and ignored; checks cascade cannot run (HTTP, TCP, gRPC,
// script, ...) are refused, so an application never believes it is checked
// when it is not.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/agent/api/json_fields.hpp"
#include "cascade/agent/api/ttl_checks.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent::api {

// Instance metadata keys the Consul API keeps its own fields under.
inline constexpr std::string_view kConsulKeyPrefix = "consul-";
inline constexpr std::string_view kTagsKey = "consul-tags";
inline constexpr std::string_view kNodeKey = "consul-node";
inline constexpr std::string_view kCheckKey = "consul-check";
inline constexpr std::size_t kReservedMetadataEntries = 3;
// Cascade's default weight: Consul-registered instances share load evenly
// with natively registered ones unless Weights says otherwise.
inline constexpr std::uint32_t kDefaultConsulWeight = 100;

// This agent, as the registrations made through it carry it.
struct AgentIdentity {
  std::string node;  // the agent's node id: Consul's node name
  std::string zone;  // the agent's zone (--zone); "" none
  std::string host;  // the address of a service registered without one
};

struct ConsulService {
  std::string id;
  std::string name;
  std::string host;
  std::uint16_t port = 0;
  std::vector<std::string> tags;
  std::map<std::string, std::string> meta;
  std::uint32_t passing_weight = kDefaultConsulWeight;
  std::uint32_t warning_weight = kDefaultConsulWeight;
  std::vector<TtlCheckSpec> checks;
  bool operator==(const ConsulService&) const = default;
};

// The body of PUT /v1/agent/service/register, checked as a hub checks a
// registration; the error's message says what is wrong, for a 400.
std::variant<ConsulService, BodyError> consul_service_from_json(std::string_view body,
                                                                const AgentIdentity& agent);

// The cascade registration of `service` while its checks' worst status is `status`.
proto::Registration registration_of(const ConsulService& service, CheckStatus status,
                                    const AgentIdentity& agent);

// "host:port", with brackets around an IPv6 host.
std::string join_host_port(std::string_view host, std::uint16_t port);

}  // namespace cascade::agent::api
