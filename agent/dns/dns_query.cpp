#include "cascade/agent/dns/dns_query.hpp"

#include <algorithm>

#include "cascade/agent/dns/dns_wire.hpp"

namespace cascade::agent::dns {

namespace {

// EDNS's extended RCODE BADVERS (16): the upper eight bits in the OPT record.
constexpr std::uint8_t kBadVersExtendedRcode = 16 >> 4;

std::vector<std::uint8_t> reply_bytes(const ldns_pkt& query, ldns_pkt_rcode rcode,
                                      std::uint8_t extended_rcode = 0) {
  auto reply = new_reply(query, rcode);
  if (extended_rcode != 0) ldns_pkt_set_edns_extended_rcode(reply.get(), extended_rcode);
  return encode_within(*reply, kPlainUdpLimit).wire;
}

}  // namespace

std::size_t DnsQuestion::udp_limit() const {
  if (!ldns_pkt_edns(query_.get())) return kPlainUdpLimit;
  return std::clamp<std::size_t>(ldns_pkt_edns_udp_size(query_.get()), kPlainUdpLimit,
                                 kEdnsUdpLimit);
}

std::string_view to_string(QueryProblem problem) {
  switch (problem) {
    case QueryProblem::kTooShort:
      return "shorter than a DNS header";
    case QueryProblem::kResponse:
      return "a response, not a query";
    case QueryProblem::kMalformed:
      return "malformed";
    case QueryProblem::kOpcode:
      return "an opcode other than QUERY";
    case QueryProblem::kQuestionCount:
      return "not exactly one question";
    case QueryProblem::kClass:
      return "a class other than IN";
    case QueryProblem::kEdnsVersion:
      return "an EDNS version other than 0";
  }
  return "unknown";
}

std::variant<DnsQuestion, BadQuery> parse_query(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < LDNS_HEADER_SIZE) return BadQuery{QueryProblem::kTooShort, {}};
  if (LDNS_QR_WIRE(bytes.data()) != 0) return BadQuery{QueryProblem::kResponse, {}};
  ldns_pkt* raw = nullptr;
  if (ldns_wire2pkt(&raw, bytes.data(), bytes.size()) != LDNS_STATUS_OK || raw == nullptr) {
    // Checked before the parse result, which may be a FORMERR for an
    // unknown opcode's body: NOTIMP tells the asker more.
    const bool query_opcode = LDNS_OPCODE_WIRE(bytes.data()) == LDNS_PACKET_QUERY;
    return query_opcode
               ? BadQuery{QueryProblem::kMalformed, header_only_reply(bytes, LDNS_RCODE_FORMERR)}
               : BadQuery{QueryProblem::kOpcode, header_only_reply(bytes, LDNS_RCODE_NOTIMPL)};
  }
  PacketPtr query(raw);
  if (ldns_pkt_get_opcode(query.get()) != LDNS_PACKET_QUERY)
    return BadQuery{QueryProblem::kOpcode, reply_bytes(*query, LDNS_RCODE_NOTIMPL)};
  if (ldns_pkt_qdcount(query.get()) != 1 ||
      ldns_rr_list_rr_count(ldns_pkt_question(query.get())) != 1)
    return BadQuery{QueryProblem::kQuestionCount, reply_bytes(*query, LDNS_RCODE_FORMERR)};
  if (ldns_pkt_edns(query.get()) && ldns_pkt_edns_version(query.get()) != 0)
    return BadQuery{QueryProblem::kEdnsVersion,
                    reply_bytes(*query, LDNS_RCODE_NOERROR, kBadVersExtendedRcode)};
  const auto klass = ldns_rr_get_class(ldns_rr_list_rr(ldns_pkt_question(query.get()), 0));
  if (klass != LDNS_RR_CLASS_IN && klass != LDNS_RR_CLASS_ANY)
    return BadQuery{QueryProblem::kClass, reply_bytes(*query, LDNS_RCODE_REFUSED)};
  return DnsQuestion(std::move(query));
}

}  // namespace cascade::agent::dns
