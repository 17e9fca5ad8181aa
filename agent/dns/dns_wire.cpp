#include "cascade/agent/dns/dns_wire.hpp"

#include <cstdlib>
#include <stdexcept>

namespace cascade::agent::dns {

namespace {

std::vector<std::uint8_t> to_wire(const ldns_pkt& packet) {
  std::uint8_t* data = nullptr;
  std::size_t size = 0;
  // Fails only when memory runs out: every record here was built by ldns itself.
  if (ldns_pkt2wire(&data, &packet, &size) != LDNS_STATUS_OK)
    throw std::runtime_error("DNS: ldns_pkt2wire failed");
  std::vector<std::uint8_t> wire(data, data + size);
  std::free(data);
  return wire;
}

// The encoder writes the first `count` answers only (the others stay in the
// list, to be shown again or freed).
void show_answers(ldns_pkt& packet, std::size_t count) {
  ldns_rr_list_set_rr_count(ldns_pkt_answer(&packet), count);
  ldns_pkt_set_ancount(&packet, static_cast<std::uint16_t>(count));
}

void drop_additional(ldns_pkt& packet) {
  ldns_rr_list_deep_free(ldns_pkt_additional(&packet));
  ldns_pkt_set_additional(&packet, ldns_rr_list_new());
  ldns_pkt_set_arcount(&packet, 0);
}

// Frees the answers past the first `kept` of the `total` the list holds.
void free_answers_after(ldns_pkt& packet, std::size_t kept, std::size_t total) {
  auto* answers = ldns_pkt_answer(&packet);
  ldns_rr_list_set_rr_count(answers, total);
  for (std::size_t i = kept; i < total; ++i)
    ldns_rr_free(ldns_rr_list_pop_rr(answers));
  ldns_pkt_set_ancount(&packet, static_cast<std::uint16_t>(kept));
}

}  // namespace

PacketPtr new_reply(const ldns_pkt& query, ldns_pkt_rcode rcode) {
  PacketPtr reply(ldns_pkt_new());
  if (!reply) throw std::bad_alloc();
  ldns_pkt_set_id(reply.get(), ldns_pkt_id(&query));
  ldns_pkt_set_qr(reply.get(), true);
  ldns_pkt_set_opcode(reply.get(), ldns_pkt_get_opcode(&query));
  ldns_pkt_set_rd(reply.get(), ldns_pkt_rd(&query));
  ldns_pkt_set_cd(reply.get(), ldns_pkt_cd(&query));
  ldns_pkt_set_rcode(reply.get(), static_cast<std::uint8_t>(rcode));
  // A reply repeats the question; of several (which no server answers) none.
  const auto* questions = ldns_pkt_question(&query);
  if (ldns_rr_list_rr_count(questions) == 1)
    ldns_pkt_push_rr(reply.get(), LDNS_SECTION_QUESTION,
                     ldns_rr_clone(ldns_rr_list_rr(questions, 0)));
  if (ldns_pkt_edns(&query)) ldns_pkt_set_edns_udp_size(reply.get(), kEdnsUdpLimit);
  return reply;
}

Encoded encode_within(ldns_pkt& reply, std::size_t limit) {
  auto whole = to_wire(reply);
  if (whole.size() <= limit) return {std::move(whole), false};
  // The additional section only saves the asker look-ups; answers go only
  // when the rest does not fit. Binary search: a few encodings, not one per
  // record, for a list of thousands.
  drop_additional(reply);
  ldns_pkt_set_tc(&reply, true);
  const std::size_t total = ldns_rr_list_rr_count(ldns_pkt_answer(&reply));
  std::size_t kept = 0;  // the most answers known to fit (0 always does: a header and a question)
  std::vector<std::uint8_t> best;
  std::size_t too_many = total + 1;  // the fewest answers known not to fit
  while (kept + 1 < too_many) {
    const std::size_t mid = kept + (too_many - kept) / 2;
    show_answers(reply, mid);
    auto wire = to_wire(reply);
    if (wire.size() <= limit) {
      kept = mid;
      best = std::move(wire);
    } else {
      too_many = mid;
    }
  }
  free_answers_after(reply, kept, total);
  if (best.empty()) best = to_wire(reply);
  return {std::move(best), true};
}

std::vector<std::uint8_t> header_only_reply(std::span<const std::uint8_t> raw,
                                            ldns_pkt_rcode rcode) {
  if (raw.size() < LDNS_HEADER_SIZE) return {};
  PacketPtr reply(ldns_pkt_new());
  if (!reply) throw std::bad_alloc();
  ldns_pkt_set_id(reply.get(), LDNS_ID_WIRE(raw.data()));
  ldns_pkt_set_qr(reply.get(), true);
  ldns_pkt_set_opcode(reply.get(), static_cast<ldns_pkt_opcode>(LDNS_OPCODE_WIRE(raw.data())));
  ldns_pkt_set_rd(reply.get(), LDNS_RD_WIRE(raw.data()) != 0);
  ldns_pkt_set_rcode(reply.get(), static_cast<std::uint8_t>(rcode));
  return to_wire(*reply);
}

}  // namespace cascade::agent::dns
