// Which endpoints count as loopback (plain text allowed without --insecure),
// and the glob matching scopes rely on.
#include "cascade/common/endpoint_security.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cascade/common/access.hpp"

namespace cascade {
namespace {

TEST(LoopbackEndpoint, OnlyThisHostCountsAsLoopback) {
  for (const char* endpoint :
       {"tcp://127.0.0.1:7400", "tcp://127.1.2.3:*", "tcp://localhost:7400", "tcp://[::1]:7400",
        "tcp://lo:7400", "ipc:///tmp/hub.sock", "inproc://hub", "tcp://10.0.0.1:1;127.0.0.1:7400"})
    EXPECT_TRUE(is_loopback_endpoint(endpoint)) << endpoint;
  for (const char* endpoint :
       {"tcp://*:7400", "tcp://0.0.0.0:7400", "tcp://10.0.0.1:7400", "tcp://[::]:7400",
        "tcp://hub.example:7400", "tcp://127.evil.example:7400", "tcp://eth0:7400",
        "tcp://127.0.0.1", "udp://127.0.0.1:7400", "tcp://127.0.0.1:1;10.0.0.1:7400"})
    EXPECT_FALSE(is_loopback_endpoint(endpoint)) << endpoint;
}

TEST(SecureByDefault, NetworkEndpointWithoutKeysNeedsInsecure) {
  EXPECT_THAT(check_secure_by_default("--listen", "tcp://*:7400", false, false, "--secret-key"),
              ::testing::HasSubstr("--insecure"));
  EXPECT_EQ(check_secure_by_default("--listen", "tcp://*:7400", false, true, "--secret-key"), "");
  EXPECT_EQ(check_secure_by_default("--listen", "tcp://*:7400", true, false, "--secret-key"), "");
  EXPECT_EQ(check_secure_by_default("--listen", "tcp://127.0.0.1:7400", false, false, "k"), "");
}

TEST(GlobMatch, StarQuestionMarkLiteralAndEmpty) {
  using access::glob_match;
  EXPECT_TRUE(glob_match("*", ""));
  EXPECT_TRUE(glob_match("*", "anything"));
  EXPECT_TRUE(glob_match("", ""));
  EXPECT_FALSE(glob_match("", "a"));
  EXPECT_FALSE(glob_match("?", ""));
  EXPECT_TRUE(glob_match("?", "x"));
  EXPECT_FALSE(glob_match("?", "xy"));
  EXPECT_TRUE(glob_match("orders", "orders"));
  EXPECT_FALSE(glob_match("orders", "orders2"));
  EXPECT_TRUE(glob_match("orders-*", "orders-"));
  EXPECT_TRUE(glob_match("*-eu", "pay-eu"));
  EXPECT_TRUE(glob_match("a*b*c", "axxbyyc"));
  EXPECT_FALSE(glob_match("a*b*c", "axxbyy"));
  EXPECT_TRUE(glob_match("svc-?", "svc-1"));
  EXPECT_FALSE(glob_match("svc-?", "svc-12"));
  EXPECT_TRUE(glob_match("**a", "ba"));
  EXPECT_TRUE(glob_match("a*b*c", "aXbYbZc"));
  EXPECT_FALSE(glob_match("a*b*c", "aXbYbZ"));
  EXPECT_TRUE(glob_match("**", "x"));
  EXPECT_TRUE(glob_match("p?y*", "pay"));
}

TEST(ServiceScope, EmptyScopeAllowsEveryService) {
  EXPECT_TRUE(access::ServiceScope{}.allows("x"));
  EXPECT_FALSE(access::ServiceScope({"a*"}).allows("b"));
}

}  // namespace
}  // namespace cascade
