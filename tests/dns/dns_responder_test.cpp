// The replies of the DNS interface, from a parsed question and the
// registry's answer, read back with libldns (agent/dns/dns_responder.hpp).
#include "cascade/agent/dns/dns_responder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>

#include "cascade/agent/dns/dns_wire.hpp"
#include "cascade/tests/dns/dns_messages.hpp"

namespace cascade::agent::dns {
namespace {

using test_support::parse_reply;
using test_support::query_wire;
using test_support::QueryOptions;
using test_support::rdata_of;
using testing::ElementsAre;
using testing::UnorderedElementsAre;

constexpr std::uint32_t kTtl = 30;

proto::Instance instance(const std::string& id, const std::string& address, std::uint32_t tier = 0,
                         std::uint32_t weight = 100) {
  proto::Instance in;
  in.id = id;
  in.address = address;
  in.tier = tier;
  in.weight = weight;
  return in;
}

Resolution listed(std::vector<proto::Instance> instances, std::uint64_t version = 5) {
  Resolution r;
  r.service = {"orders", "default"};
  r.version = version;
  r.instances = std::move(instances);
  return r;
}

class DnsResponderTest : public ::testing::Test {
 protected:
  // Asks `name` of a responder whose lookup said `lookup`; the reply parsed.
  PacketPtr ask(const std::string& name, ldns_rr_type type, const std::optional<Resolution>& lookup,
                std::size_t limit = kTcpLimit, const QueryOptions& options = {}) {
    auto parsed = parse_query(query_wire(name, type, options));
    const auto& question = std::get<DnsQuestion>(parsed);
    reply_ =
        responder_.respond(question, responder_.zone().classify(question.name()), lookup, limit);
    return parse_reply(reply_.wire);
  }

  DnsResponder responder_{"cascade", kTtl, 7};
  DnsReply reply_;
};

TEST_F(DnsResponderTest, AListsTheIpv4HostsOfUpInstancesOnly) {
  auto down = instance("down", "10.0.0.2:80");
  down.status = proto::InstanceStatus::kDown;
  auto isolated = instance("isolated", "10.0.0.3:80");
  isolated.health = proto::Health::kIsolated;
  auto unconfirmed = instance("unconfirmed", "10.0.0.5:80");
  unconfirmed.health = proto::Health::kUnconfirmed;
  auto starting = instance("starting", "10.0.0.6:80");
  starting.status = proto::InstanceStatus::kStarting;
  const auto lookup =
      listed({instance("up", "10.0.0.1:80"), down, isolated,
              instance("drained", "10.0.0.4:80", 0, 0), unconfirmed, starting,
              instance("v6", "[fd00::1]:80"), instance("named", "orders-1.internal:80")});
  auto reply = ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup);
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NOERROR);
  EXPECT_TRUE(ldns_pkt_aa(reply.get()));
  EXPECT_FALSE(ldns_pkt_ra(reply.get()));
  EXPECT_EQ(ldns_pkt_id(reply.get()), 4242);
  EXPECT_THAT(rdata_of(*reply), UnorderedElementsAre("10.0.0.1", "10.0.0.5"));
  const auto* answers = ldns_pkt_answer(reply.get());
  for (std::size_t i = 0; i < ldns_rr_list_rr_count(answers); ++i) {
    EXPECT_EQ(ldns_rr_ttl(ldns_rr_list_rr(answers, i)), kTtl);
    EXPECT_EQ(test_support::text_of(ldns_rr_owner(ldns_rr_list_rr(answers, i))),
              "orders.service.cascade.");
  }
}

TEST_F(DnsResponderTest, AaaaListsTheIpv6HostsAndAnyListsBoth) {
  const auto lookup = listed({instance("v4", "10.0.0.1:80"), instance("v6", "[fd00::1]:80"),
                              instance("v6-bare", "fd00::2")});
  EXPECT_THAT(rdata_of(*ask("orders.service.cascade.", LDNS_RR_TYPE_AAAA, lookup)),
              UnorderedElementsAre("fd00::1", "fd00::2"));
  EXPECT_THAT(rdata_of(*ask("orders.service.cascade.", LDNS_RR_TYPE_ANY, lookup)),
              UnorderedElementsAre("10.0.0.1", "fd00::1", "fd00::2"));
}

