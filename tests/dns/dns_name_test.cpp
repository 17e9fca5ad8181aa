// The names the DNS interface serves under its domain (agent/dns/dns_name.hpp).
#include "cascade/agent/dns/dns_name.hpp"

#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>

namespace cascade::agent::dns {
namespace {

DnsName classify(const DnsZone& zone, const std::string& name) {
  RdfPtr rdf(ldns_dname_new_frm_str(name.c_str()));
  EXPECT_TRUE(rdf) << name;
  return zone.classify(*rdf);
}

// The service `name` names under `zone`, if it names one.
std::optional<proto::ServiceKey> service_of(const DnsZone& zone, const std::string& name) {
  const auto classified = classify(zone, name);
  if (const auto* service = std::get_if<ServiceName>(&classified)) return service->key;
  return std::nullopt;
}

std::optional<proto::ServiceKey> key(const std::string& name,
                                     const std::string& group = "default") {
  return proto::ServiceKey{name, group};
}

TEST(DnsNameTest, ServiceNameIsEveryLabelBeforeTheKeywordInTheDefaultGroup) {
  const DnsZone zone("cascade");
  EXPECT_EQ(service_of(zone, "orders.service.cascade."), key("orders"));
  EXPECT_EQ(service_of(zone, "billing.v2.service.cascade."), key("billing.v2"))
      << "service names may contain dots";
  EXPECT_EQ(service_of(zone, "service.service.cascade."), key("service"));
}

TEST(DnsNameTest, GroupSchemeTakesTheLabelBeforeGroupAsTheGroup) {
  const DnsZone zone("cascade");
  EXPECT_EQ(service_of(zone, "orders.canary.group.cascade."), key("orders", "canary"));
  EXPECT_EQ(service_of(zone, "billing.v2.canary.group.cascade."), key("billing.v2", "canary"));
}

TEST(DnsNameTest, NamesAreCaseInsensitiveAndServicesLowerCased) {
  const DnsZone zone("Cascade");
  EXPECT_EQ(service_of(zone, "ORDERS.Service.CASCADE."), key("orders"));
  EXPECT_EQ(service_of(zone, "Orders.Canary.GROUP.cascade."), key("orders", "canary"));
}

TEST(DnsNameTest, MultiLabelDomainAndTrailingDotAreAccepted) {
  const DnsZone zone("svc.example.");
  EXPECT_EQ(service_of(zone, "orders.service.svc.example."), key("orders"));
  EXPECT_TRUE(std::holds_alternative<OutsideZone>(classify(zone, "orders.service.example.")));
  EXPECT_TRUE(std::holds_alternative<ZoneApex>(classify(zone, "SVC.example.")));
}

TEST(DnsNameTest, NamesOutsideTheDomainAreOutside) {
  const DnsZone zone("cascade");
  EXPECT_TRUE(std::holds_alternative<OutsideZone>(classify(zone, "example.com.")));
  EXPECT_TRUE(std::holds_alternative<OutsideZone>(classify(zone, "orders.service.consul.")));
  EXPECT_TRUE(std::holds_alternative<OutsideZone>(classify(zone, ".")));
  EXPECT_TRUE(std::holds_alternative<OutsideZone>(classify(zone, "notcascade.")));
}

TEST(DnsNameTest, NamesWithNamesBelowThemAreEmptyNonTerminals) {
  const DnsZone zone("cascade");
  for (const auto* name :
       {"service.cascade.", "group.cascade.", "canary.group.cascade.", "addr.cascade."})
    EXPECT_TRUE(std::holds_alternative<EmptyNonTerminal>(classify(zone, name))) << name;
}

TEST(DnsNameTest, OtherNamesInTheDomainNameNothing) {
  const DnsZone zone("cascade");
  for (const auto* name : {"orders.cascade.", "orders.node.cascade.", "zz.addr.cascade.",
                           "0a00000g.addr.cascade.", "x.0a000001.addr.cascade."})
    EXPECT_TRUE(std::holds_alternative<NoSuchName>(classify(zone, name))) << name;
}

TEST(DnsNameTest, AddressNamesRoundTripForBothFamilies) {
  const DnsZone zone("cascade");
  for (const auto* text : {"10.0.0.7", "fd00::7"}) {
    const auto ip = parse_ip(text);
    ASSERT_TRUE(ip);
    const auto name = zone.address_name(*ip);
    const auto classified = zone.classify(*name);
    const auto* address = std::get_if<AddressName>(&classified);
    ASSERT_NE(address, nullptr) << text;
    EXPECT_EQ(address->ip.family, ip->family);
    EXPECT_EQ(std::memcmp(address->ip.bytes, ip->bytes, ip->size()), 0);
  }
  char* text = ldns_rdf2str(zone.address_name(*parse_ip("10.0.0.7")).get());
  EXPECT_STREQ(text, "0a000007.addr.cascade.");
  std::free(text);
}

TEST(DnsNameTest, ADomainThatIsNoDnsNameIsRefusedAtConstruction) {
  EXPECT_THROW(DnsZone("."), std::invalid_argument);
  EXPECT_THROW(DnsZone(std::string(64, 'a')), std::invalid_argument) << "a label over 63 bytes";
}

}  // namespace
}  // namespace cascade::agent::dns
