#pragma once
// The names this server answers for, under the configured domain (DOMAIN,
// "cascade" by default):
//
//   NAME.service.DOMAIN        service NAME of group "default"
//   NAME.GROUP.group.DOMAIN    service NAME of group GROUP
//   HEX.addr.DOMAIN            a numeric address, named in SRV targets
//                              (8 hex digits: IPv4; 32: IPv6; as Consul does)
//
// NAME is every label before the keyword, joined with dots: service names
// may contain dots ("billing.v2.service.cascade" is "billing.v2"). GROUP is
// a single label, so a group whose name has a dot is out of DNS's reach.
// DNS names are case-insensitive and resolvers may change their case
// (0x20 randomisation), so names are lower-cased: a service is reachable
// through DNS when its name is lower case.
//
// Everything else in DOMAIN is NXDOMAIN, except the names with names below
// them (service.DOMAIN, group.DOMAIN, GROUP.group.DOMAIN, addr.DOMAIN), which
// exist without records (RFC 8020: an NXDOMAIN there would deny the names
// below). Names outside DOMAIN are not ours: REFUSED.

#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/agent/dns/ldns_handles.hpp"
#include "cascade/common/net_address.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent::dns {

struct OutsideZone {};       // not under DOMAIN: REFUSED
struct ZoneApex {};          // DOMAIN itself: its SOA
struct EmptyNonTerminal {};  // names below it exist, none here: NODATA
struct NoSuchName {};        // under DOMAIN, names nothing: NXDOMAIN
struct ServiceName {
  proto::ServiceKey key;
};
struct AddressName {
  IpAddress ip;
};
using DnsName =
    std::variant<OutsideZone, ZoneApex, EmptyNonTerminal, NoSuchName, ServiceName, AddressName>;

// `labels` ("ns", "0a000007.addr") followed by `parent`'s labels; throws
// std::invalid_argument when `labels` cannot be a relative DNS name.
RdfPtr name_below(std::string_view labels, const ldns_rdf& parent);

class DnsZone {
 public:
  // Throws std::invalid_argument when `domain` ("cascade", "svc.example";
  // a trailing dot is allowed) is not a DNS name.
  explicit DnsZone(std::string_view domain);

  DnsName classify(const ldns_rdf& name) const;
  // "DOMAIN.", the owner of the zone's SOA.
  const ldns_rdf& origin() const { return *origin_; }
  // "0a000007.addr.DOMAIN.": the SRV target of an instance with a numeric host.
  RdfPtr address_name(const IpAddress& ip) const;

 private:
  std::vector<std::string> labels_;  // lower case, the top-level one last
  RdfPtr origin_;
};

}  // namespace cascade::agent::dns
