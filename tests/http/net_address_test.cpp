#include "cascade/common/net_address.hpp"

#include <gtest/gtest.h>

namespace cascade {
namespace {

SocketAddress address(std::string_view text) {
  auto parsed = SocketAddress::parse(text);
  if (auto* error = std::get_if<std::string>(&parsed)) ADD_FAILURE() << *error;
  return std::get<SocketAddress>(parsed);
}

std::string error_of(std::string_view text) {
  auto parsed = SocketAddress::parse(text);
  auto* error = std::get_if<std::string>(&parsed);
  return error ? *error : "";
}

TEST(SocketAddressTest, ParsesIpv4AndBracketedIpv6) {
  EXPECT_EQ(address("127.0.0.1:8500").to_string(), "127.0.0.1:8500");
  EXPECT_EQ(address("[::1]:8600").to_string(), "[::1]:8600");
  EXPECT_EQ(address("0.0.0.0:0").port(), 0);
}

TEST(SocketAddressTest, LoopbackIsTheWhole127RangeAndColonColonOne) {
  EXPECT_TRUE(address("127.0.0.1:1").is_loopback());
  EXPECT_TRUE(address("127.8.9.10:1").is_loopback());
  EXPECT_TRUE(address("[::1]:1").is_loopback());
  EXPECT_FALSE(address("0.0.0.0:1").is_loopback());
  EXPECT_FALSE(address("192.0.2.1:1").is_loopback());
  EXPECT_FALSE(address("[::]:1").is_loopback());
}

TEST(SocketAddressTest, BadAddressesSayWhatIsWrong) {
  EXPECT_NE(error_of("8500").find("HOST:PORT"), std::string::npos);
  EXPECT_NE(error_of("localhost:8500").find("numeric"), std::string::npos);
  EXPECT_NE(error_of("127.0.0.1:65536").find("port"), std::string::npos);
  EXPECT_NE(error_of("127.0.0.1:").find("port"), std::string::npos);
  EXPECT_NE(error_of("127.0.0.1:80x").find("port"), std::string::npos);
}

Cidr cidr(std::string_view text) {
  auto parsed = Cidr::parse(text);
  if (auto* error = std::get_if<std::string>(&parsed)) ADD_FAILURE() << *error;
  return std::get<Cidr>(parsed);
}

TEST(CidrTest, ContainsAddressesInsideItsPrefixOnly) {
  const auto net = cidr("10.1.0.0/16");
  EXPECT_TRUE(net.contains(address("10.1.200.3:5").get()));
  EXPECT_FALSE(net.contains(address("10.2.0.1:5").get()));
  EXPECT_FALSE(net.contains(address("[::1]:5").get()));
  const auto odd = cidr("192.0.2.128/25");
  EXPECT_TRUE(odd.contains(address("192.0.2.200:1").get()));
  EXPECT_FALSE(odd.contains(address("192.0.2.127:1").get()));
  EXPECT_TRUE(cidr("0.0.0.0/0").contains(address("203.0.113.9:1").get()));
  EXPECT_TRUE(cidr("192.0.2.7").contains(address("192.0.2.7:1").get()));
  EXPECT_FALSE(cidr("192.0.2.7").contains(address("192.0.2.8:1").get()));
  EXPECT_TRUE(cidr("fd00::/8").contains(address("[fd12::1]:1").get()));
}

TEST(CidrTest, AnIpv4PeerOnADualStackSocketMatchesIpv4Ranges) {
  const auto mapped = address("[::ffff:10.1.2.3]:1");
  EXPECT_TRUE(cidr("10.0.0.0/8").contains(mapped.get()));
  EXPECT_TRUE(SocketAddress::from(mapped.get(), mapped.length).is_loopback() == false);
}

TEST(CidrTest, BadRangesAreRefused) {
  EXPECT_TRUE(std::holds_alternative<std::string>(Cidr::parse("10.0.0.0/33")));
  EXPECT_TRUE(std::holds_alternative<std::string>(Cidr::parse("ten/8")));
  EXPECT_TRUE(std::holds_alternative<std::string>(Cidr::parse("10.0.0.0/")));
}

}  // namespace
}  // namespace cascade