TEST_F(DnsResponderTest, AnAddressSharedByTwoInstancesIsListedOnce) {
  const auto lookup = listed({instance("a", "10.0.0.1:80"), instance("b", "10.0.0.1:81"),
                              instance("c", "http://10.0.0.2:8080/api")});
  EXPECT_THAT(rdata_of(*ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup)),
              UnorderedElementsAre("10.0.0.1", "10.0.0.2"));
}

TEST_F(DnsResponderTest, NearestTierComesFirst) {
  const auto lookup = listed({instance("far", "10.2.0.1:80", 2), instance("near", "10.0.0.1:80", 0),
                              instance("mid", "10.1.0.1:80", 1)});
  for (int i = 0; i < 20; ++i)
    EXPECT_THAT(rdata_of(*ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup)),
                ElementsAre("10.0.0.1", "10.1.0.1", "10.2.0.1"));
}

TEST_F(DnsResponderTest, WithinATierTheFirstAddressFollowsTheWeights) {
  const auto lookup =
      listed({instance("heavy", "10.0.0.1:80", 0, 300), instance("light", "10.0.0.2:80", 0, 100),
              instance("remote", "10.9.0.1:80", 1, 10'000)});
  std::map<std::string, int> first;
  constexpr int kRounds = 4000;
  for (int i = 0; i < kRounds; ++i) {
    const auto answers = rdata_of(*ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup));
    ASSERT_EQ(answers.size(), 3u);
    EXPECT_EQ(answers[2], "10.9.0.1") << "a heavier instance of a farther tier still comes last";
    ++first[answers[0]];
  }
  // 300 of 400: three quarters first; the seed is fixed, the margin generous.
  EXPECT_NEAR(first["10.0.0.1"] / double(kRounds), 0.75, 0.03);
  EXPECT_GT(first["10.0.0.2"], 0) << "shuffled, not sorted";
}

TEST_F(DnsResponderTest, UnconfirmedInstancesComeAfterTheConfirmedOnesOfTheirTier) {
  auto unconfirmed = instance("held", "10.0.0.1:80", 0, 10'000);
  unconfirmed.health = proto::Health::kUnconfirmed;
  const auto lookup = listed({unconfirmed, instance("ok", "10.0.0.2:80", 0, 1)});
  for (int i = 0; i < 20; ++i)
    EXPECT_THAT(rdata_of(*ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup)),
                ElementsAre("10.0.0.2", "10.0.0.1"));
}

TEST_F(DnsResponderTest, SrvCarriesTierWeightPortAndATargetWithItsAddress) {
  const auto lookup = listed(
      {instance("near", "10.0.0.1:8080", 0, 70'000), instance("far", "[fd00::9]:9090", 2, 5),
       instance("named", "orders-1.internal:7070", 1, 100), instance("portless", "10.0.0.3")});
  auto reply = ask("orders.service.cascade.", LDNS_RR_TYPE_SRV, lookup);
  ASSERT_TRUE(reply);
  EXPECT_THAT(rdata_of(*reply),
              ElementsAre("0 65535 8080 0a000001.addr.cascade.", "1 100 7070 orders-1.internal.",
                          "2 5 9090 fd000000000000000000000000000009.addr.cascade."));
  EXPECT_THAT(rdata_of(*reply, LDNS_SECTION_ADDITIONAL),
              UnorderedElementsAre("10.0.0.1", "fd00::9"));
  const auto* additional = ldns_pkt_additional(reply.get());
  ASSERT_EQ(ldns_rr_list_rr_count(additional), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    const auto* rr = ldns_rr_list_rr(additional, i);
    EXPECT_EQ(ldns_rr_ttl(rr), kTtl);
    const auto owner = test_support::text_of(ldns_rr_owner(rr));
    EXPECT_TRUE(owner == "0a000001.addr.cascade." ||
                owner == "fd000000000000000000000000000009.addr.cascade.")
        << owner;
  }
}

TEST_F(DnsResponderTest, TxtCarriesOneRecordPerInstanceWithItsFieldsAndMetadata) {
  auto in = instance("o1", "10.0.0.1:8080", 1, 50);
  in.zone = "dc1";
  in.metadata = {{"version", "2.1"}, {"huge", std::string(300, 'x')}};
  auto reply = ask("orders.service.cascade.", LDNS_RR_TYPE_TXT, listed({in}));
  ASSERT_TRUE(reply);
  EXPECT_THAT(rdata_of(*reply), ElementsAre("\"id=o1\" \"address=10.0.0.1:8080\" \"zone=dc1\" "
                                            "\"tier=1\" \"weight=50\" \"health=ok\" "
                                            "\"version=2.1\""))
      << "a field over 255 bytes is left out, not cut";
}

TEST_F(DnsResponderTest, UnknownServiceIsNxdomainWithTheSoa) {
  auto reply = ask("nosuch.service.cascade.", LDNS_RR_TYPE_A, listed({}, 0));
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NXDOMAIN);
  EXPECT_TRUE(ldns_pkt_aa(reply.get()));
  EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0);
  EXPECT_THAT(rdata_of(*reply, LDNS_SECTION_AUTHORITY),
              ElementsAre("ns.cascade. hostmaster.cascade. 1 3600 600 86400 30"));
  EXPECT_EQ(ldns_rr_ttl(ldns_rr_list_rr(ldns_pkt_authority(reply.get()), 0)), kTtl);
}

TEST_F(DnsResponderTest, KnownServiceWithoutEligibleInstanceIsNodata) {
  auto down = instance("down", "10.0.0.1:80");
  down.status = proto::InstanceStatus::kDown;
  for (const auto& lookup : {listed({down}), listed({})}) {
    auto reply = ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup);
    ASSERT_TRUE(reply);
    EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NOERROR);
    EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0);
    EXPECT_EQ(ldns_pkt_nscount(reply.get()), 1) << "the SOA, for the negative TTL";
  }
}

