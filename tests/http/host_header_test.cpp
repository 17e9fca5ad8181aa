// Which Host headers name loopback: the test a tokenless loopback read must
// pass, so a page that rebound its DNS name to 127.0.0.1 reads nothing.

#include "cascade/http/host_header.hpp"

#include <gtest/gtest.h>

namespace cascade::http {
namespace {

TEST(HostHeader, LoopbackNamesWithAndWithoutAPortNameLoopback) {
  for (const auto* host : {"localhost", "LocalHost:7480", "127.0.0.1", "127.0.0.1:7480",
                           "127.3.2.1:80", "[::1]", "[::1]:7480"})
    EXPECT_TRUE(host_names_loopback(host)) << host;
}

TEST(HostHeader, OtherNamesAndAddressesDoNot) {
  for (const auto* host :
       {"attacker.example", "attacker.example:7480", "localhost.attacker.example",
        "127.0.0.1.attacker.example", "127.1", "10.0.0.1:7480", "[::2]:7480", "[fe80::1]",
        "0.0.0.0:7480", "localhost.", "sub.localhost"})
    EXPECT_FALSE(host_names_loopback(host)) << host;
}

TEST(HostHeader, MalformedOrMissingHeadersDoNot) {
  for (const auto* host : {"", ":7480", "localhost:", "localhost:port", "localhost:123456", "[::1",
                           "[::1]x", "[::1]:", "::1", "::1:7480", "localhost:80:80"})
    EXPECT_FALSE(host_names_loopback(host)) << host;
}

}  // namespace
}  // namespace cascade::http
