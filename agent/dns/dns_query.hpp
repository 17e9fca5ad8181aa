#pragma once
// A query as it arrives, checked: either one question this server can
// answer, or what is wrong with it and the reply that says so.
//
// Bad input from the network never throws and never crashes: bytes libldns
// cannot parse get FORMERR when they have a header to answer, nothing when
// they do not; a response (QR set) is never answered, so that two servers
// cannot bounce errors at each other.

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <variant>
#include <vector>

#include "cascade/agent/dns/ldns_handles.hpp"

namespace cascade::agent::dns {

// A parsed query with exactly one question, opcode QUERY, class IN (or ANY).
class DnsQuestion {
 public:
  explicit DnsQuestion(PacketPtr query) : query_(std::move(query)) {}

  const ldns_pkt& packet() const { return *query_; }
  const ldns_rr& question() const { return *ldns_rr_list_rr(ldns_pkt_question(query_.get()), 0); }
  const ldns_rdf& name() const { return *ldns_rr_owner(&question()); }
  ldns_rr_type type() const { return ldns_rr_get_type(&question()); }
  // The largest reply the asker takes over UDP: 512 bytes without EDNS0,
  // else the size it advertises, within [512, kEdnsUdpLimit].
  std::size_t udp_limit() const;

 private:
  PacketPtr query_;
};

// Why a query gets no answer, each counted and logged apart.
enum class QueryProblem : std::uint8_t {
  kTooShort,       // shorter than a DNS header: nothing to reply to
  kResponse,       // QR set: never answered
  kMalformed,      // libldns could not parse it: FORMERR
  kOpcode,         // not a standard QUERY: NOTIMP
  kQuestionCount,  // not exactly one question: FORMERR
  kClass,          // a class other than IN or ANY: REFUSED
  kEdnsVersion,    // EDNS version other than 0: BADVERS (RFC 6891 6.1.3); last (to_string)
};
std::string_view to_string(QueryProblem problem);

struct BadQuery {
  QueryProblem problem;
  std::vector<std::uint8_t> reply;  // empty: no reply is sent
  // The reply's RCODE, extended ones included (BADVERS is 16); meaningless
  // without a reply.
  unsigned rcode = LDNS_RCODE_NOERROR;
};

// The full RCODE of BADVERS (RFC 6891 9): 16, its upper bits in the OPT record.
inline constexpr unsigned kRcodeBadVers = 16;

std::variant<DnsQuestion, BadQuery> parse_query(std::span<const std::uint8_t> bytes);

}  // namespace cascade::agent::dns