TEST_F(DnsResponderTest, KnownServiceWithOnlyIpv4InstancesHasNoAaaa) {
  auto reply =
      ask("orders.service.cascade.", LDNS_RR_TYPE_AAAA, listed({instance("v4", "10.0.0.1:80")}));
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_NOERROR);
  EXPECT_EQ(ldns_pkt_ancount(reply.get()), 0);
  EXPECT_EQ(ldns_pkt_nscount(reply.get()), 1);
  EXPECT_EQ(reply_.answers, 0u);
}

TEST_F(DnsResponderTest, NoAnswerFromAnyHubIsServfail) {
  auto reply = ask("orders.service.cascade.", LDNS_RR_TYPE_A, std::nullopt);
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_SERVFAIL);
}

TEST_F(DnsResponderTest, NameOutsideTheDomainIsRefused) {
  auto reply = ask("www.example.com.", LDNS_RR_TYPE_A, std::nullopt);
  ASSERT_TRUE(reply);
  EXPECT_EQ(ldns_pkt_get_rcode(reply.get()), LDNS_RCODE_REFUSED);
  EXPECT_FALSE(ldns_pkt_aa(reply.get()));
}

TEST_F(DnsResponderTest, OtherNameInTheDomainIsNxdomainAndItsParentsAreNodata) {
  auto nothing = ask("orders.cascade.", LDNS_RR_TYPE_A, std::nullopt);
  ASSERT_TRUE(nothing);
  EXPECT_EQ(ldns_pkt_get_rcode(nothing.get()), LDNS_RCODE_NXDOMAIN);
  auto parent = ask("service.cascade.", LDNS_RR_TYPE_A, std::nullopt);
  ASSERT_TRUE(parent);
  EXPECT_EQ(ldns_pkt_get_rcode(parent.get()), LDNS_RCODE_NOERROR);
  EXPECT_EQ(ldns_pkt_ancount(parent.get()), 0);
}

