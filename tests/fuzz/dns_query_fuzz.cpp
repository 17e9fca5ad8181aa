// Fuzz target: the agent's DNS interface on any packet (agent/dns/): the
// query check, the name classification and the responder, whose reply is
// built from a fixed registry answer (IPv4, IPv6, a host name, metadata, two
// tiers, an isolated instance) for every name the packet may ask.
// Properties: nothing throws; a bad query's reply, when there is one, parses
// with libldns, answers the packet's id and has QR set; a question's reply
// parses, keeps the id, fits the limit of its transport (its UDP limit and
// 65535 bytes) and has TC set only when that limit cut it. Seeds:
// tests/fuzz/corpus/dns_query/ (A, SRV with EDNS0, TXT of a group, AAAA of an
// addr name, the apex SOA).

#include <cstdint>
#include <optional>
#include <span>

#include "cascade/agent/dns/dns_responder.hpp"
#include "cascade/agent/dns/dns_wire.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

using agent::dns::PacketPtr;

agent::Resolution registry_answer() {
  agent::Resolution r;
  r.service = {"orders", "default"};
  r.version = 7;
  const char* addresses[] = {"10.0.0.1:8080", "[fd00::1]:8080", "orders-1.internal:9090",
                             "http://10.0.0.2/api", "10.0.0.3:80"};
  for (std::uint32_t i = 0; i < std::size(addresses); ++i) {
    proto::Instance in;
    in.id = "o" + std::to_string(i);
    in.address = addresses[i];
    in.tier = i % 2 == 0 ? 0 : 2;
    in.weight = 50 + i;
    in.metadata = {{"version", "1." + std::to_string(i)}};
    r.instances.push_back(in);
  }
  r.instances.back().health = proto::Health::kIsolated;
  return r;
}

PacketPtr parsed(const std::vector<std::uint8_t>& wire) {
  ldns_pkt* raw = nullptr;
  CASCADE_FUZZ_CHECK(ldns_wire2pkt(&raw, wire.data(), wire.size()) == LDNS_STATUS_OK,
                     "a reply libldns cannot parse");
  return PacketPtr(raw);
}

void check_reply(std::span<const std::uint8_t> query, const std::vector<std::uint8_t>& wire) {
  const auto reply = parsed(wire);
  CASCADE_FUZZ_CHECK(ldns_pkt_qr(reply.get()));
  CASCADE_FUZZ_CHECK(ldns_pkt_id(reply.get()) == LDNS_ID_WIRE(query.data()));
}

void check(std::span<const std::uint8_t> bytes) {
  static agent::dns::DnsResponder responder("cascade", 5, 1);
  static const auto answer = registry_answer();
  auto query = agent::dns::parse_query(bytes);
  if (const auto* bad = std::get_if<agent::dns::BadQuery>(&query)) {
    if (!bad->reply.empty()) check_reply(bytes, bad->reply);
    return;
  }
  const auto& question = std::get<agent::dns::DnsQuestion>(query);
  const auto name = responder.zone().classify(question.name());
  for (const auto limit : {question.udp_limit(), agent::dns::kTcpLimit}) {
    for (const auto& lookup : {std::optional(answer), std::optional<agent::Resolution>()}) {
      const auto reply = responder.respond(question, name, lookup, limit);
      CASCADE_FUZZ_CHECK(reply.wire.size() <= limit);
      check_reply(bytes, reply.wire);
      CASCADE_FUZZ_CHECK(ldns_pkt_tc(parsed(reply.wire).get()) == reply.truncated);
      CASCADE_FUZZ_CHECK(!reply.truncated || limit < agent::dns::kTcpLimit,
                         "a reply this small was cut over TCP");
    }
  }
}

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  cascade::fuzz::check({data, size});
  return 0;
}
