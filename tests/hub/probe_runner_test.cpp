// The probe runner against real sockets on loopback: a listening port
// accepts, a bound but silent port refuses, an unparseable address tells
// nothing. (What the outcomes mean is hub/liveness_probes.hpp's business.)

#include "cascade/hub/probe_runner.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <map>
#include <string>
#include <thread>

#include "cascade/tests/common/refusing_port.hpp"

namespace cascade::hub {
namespace {

// A loopback port that listens (an instance that is alive).
class ListeningPort {
 public:
  ListeningPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof addr;
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    ::listen(fd_, 256);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    address_ = "127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }
  ~ListeningPort() { ::close(fd_); }
  const std::string& address() const { return address_; }

 private:
  int fd_;
  std::string address_;
};

std::string host_port(const std::string& endpoint) {
  return endpoint.substr(std::string("tcp://").size());
}

std::map<std::string, ProbeOutcome> run(ProbeRunner& runner, std::vector<ProbeRequest> requests) {
  const auto expected = requests.size();
  runner.submit(std::move(requests));
  std::map<std::string, ProbeOutcome> outcomes;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (outcomes.size() < expected && std::chrono::steady_clock::now() < deadline) {
    for (const auto& result : runner.take_results())
      outcomes[result.address] = result.outcome;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return outcomes;
}

TEST(ProbeTarget, ReadsTheHostAndPortOfEveryRegisteredAddressForm) {
  EXPECT_EQ(probe_target("10.0.0.1:80")->host, "10.0.0.1");
  EXPECT_EQ(probe_target("10.0.0.1:80")->port, 80);
  EXPECT_EQ(probe_target("[::1]:8080")->host, "::1");
  EXPECT_EQ(probe_target("http://10.0.0.2:8081/health")->port, 8081);
  EXPECT_EQ(probe_target("grpc://[fe80::1]:9000")->host, "fe80::1");
  for (const auto* bad : {"10.0.0.1", "10.0.0.1:", "10.0.0.1:0", "10.0.0.1:65536", ":80", "::1:80",
                          "[::1]80", "host:port"})
    EXPECT_FALSE(probe_target(bad)) << bad;
}

TEST(ProbeRunner, AListeningPortAcceptsAndABoundSilentPortRefuses) {
  ListeningPort alive;
  test_support::RefusingPort dead;
  ProbeRunner runner({});
  const auto outcomes = run(runner, {{"a", alive.address()},
                                     {"d", host_port(dead.endpoint())},
                                     {"x", "not-an-address"},
                                     {"n", "db.example:5432"}});
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(outcomes.at(alive.address()), ProbeOutcome::kAccepted);
  EXPECT_EQ(outcomes.at(host_port(dead.endpoint())), ProbeOutcome::kRefused);
  EXPECT_EQ(outcomes.at("not-an-address"), ProbeOutcome::kNoAnswer);
  EXPECT_EQ(outcomes.at("db.example:5432"), ProbeOutcome::kNoAnswer) << "no DNS in the prober";
}

TEST(ProbeRunner, ManyProbesAtOnceAllGetAnAnswer) {
  ListeningPort alive;
  ProbeRunner runner({Duration{1000}, /*max_concurrent=*/8});
  std::vector<ProbeRequest> requests;
  for (int i = 0; i < 50; ++i)
    requests.push_back(
        {"n" + std::to_string(i), "http://" + alive.address() + "/" + std::to_string(i)});
  const auto outcomes = run(runner, requests);
  ASSERT_EQ(outcomes.size(), 50u);
  for (const auto& [address, outcome] : outcomes)
    EXPECT_EQ(outcome, ProbeOutcome::kAccepted) << address;
}

}  // namespace
}  // namespace cascade::hub
