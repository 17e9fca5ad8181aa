// cascade-agent --dns with the real dig against real hubs on loopback: A,
// SRV and TXT answers, NXDOMAIN, a list too large for UDP that dig fetches
// again over TCP, instances leaving the answers within a couple of beats,
// and a service of another datacenter answered through the upper tier.
// Registered addresses are made up (10.x) and never contacted: every packet
// goes to 127.0.0.1.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "cascade/tests/integration/cluster.hpp"

namespace cascade::integration {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

constexpr const char* kDig = "/usr/bin/dig";
// A change reaches the DNS agent with its next beat or a push: two beats,
// plus dig's start-up and a loaded 2-core machine's scheduling.
constexpr Millis kSchedulingMargin{500};

// The non-empty lines of `text`.
std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(line);
  return out;
}

class IntegrationDns : public ClusterTest {
 protected:
  void SetUp() override {
    if (!std::filesystem::exists(kDig))
      GTEST_SKIP() << kDig
                   << " is missing: install dnsutils (apt-get install dnsutils) to run "
                      "the DNS integration tests";
  }

  // An agent answering DNS for `hub_endpoint`'s registry; remembers its port.
  void start_dns_agent(const std::string& hub_endpoint) {
    auto& agent = start_agent("dns-agent", {"--hub", hub_endpoint, "--id", "dns-agent", "--dns",
                                            "127.0.0.1:0", "--dns-ttl-seconds", "5"});
    const auto line = wait_for_stdout_line(agent, "dns listening on ");
    ASSERT_TRUE(line) << "the agent never said where it listens";
    port_ = line->substr(line->rfind(':') + 1);
  }

  // dig's output for `args` asked of the DNS agent.
  std::string dig(std::vector<std::string> args) {
    std::vector<std::string> all = {"@127.0.0.1", "-p", port_, "+time=5", "+tries=1"};
    all.insert(all.end(), args.begin(), args.end());
    Process& p = spawn(kDig, std::move(all), "dig");
    const auto status = p.wait_for(kPatience);
    EXPECT_TRUE(status && status->exited_with(0))
        << p.command_line() << (status ? status->describe() : " did not finish") << "\n"
        << p.err() << p.out();
    if (!status) p.kill_and_wait();
    return p.out();
  }
  std::vector<std::string> dig_short(const std::string& name, const std::string& type,
                                     std::vector<std::string> more = {}) {
    more.insert(more.begin(), {name, type, "+short"});
    return lines_of(dig(std::move(more)));
  }
  // Polls until `name` answers `type` with exactly `count` records.
  bool wait_for_records(const std::string& name, const std::string& type, std::size_t count) {
    return poll_until([&] { return dig_short(name, type, {"+tcp"}).size() == count; }, kPatience,
                      Millis{20});
  }

  std::string port_;
};

TEST_F(IntegrationDns, ServiceIsAnsweredWithARecordsSrvAndTxt) {
  const auto hub = start_hub();
  start_provider(hub.endpoint, "orders-1", "orders=10.0.0.1:8080,zone=dc1,meta.build=abc123");
  start_provider(hub.endpoint, "orders-2", "orders=10.0.0.2:9090,weight=30,zone=dc1");
  start_dns_agent(hub.endpoint);
  ASSERT_TRUE(wait_for_records("orders.service.cascade", "A", 2));

  EXPECT_THAT(dig_short("orders.service.cascade", "A"),
              UnorderedElementsAre("10.0.0.1", "10.0.0.2"));
  EXPECT_THAT(dig_short("orders.service.cascade", "A", {"+tcp"}),
              UnorderedElementsAre("10.0.0.1", "10.0.0.2"));
  EXPECT_THAT(dig_short("orders.service.cascade", "SRV"),
              UnorderedElementsAre("0 100 8080 0a000001.addr.cascade.",
                                   "0 30 9090 0a000002.addr.cascade."));
  const auto srv = dig({"orders.service.cascade", "SRV", "+noall", "+additional"});
  EXPECT_THAT(srv, HasSubstr("0a000001.addr.cascade.\t5\tIN\tA\t10.0.0.1"));
  EXPECT_THAT(srv, HasSubstr("0a000002.addr.cascade.\t5\tIN\tA\t10.0.0.2"));
  EXPECT_THAT(dig_short("0a000002.addr.cascade", "A"), ElementsAre("10.0.0.2"));
  EXPECT_THAT(dig_short("orders.service.cascade", "TXT"),
              UnorderedElementsAre("\"id=10.0.0.1:8080\" \"address=10.0.0.1:8080\" \"zone=dc1\" "
                                   "\"tier=0\" \"weight=100\" \"health=ok\" \"build=abc123\"",
                                   "\"id=10.0.0.2:9090\" \"address=10.0.0.2:9090\" \"zone=dc1\" "
                                   "\"tier=0\" \"weight=30\" \"health=ok\""));
  const auto answer = dig({"ORDERS.Service.Cascade", "A", "+noall", "+answer", "+comments"});
  EXPECT_THAT(answer, HasSubstr("status: NOERROR"));
  EXPECT_THAT(answer, HasSubstr("flags: qr aa rd;"));
  EXPECT_THAT(answer, HasSubstr("ORDERS.Service.Cascade.\t5\tIN\tA\t10.0.0."))
      << "case-insensitive, answered under the name as asked, with the configured TTL";
}

