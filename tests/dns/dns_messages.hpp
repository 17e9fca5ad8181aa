#pragma once
// Queries and replies for the DNS tests, built and read with libldns, so
// that what a test asserts is what a real resolver would read.

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "cascade/agent/dns/ldns_handles.hpp"

namespace cascade::agent::dns::test_support {

struct QueryOptions {
  std::uint16_t id = 4242;
  std::optional<std::uint16_t> edns_udp_size{};  // nullopt: no OPT record
  bool rd = true;
};

inline std::vector<std::uint8_t> wire_of(const ldns_pkt& packet) {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  if (ldns_pkt2wire(&data, &packet, &size) != LDNS_STATUS_OK) return {};
  std::vector<std::uint8_t> wire(data, data + size);
  std::free(data);
  return wire;
}

inline PacketPtr query_packet(const std::string& name, ldns_rr_type type,
                              const QueryOptions& options = {}) {
  ldns_pkt* raw = nullptr;
  const auto status = ldns_pkt_query_new_frm_str(&raw, name.c_str(), type, LDNS_RR_CLASS_IN,
                                                 options.rd ? LDNS_RD : 0);
  EXPECT_EQ(status, LDNS_STATUS_OK) << name;
  PacketPtr query(raw);
  ldns_pkt_set_id(query.get(), options.id);
  if (options.edns_udp_size) ldns_pkt_set_edns_udp_size(query.get(), *options.edns_udp_size);
  return query;
}

inline std::vector<std::uint8_t> query_wire(const std::string& name, ldns_rr_type type,
                                            const QueryOptions& options = {}) {
  return wire_of(*query_packet(name, type, options));
}

// The reply parsed; a null pointer (and a test failure) when libldns cannot.
inline PacketPtr parse_reply(const std::vector<std::uint8_t>& wire) {
  ldns_pkt* raw = nullptr;
  const auto status = ldns_wire2pkt(&raw, wire.data(), wire.size());
  EXPECT_EQ(status, LDNS_STATUS_OK) << "the reply does not parse (" << wire.size() << " bytes)";
  return PacketPtr(status == LDNS_STATUS_OK ? raw : nullptr);
}

inline std::string text_of(const ldns_rdf* rdf) {
  char* text = ldns_rdf2str(rdf);
  std::string out = text != nullptr ? text : "";
  std::free(text);
  return out;
}

// The rdata of each record of `section`, fields separated by spaces:
// "10.0.0.1", "0 100 8080 0a000001.addr.cascade.", "\"id=o1\" \"zone=dc1\"".
inline std::vector<std::string> rdata_of(const ldns_pkt& reply,
                                         ldns_pkt_section section = LDNS_SECTION_ANSWER) {
  std::vector<std::string> out;
  const ldns_rr_list* list = nullptr;
  switch (section) {
    case LDNS_SECTION_ANSWER:
      list = ldns_pkt_answer(&reply);
      break;
    case LDNS_SECTION_AUTHORITY:
      list = ldns_pkt_authority(&reply);
      break;
    case LDNS_SECTION_ADDITIONAL:
      list = ldns_pkt_additional(&reply);
      break;
    default:
      return out;
  }
  for (std::size_t i = 0; i < ldns_rr_list_rr_count(list); ++i) {
    const auto* rr = ldns_rr_list_rr(list, i);
    std::string fields;
    for (std::size_t f = 0; f < ldns_rr_rd_count(rr); ++f)
      fields += (f > 0 ? " " : "") + text_of(ldns_rr_rdf(rr, f));
    out.push_back(fields);
  }
  return out;
}

}  // namespace cascade::agent::dns::test_support