TEST_F(DnsResponderTest, ApexAnswersItsSoa) {
  auto reply = ask("cascade.", LDNS_RR_TYPE_SOA, std::nullopt);
  ASSERT_TRUE(reply);
  EXPECT_THAT(rdata_of(*reply), ElementsAre("ns.cascade. hostmaster.cascade. 1 3600 600 86400 30"));
}

TEST_F(DnsResponderTest, AddressNameAnswersTheAddressItSpells) {
  EXPECT_THAT(rdata_of(*ask("0a000001.addr.cascade.", LDNS_RR_TYPE_A, std::nullopt)),
              ElementsAre("10.0.0.1"));
  auto other_family = ask("0a000001.addr.cascade.", LDNS_RR_TYPE_AAAA, std::nullopt);
  ASSERT_TRUE(other_family);
  EXPECT_EQ(ldns_pkt_get_rcode(other_family.get()), LDNS_RCODE_NOERROR);
  EXPECT_EQ(ldns_pkt_ancount(other_family.get()), 0);
}

TEST_F(DnsResponderTest, MixedCaseQueryIsAnsweredUnderTheNameAsAsked) {
  auto reply =
      ask("ORDERS.Service.CASCADE.", LDNS_RR_TYPE_A, listed({instance("a", "10.0.0.1:80")}));
  ASSERT_TRUE(reply);
  EXPECT_THAT(rdata_of(*reply), ElementsAre("10.0.0.1"));
  EXPECT_EQ(test_support::text_of(ldns_rr_owner(ldns_rr_list_rr(ldns_pkt_answer(reply.get()), 0))),
            "ORDERS.Service.CASCADE.");
}

std::vector<proto::Instance> sixty_instances() {
  std::vector<proto::Instance> out;
  for (int i = 1; i <= 60; ++i)
    out.push_back(instance("o" + std::to_string(i), "10.0.1." + std::to_string(i) + ":8080"));
  return out;
}

TEST_F(DnsResponderTest, UdpReplyOver512BytesIsCutAndHasTc) {
  const auto lookup = listed(sixty_instances());
  auto cut = ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup, kPlainUdpLimit);
  ASSERT_TRUE(cut);
  EXPECT_LE(reply_.wire.size(), kPlainUdpLimit);
  EXPECT_TRUE(ldns_pkt_tc(cut.get()));
  EXPECT_TRUE(reply_.truncated);
  const auto kept = ldns_pkt_ancount(cut.get());
  EXPECT_GT(kept, 20);
  EXPECT_LT(kept, 60);
  EXPECT_GT(reply_.wire.size() + 16, kPlainUdpLimit) << "as many answers as fit, not fewer";

  auto whole = ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup, kTcpLimit);
  ASSERT_TRUE(whole);
  EXPECT_FALSE(ldns_pkt_tc(whole.get()));
  EXPECT_EQ(ldns_pkt_ancount(whole.get()), 60);
}

TEST_F(DnsResponderTest, EdnsQueryGetsItsSizeAndAnOptRecordBack) {
  const auto lookup = listed(sixty_instances());
  const QueryOptions edns{.edns_udp_size = 4096};
  auto reply = ask("orders.service.cascade.", LDNS_RR_TYPE_A, lookup, kEdnsUdpLimit, edns);
  ASSERT_TRUE(reply);
  EXPECT_FALSE(ldns_pkt_tc(reply.get())) << "60 A records fit in 1232 bytes";
  EXPECT_EQ(ldns_pkt_edns_udp_size(reply.get()), kEdnsUdpLimit);

  auto srv = ask("orders.service.cascade.", LDNS_RR_TYPE_SRV, lookup, kEdnsUdpLimit, edns);
  ASSERT_TRUE(srv);
  EXPECT_TRUE(ldns_pkt_tc(srv.get())) << "60 SRV records and their addresses do not";
  EXPECT_LE(reply_.wire.size(), kEdnsUdpLimit);
  EXPECT_EQ(ldns_pkt_arcount(srv.get()), 0) << "the additional section goes first";
  EXPECT_EQ(ldns_pkt_edns_udp_size(srv.get()), kEdnsUdpLimit) << "the OPT record stays";
}

}  // namespace
}  // namespace cascade::agent::dns