TEST_F(IntegrationDns, UnknownServiceIsNxdomainAndOtherDomainsAreRefused) {
  const auto hub = start_hub();
  start_dns_agent(hub.endpoint);
  const auto unknown = dig({"nosuch.service.cascade", "A", "+tcp"});
  EXPECT_THAT(unknown, HasSubstr("status: NXDOMAIN"));
  EXPECT_THAT(unknown, HasSubstr("cascade.\t\t5\tIN\tSOA\tns.cascade. hostmaster.cascade."));
  EXPECT_THAT(dig({"www.example.com", "A"}), HasSubstr("status: REFUSED"));
}

TEST_F(IntegrationDns, SixtyInstancesAreCutOverUdpAndDigGetsThemAllOverTcp) {
  const auto hub = start_hub();
  std::vector<std::string> args = {"--hub", hub.endpoint, "--id", "big-provider"};
  std::set<std::string> addresses;
  for (int i = 1; i <= 60; ++i) {
    const auto ip = "10.0.1." + std::to_string(i);
    args.insert(args.end(), {"--register", "big=" + ip + ":8080"});
    addresses.insert(ip);
  }
  start_agent("big-provider", args);
  start_dns_agent(hub.endpoint);
  ASSERT_TRUE(wait_for_records("big.service.cascade", "A", 60));

  // Without EDNS0 the UDP limit is 512 bytes: TC set, fewer answers...
  const auto cut = dig({"big.service.cascade", "A", "+noedns", "+notcp", "+ignore"});
  EXPECT_THAT(cut, HasSubstr("flags: qr aa tc rd;"));
  EXPECT_THAT(cut, ::testing::ContainsRegex("ANSWER: [1-5]?[0-9],"));
  // ...and dig, seeing TC, asks again over TCP and gets every address.
  const auto retried = dig_short("big.service.cascade", "A", {"+noedns"});
  EXPECT_EQ(std::set<std::string>(retried.begin(), retried.end()), addresses);
  EXPECT_EQ(retried.size(), 60u);
  // SRV with EDNS0 (dig advertises 1232 bytes) does not fit either.
  EXPECT_THAT(dig({"big.service.cascade", "SRV", "+notcp", "+ignore"}),
              HasSubstr("flags: qr aa tc rd;"));
  EXPECT_EQ(dig_short("big.service.cascade", "SRV").size(), 60u);
}

TEST_F(IntegrationDns, InstanceOutOfServiceOrDeregisteredLeavesTheAnswerWithinTwoBeats) {
  const auto hub = start_hub();
  start_provider(hub.endpoint, "orders-1", "orders=10.0.0.1:8080");
  start_provider(hub.endpoint, "orders-2", "orders=10.0.0.2:8080");
  auto& third = start_provider(hub.endpoint, "orders-3", "orders=10.0.0.3:8080");
  start_dns_agent(hub.endpoint);
  ASSERT_TRUE(wait_for_records("orders.service.cascade", "A", 3));

  const auto marked =
      ctl({"--hub", hub.endpoint, "mark-out-of-service", "orders", "10.0.0.2:8080"});
  ASSERT_TRUE(marked.status.exited_with(0)) << marked.err;
  const auto marked_at = SteadyClock::now();
  ASSERT_TRUE(wait_for_records("orders.service.cascade", "A", 2));
  EXPECT_LE(elapsed_since(marked_at), 2 * kBeat + kSchedulingMargin);
  EXPECT_THAT(dig_short("orders.service.cascade", "A"),
              UnorderedElementsAre("10.0.0.1", "10.0.0.3"));

  third.signal(SIGTERM);  // deregisters
  ASSERT_TRUE(third.wait_for(kPatience));
  const auto deregistered_at = SteadyClock::now();
  ASSERT_TRUE(wait_for_records("orders.service.cascade", "A", 1));
  EXPECT_LE(elapsed_since(deregistered_at), 2 * kBeat + kSchedulingMargin);
  EXPECT_THAT(dig_short("orders.service.cascade", "A"), ElementsAre("10.0.0.1"));
}

TEST_F(IntegrationDns, ServiceOfAnotherDatacenterIsAnsweredThroughTheUpperTier) {
  const auto l2 = start_hub({.id = "l2", .lease = Millis{1200}, .extra = {"--tier", "2"}});
  const auto dc1 = start_hub({.id = "dc1", .extra = {"--zone", "dc1", "--upstream", l2.endpoint}});
  const auto dc2 = start_hub({.id = "dc2", .extra = {"--zone", "dc2", "--upstream", l2.endpoint}});
  start_provider(dc2.endpoint, "pay-dc2", "pay=10.2.0.1:8443,zone=dc2");
  start_dns_agent(dc1.endpoint);

  ASSERT_TRUE(wait_for_records("pay.service.cascade", "A", 1))
      << "the dc1 agent never found dc2's provider";
  EXPECT_THAT(dig_short("pay.service.cascade", "A"), ElementsAre("10.2.0.1"));
  EXPECT_THAT(dig_short("pay.service.cascade", "SRV"),
              ElementsAre("2 100 8443 0a020001.addr.cascade."))
      << "priority = the tier whose registry holds it";
  EXPECT_THAT(dig_short("pay.service.cascade", "TXT").front(), HasSubstr("\"tier=2\""));
}

}  // namespace
}  // namespace cascade::integration
