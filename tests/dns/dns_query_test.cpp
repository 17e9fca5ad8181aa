// What arrives is checked before anything is looked up: bad packets get
// FORMERR or NOTIMP where a reply is possible, nothing where it is not, and
// never crash the parser (agent/dns/dns_query.hpp).
#include "cascade/agent/dns/dns_query.hpp"

#include <gtest/gtest.h>

#include <ostream>
#include <random>

#include "cascade/agent/dns/dns_wire.hpp"
#include "cascade/tests/dns/dns_messages.hpp"

namespace cascade::agent::dns {
namespace {

using test_support::parse_reply;
using test_support::query_packet;
using test_support::query_wire;
using test_support::wire_of;

const BadQuery* bad_of(const std::variant<DnsQuestion, BadQuery>& parsed) {
  return std::get_if<BadQuery>(&parsed);
}

ldns_pkt_rcode rcode_of(const BadQuery& bad) {
  auto reply = parse_reply(bad.reply);
  return reply ? ldns_pkt_get_rcode(reply.get()) : LDNS_RCODE_NOERROR;
}

// What parse_query makes of `packet`: the problem and the RCODE of the reply
// (nullopt: no reply); nullopt when it is a question.
struct Verdict {
  QueryProblem problem;
  std::optional<ldns_pkt_rcode> rcode;
  bool operator==(const Verdict&) const = default;
};
std::ostream& operator<<(std::ostream& out, const Verdict& v) {
  return out << to_string(v.problem) << ", rcode "
             << (v.rcode ? std::to_string(*v.rcode) : std::string("none"));
}

std::optional<Verdict> verdict_of(const ldns_pkt& packet) {
  const auto parsed = parse_query(wire_of(packet));
  const auto* bad = bad_of(parsed);
  if (bad == nullptr) return std::nullopt;
  Verdict verdict{bad->problem, std::nullopt};
  if (!bad->reply.empty()) verdict.rcode = rcode_of(*bad);
  return verdict;
}

TEST(DnsQueryTest, AWellFormedQueryGivesItsQuestion) {
  const auto parsed = parse_query(query_wire("orders.service.cascade.", LDNS_RR_TYPE_SRV));
  const auto* question = std::get_if<DnsQuestion>(&parsed);
  ASSERT_NE(question, nullptr);
  EXPECT_EQ(question->type(), LDNS_RR_TYPE_SRV);
  EXPECT_EQ(test_support::text_of(&question->name()), "orders.service.cascade.");
  EXPECT_EQ(question->udp_limit(), kPlainUdpLimit) << "no EDNS0: 512 bytes";
}

TEST(DnsQueryTest, EdnsSizeIsHonouredWithinPlainAndOurOwnLimit) {
  auto limit_with = [](std::uint16_t size) {
    const auto parsed =
        parse_query(query_wire("a.service.cascade.", LDNS_RR_TYPE_A, {.edns_udp_size = size}));
    return std::get<DnsQuestion>(parsed).udp_limit();
  };
  EXPECT_EQ(limit_with(1000), 1000u);
  EXPECT_EQ(limit_with(4096), kEdnsUdpLimit);
  EXPECT_EQ(limit_with(100), kPlainUdpLimit);
}

TEST(DnsQueryTest, GarbageLongerThanAHeaderGetsFormerrWithItsId) {
  std::vector<std::uint8_t> garbage = {0xAB, 0xCD, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00,
                                       0x00, 0x00, 0x00, 0x00, 0xFF, 0xFF, 0xFF};
  const auto parsed = parse_query(garbage);
  const auto* bad = bad_of(parsed);
  ASSERT_NE(bad, nullptr);
  EXPECT_EQ(bad->problem, QueryProblem::kMalformed);
  auto reply = parse_reply(bad->reply);
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_FORMERR);
  EXPECT_EQ(ldns_pkt_id(reply.get()), 0xABCD);
  EXPECT_TRUE(ldns_pkt_qr(reply.get()));
  EXPECT_TRUE(ldns_pkt_rd(reply.get()));
}

TEST(DnsQueryTest, PacketShorterThanAHeaderGetsNoReply) {
  const std::vector<std::uint8_t> runt = {0x12, 0x34, 0x01};
  const auto parsed = parse_query(runt);
  ASSERT_NE(bad_of(parsed), nullptr);
  EXPECT_EQ(bad_of(parsed)->problem, QueryProblem::kTooShort);
  EXPECT_TRUE(bad_of(parsed)->reply.empty());
  EXPECT_EQ(bad_of(parse_query({}))->problem, QueryProblem::kTooShort);
}

TEST(DnsQueryTest, EveryTruncationOfAValidQueryIsHandled) {
  const auto whole =
      query_wire("billing.v2.service.cascade.", LDNS_RR_TYPE_SRV, {.edns_udp_size = 1232});
  for (std::size_t size = 0; size < whole.size(); ++size) {
    const std::vector<std::uint8_t> cut(whole.begin(), whole.begin() + size);
    const auto parsed = parse_query(cut);
    const auto* bad = bad_of(parsed);
    // Cut inside the OPT record, the question itself may still parse.
    if (bad == nullptr) continue;
    if (size < LDNS_HEADER_SIZE)
      EXPECT_TRUE(bad->reply.empty()) << size;
    else
      EXPECT_EQ(rcode_of(*bad), LDNS_RCODE_FORMERR) << size;
  }
}

TEST(DnsQueryTest, RandomBytesNeverCrashAndAreAnsweredOnlyWithErrors) {
  std::mt19937 rng(2024);
  for (int round = 0; round < 20'000; ++round) {
    std::vector<std::uint8_t> bytes(rng() % 300);
    for (auto& b : bytes)
      b = static_cast<std::uint8_t>(rng());
    const auto parsed = parse_query(bytes);
    if (const auto* bad = bad_of(parsed); bad != nullptr && !bad->reply.empty()) {
      auto reply = parse_reply(bad->reply);
      ASSERT_TRUE(reply);
      EXPECT_TRUE(ldns_pkt_qr(reply.get()));
    }
  }
}

TEST(DnsQueryTest, ResponseIsNeverAnswered) {
  auto packet = query_packet("orders.service.cascade.", LDNS_RR_TYPE_A);
  ldns_pkt_set_qr(packet.get(), true);
  EXPECT_EQ(verdict_of(*packet), (Verdict{QueryProblem::kResponse, std::nullopt}));
}

TEST(DnsQueryTest, UnsupportedOpcodeGetsNotimp) {
  auto packet = query_packet("orders.service.cascade.", LDNS_RR_TYPE_A);
  ldns_pkt_set_opcode(packet.get(), LDNS_PACKET_UPDATE);
  EXPECT_EQ(verdict_of(*packet), (Verdict{QueryProblem::kOpcode, LDNS_RCODE_NOTIMPL}));
}

TEST(DnsQueryTest, SeveralQuestionsGetFormerr) {
  auto packet = query_packet("orders.service.cascade.", LDNS_RR_TYPE_A);
  ldns_pkt_push_rr(packet.get(), LDNS_SECTION_QUESTION,
                   ldns_rr_clone(ldns_rr_list_rr(ldns_pkt_question(packet.get()), 0)));
  EXPECT_EQ(verdict_of(*packet), (Verdict{QueryProblem::kQuestionCount, LDNS_RCODE_FORMERR}));
}

TEST(DnsQueryTest, NoQuestionGetsFormerr) {
  auto packet = query_packet("orders.service.cascade.", LDNS_RR_TYPE_A);
  ldns_rr_list_deep_free(ldns_pkt_question(packet.get()));
  ldns_pkt_set_question(packet.get(), ldns_rr_list_new());
  ldns_pkt_set_qdcount(packet.get(), 0);
  EXPECT_EQ(verdict_of(*packet), (Verdict{QueryProblem::kQuestionCount, LDNS_RCODE_FORMERR}));
}

TEST(DnsQueryTest, ChaosClassIsRefused) {
  ldns_pkt* raw = nullptr;
  ASSERT_EQ(
      ldns_pkt_query_new_frm_str(&raw, "version.bind.", LDNS_RR_TYPE_TXT, LDNS_RR_CLASS_CH, 0),
      LDNS_STATUS_OK);
  PacketPtr packet(raw);
  EXPECT_EQ(verdict_of(*packet), (Verdict{QueryProblem::kClass, LDNS_RCODE_REFUSED}));
}

TEST(DnsQueryTest, EdnsVersionOneGetsBadvers) {
  auto packet = query_packet("orders.service.cascade.", LDNS_RR_TYPE_A, {.edns_udp_size = 1232});
  ldns_pkt_set_edns_version(packet.get(), 1);
  const auto parsed = parse_query(wire_of(*packet));
  ASSERT_NE(bad_of(parsed), nullptr);
  EXPECT_EQ(bad_of(parsed)->problem, QueryProblem::kEdnsVersion);
  auto reply = parse_reply(bad_of(parsed)->reply);
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_edns_extended_rcode(reply.get()), 1) << "BADVERS is extended RCODE 16";
  EXPECT_EQ(ldns_pkt_edns_version(reply.get()), 0);
}

}  // namespace
}  // namespace cascade::agent::dns
