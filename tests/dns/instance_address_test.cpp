// The host and port DNS takes from an instance's free-text address.
#include "cascade/agent/dns/instance_address.hpp"

#include <gtest/gtest.h>

namespace cascade::agent::dns {
namespace {

TEST(DnsInstanceAddressTest, NumericHostsWithPorts) {
  const auto v4 = parse_instance_host("10.0.0.7:8080");
  ASSERT_TRUE(v4);
  ASSERT_TRUE(v4->ip);
  EXPECT_EQ(v4->ip->family, AF_INET);
  EXPECT_EQ(v4->port, 8080);
  const auto v6 = parse_instance_host("[fd00::7]:9090");
  ASSERT_TRUE(v6);
  ASSERT_TRUE(v6->ip);
  EXPECT_EQ(v6->ip->family, AF_INET6);
  EXPECT_EQ(v6->host, "fd00::7");
  EXPECT_EQ(v6->port, 9090);
}

TEST(DnsInstanceAddressTest, HostsWithoutPorts) {
  const auto bare_v6 = parse_instance_host("fd00::7");
  ASSERT_TRUE(bare_v6);
  EXPECT_TRUE(bare_v6->ip);
  EXPECT_FALSE(bare_v6->port);
  const auto bare_name = parse_instance_host("orders.internal");
  ASSERT_TRUE(bare_name);
  EXPECT_FALSE(bare_name->ip);
  EXPECT_FALSE(bare_name->port);
}

TEST(DnsInstanceAddressTest, UrlsGiveTheirAuthority) {
  const auto url = parse_instance_host("https://user@orders.internal:8443/api?x=1");
  ASSERT_TRUE(url);
  EXPECT_EQ(url->host, "orders.internal");
  EXPECT_FALSE(url->ip);
  EXPECT_EQ(url->port, 8443);
  const auto v6 = parse_instance_host("http://[fd00::1]:80/");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->ip);
  EXPECT_EQ(v6->port, 80);
}

TEST(DnsInstanceAddressTest, AddressesDnsCannotCarryGiveNoHost) {
  for (const auto* bad : {"", ":80", "host:0", "host:65536", "host:http", "[fd00::1", "[fd00::1]x",
                          "two words:80", "host:80:90x"})
    EXPECT_FALSE(parse_instance_host(bad)) << bad;
}

}  // namespace
}  // namespace cascade::agent::dns
