#pragma once
// DnsResponder: the reply to one DNS question, from the registry's answer.
// Pure: no socket, no clock, no thread; the server (agent/dns/dns_server.hpp)
// parses the query (dns_query.hpp), classifies its name (dns_name.hpp), looks
// the service up if it names one, and sends what respond() returns.
//
// Replies, for NAME.service.DOMAIN and NAME.GROUP.group.DOMAIN:
//   A / AAAA  the IPv4 / IPv6 hosts of the served instances (dns_order.hpp),
//             each address once; instances with a host name are left out.
//   ANY       A and AAAA together.
//   SRV       one record per served instance with a port: priority = tier,
//             weight = the instance's weight (at most 65535), its port; target
//             HEX.addr.DOMAIN for a numeric host, with its A/AAAA record in the
//             additional section, or the host name itself.
//   TXT       one record per served instance, one character-string per
//             field: id=, address=, zone=, tier=, weight=, health=, then each
//             metadata entry as KEY=VALUE (a field longer than 255 bytes is
//             left out, not cut).
//   other     no record (NODATA).
// Every record's TTL is the configured one. NOERROR with no record (NODATA)
// and NXDOMAIN carry the zone's SOA in the authority section, TTL and
// MINIMUM the configured TTL too (RFC 2308).
//
// Errors: a service no hub knows (version 0, no instance) is NXDOMAIN; no
// answer at all (no hub answered, nothing cached) is SERVFAIL, so resolvers
// try again instead of caching a denial; a name outside DOMAIN is REFUSED
// (this server is authoritative for DOMAIN only and never recurses).
//
// Thread-safety: none (the weighted order draws from the responder's Rng);
// the server calls it from its one thread.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "cascade/agent/agent_core.hpp"
#include "cascade/agent/dns/dns_name.hpp"
#include "cascade/agent/dns/dns_query.hpp"
#include "cascade/common/random.hpp"

namespace cascade::agent::dns {

struct DnsReply {
  std::vector<std::uint8_t> wire;
  ldns_pkt_rcode rcode = LDNS_RCODE_NOERROR;
  std::size_t answers = 0;  // records in the answer section as sent
  bool truncated = false;   // records were left out to fit (TC set)
};

class DnsResponder {
 public:
  // Throws std::invalid_argument when `domain` is not a DNS name.
  DnsResponder(std::string_view domain, std::uint32_t ttl_seconds, std::uint64_t rng_seed);

  const DnsZone& zone() const { return zone_; }

  // The reply to `question`, whose name zone() classified as `name`, in at
  // most `limit` bytes (DnsQuestion::udp_limit() over UDP, kTcpLimit over
  // TCP). For a ServiceName, `lookup` is the registry's answer (nullopt: no
  // hub answered and nothing is cached); other names ignore it.
  DnsReply respond(const DnsQuestion& question, const DnsName& name,
                   const std::optional<Resolution>& lookup, std::size_t limit);

 private:
  PacketPtr reply_to(const DnsQuestion& question, const DnsName& name,
                     const std::optional<Resolution>& lookup);
  PacketPtr service_reply(const DnsQuestion& question, const std::optional<Resolution>& lookup);
  PacketPtr address_reply(const DnsQuestion& question, const IpAddress& ip);
  PacketPtr apex_reply(const DnsQuestion& question);
  // NOERROR, AA set; the caller adds the answers.
  PacketPtr authoritative(const DnsQuestion& question, ldns_pkt_rcode rcode) const;
  // Adds the SOA to the authority section when the answer section is empty
  // (NODATA, NXDOMAIN).
  void add_soa_if_empty(ldns_pkt& reply) const;
  void add_addresses(ldns_pkt& reply, const ldns_rdf& owner,
                     const std::vector<proto::Instance>& served, ldns_rr_type type) const;
  void add_services(ldns_pkt& reply, const ldns_rdf& owner,
                    const std::vector<proto::Instance>& served) const;
  void add_texts(ldns_pkt& reply, const ldns_rdf& owner,
                 const std::vector<proto::Instance>& served) const;

  DnsZone zone_;
  std::uint32_t ttl_;
  Rng rng_;
};

}  // namespace cascade::agent::dns
