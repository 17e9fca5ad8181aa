#pragma once
// Cascade's instances as Consul's answers describe them: the entries of
// /v1/health/service (Node, Service, Checks), of /v1/catalog/service (flat),
// of /v1/agent/services and /v1/agent/checks; and Consul's index as a cascade
// version (docs/consul-compat.md).
//
// Model mapping, for an instance of any agent (not only this one):
//   Node.Node          metadata "consul-node" (the registering agent), else the host
//   Node.Address       the host of the instance's address
//   Datacenter         the instance's zone, "cascade" when it has none
//   Node.Meta          cascade-tier (0: this tier), cascade-health (ok, isolated, unconfirmed)
//   Service.Tags/Meta  metadata "consul-tags" / the metadata without "consul-" keys
//   Checks             two, whatever the instance's own checks were:
//     serfHealth       the node's lease: passing; warning while unconfirmed (its lease
//                      ran out but eviction protection holds it)
//     service:ID       the instance: critical when not UP or isolated by the hub;
//                      else the worst status of its TTL checks (metadata "consul-check");
//                      else passing

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cascade/agent/api/native_json.hpp"
#include "cascade/agent/api/ttl_checks.hpp"

namespace cascade::agent::api {

// X-Consul-Index for a cascade version. A service the hubs know has a version
// of at least 2^40; an unknown one has version 0, and Consul's indexes start at 1.
inline std::uint64_t consul_index(std::uint64_t version) {
  return version == 0 ? 1 : version;
}
// The version a blocking query's ?index= holds: index 1 is version 0, so a
// client that saw "no such service" waits for it to appear.
inline std::uint64_t version_of_index(std::uint64_t index) {
  return index == 1 ? 0 : index;
}

inline constexpr std::string_view kDefaultDatacenter = "cascade";

// The datacenter of an instance or agent in `zone`.
inline std::string datacenter_of(const std::string& zone) {
  return zone.empty() ? std::string(kDefaultDatacenter) : zone;
}

// "host:port" (or "[v6]:port") -> host, port; anything else (a URL) is all host, port 0.
std::pair<std::string, std::uint16_t> split_host_port(const std::string& address);

struct ConsulInstance {
  std::string service;  // the service's name
  std::string id;
  std::string host;
  std::uint16_t port = 0;
  std::vector<std::string> tags;
  std::map<std::string, std::string> meta;  // without the "consul-" keys
  std::string node;
  std::string datacenter;
  std::uint32_t weight = 0;
  std::uint32_t tier = 0;
  std::string health;  // cascade's: "ok", "isolated", "unconfirmed"
  CheckStatus node_status = CheckStatus::kPassing;
  std::string node_output;
  CheckStatus service_status = CheckStatus::kPassing;
  std::string service_output;
  CheckStatus status() const { return worst(node_status, service_status); }
};

ConsulInstance consul_instance(const std::string& service, const proto::Instance& instance);

// The arguments that narrow a health or catalog answer.
struct ConsulFilter {
  bool passing = false;                     // ?passing: only entries whose checks all pass
  std::optional<std::string> tag{};         // ?tag=
  std::optional<std::string> datacenter{};  // ?dc=: only instances of that datacenter
  bool admits(const ConsulInstance& instance) const;
};

// GET /v1/health/service/NAME and GET /v1/catalog/service/NAME: `index` is
// each entry's CreateIndex and ModifyIndex.
Json health_json(const Resolution& resolution, const ConsulFilter& filter);
Json catalog_service_json(const Resolution& resolution, const ConsulFilter& filter);

// An entry of GET /v1/agent/services (`warning_weight`: Weights.Warning).
Json agent_service_json(const ConsulInstance& instance, std::uint32_t passing_weight,
                        std::uint32_t warning_weight);
// An entry of GET /v1/agent/checks.
Json agent_check_json(const TtlCheck& check, const std::string& node, const std::string& service,
                      const std::vector<std::string>& tags);

// An entry of GET /v1/kv/KEY (docs/consul-compat.md, "KV store"): `path` is
// Consul's Key (GROUP/KEY), the value in base64, and `index` its CreateIndex
// and ModifyIndex: the version of the group at the tier that set the value,
// when it was set. LockIndex and Flags are 0 (no locks, no flags); no Session.
Json kv_entry_json(const std::string& path, std::string_view value, std::uint64_t index);

// RFC 4648 base64, with padding, as Consul writes KV values.
std::string base64(std::string_view bytes);

}  // namespace cascade::agent::api
