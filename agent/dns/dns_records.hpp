#pragma once
// The resource records this server answers with, built through libldns.
// Each comes back owned by the caller; pushing it into a packet hands it over.

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "cascade/agent/dns/ldns_handles.hpp"
#include "cascade/common/net_address.hpp"

namespace cascade::agent::dns {

// The longest character-string of a TXT record (RFC 1035 3.3: a length octet).
inline constexpr std::size_t kMaxTxtString = 255;

// A for an IPv4 address, AAAA for an IPv6 one.
RecordPtr address_record(const ldns_rdf& owner, const IpAddress& ip, std::uint32_t ttl);

struct SrvFields {
  std::uint16_t priority = 0;
  std::uint16_t weight = 0;
  std::uint16_t port = 0;
  RdfPtr target;
};
RecordPtr srv_record(const ldns_rdf& owner, SrvFields fields, std::uint32_t ttl);

// One record, one character-string per element; each at most kMaxTxtString bytes.
RecordPtr txt_record(const ldns_rdf& owner, const std::vector<std::string>& strings,
                     std::uint32_t ttl);

// The zone's SOA (RFC 2308: in the authority section of NXDOMAIN and NODATA
// replies, its TTL and MINIMUM say how long the negative answer is cached).
RecordPtr soa_record(const ldns_rdf& origin, std::uint32_t ttl);

}  // namespace cascade::agent::dns
