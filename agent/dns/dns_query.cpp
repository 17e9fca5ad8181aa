#include "cascade/agent/dns/dns_query.hpp"

#include <algorithm>
#include <iterator>

#include "cascade/agent/dns/dns_wire.hpp"

namespace cascade::agent::dns {

namespace {

// The reply to a query that gets none but an error: its full RCODE split
// between the header (low four bits) and the OPT record (the rest).
BadQuery refuse(QueryProblem problem, const ldns_pkt& query, unsigned rcode) {
  auto reply = new_reply(query, static_cast<ldns_pkt_rcode>(rcode & 0xF));
  if (rcode > 0xF)
    ldns_pkt_set_edns_extended_rcode(reply.get(), static_cast<std::uint8_t>(rcode >> 4));
  return {problem, encode_within(*reply, kPlainUdpLimit).wire, rcode};
}

// The same for bytes that did not parse: a header, no question.
BadQuery refuse_raw(QueryProblem problem, std::span<const std::uint8_t> raw, ldns_pkt_rcode rcode) {
  return {problem, header_only_reply(raw, rcode), static_cast<unsigned>(rcode)};
}

}  // namespace

std::size_t DnsQuestion::udp_limit() const {
  if (!ldns_pkt_edns(query_.get())) return kPlainUdpLimit;
  return std::clamp<std::size_t>(ldns_pkt_edns_udp_size(query_.get()), kPlainUdpLimit,
                                 kEdnsUdpLimit);
}

std::string_view to_string(QueryProblem problem) {
  static constexpr std::string_view kNames[] = {
      "shorter than a DNS header",    "a response, not a query",  "malformed",
      "an opcode other than QUERY",   "not exactly one question", "a class other than IN",
      "an EDNS version other than 0",
  };
  static_assert(std::size(kNames) == static_cast<std::size_t>(QueryProblem::kEdnsVersion) + 1);
  const auto index = static_cast<std::size_t>(problem);
  return index < std::size(kNames) ? kNames[index] : "unknown";
}

std::variant<DnsQuestion, BadQuery> parse_query(std::span<const std::uint8_t> bytes) {
  if (bytes.size() < LDNS_HEADER_SIZE) return BadQuery{QueryProblem::kTooShort, {}};
  if (LDNS_QR_WIRE(bytes.data()) != 0) return BadQuery{QueryProblem::kResponse, {}};
  ldns_pkt* raw = nullptr;
  if (ldns_wire2pkt(&raw, bytes.data(), bytes.size()) != LDNS_STATUS_OK || raw == nullptr) {
    // Checked before the parse result, which may be a FORMERR for an
    // unknown opcode's body: NOTIMP tells the asker more.
    const bool query_opcode = LDNS_OPCODE_WIRE(bytes.data()) == LDNS_PACKET_QUERY;
    return query_opcode ? refuse_raw(QueryProblem::kMalformed, bytes, LDNS_RCODE_FORMERR)
                        : refuse_raw(QueryProblem::kOpcode, bytes, LDNS_RCODE_NOTIMPL);
  }
  PacketPtr query(raw);
  if (ldns_pkt_get_opcode(query.get()) != LDNS_PACKET_QUERY)
    return refuse(QueryProblem::kOpcode, *query, LDNS_RCODE_NOTIMPL);
  if (ldns_pkt_qdcount(query.get()) != 1 ||
      ldns_rr_list_rr_count(ldns_pkt_question(query.get())) != 1)
    return refuse(QueryProblem::kQuestionCount, *query, LDNS_RCODE_FORMERR);
  if (ldns_pkt_edns(query.get()) && ldns_pkt_edns_version(query.get()) != 0)
    return refuse(QueryProblem::kEdnsVersion, *query, kRcodeBadVers);
  const auto klass = ldns_rr_get_class(ldns_rr_list_rr(ldns_pkt_question(query.get()), 0));
  if (klass != LDNS_RR_CLASS_IN && klass != LDNS_RR_CLASS_ANY)
    return refuse(QueryProblem::kClass, *query, LDNS_RCODE_REFUSED);
  return DnsQuestion(std::move(query));
}

}  // namespace cascade::agent::dns
