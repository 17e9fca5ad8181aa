// The agent library inside an application that handles signals: the
// application's SIGUSR1 handler (installed without SA_RESTART, as a
// profiler's SIGPROF or a daemon's SIGCHLD handler often is) must never run on
// the Client's I/O thread, where it would interrupt a ZeroMQ call, which
// throws EINTR and ends the process. A program of its own: it changes the
// process's signal disposition and masks.

#include <gtest/gtest.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "cascade/agent/client.hpp"
#include "cascade/tests/agent/client_with_hub.hpp"
#include "cascade/tests/common/builders.hpp"

namespace cascade::agent {
namespace {

std::atomic<int> g_handled{0};
extern "C" void count_signal(int) {
  g_handled.fetch_add(1);
}

void set_usr1_blocked(bool blocked) {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGUSR1);
  pthread_sigmask(blocked ? SIG_BLOCK : SIG_UNBLOCK, &set, nullptr);
}

// The hub's thread (started by the fixture) and this test's thread block
// SIGUSR1: the Client's I/O thread is the only one left that could take it.
class ClientInASignalledApplication : public testing::ClientWithHubTest {
 protected:
  static bool block_before_the_hub_starts() {
    set_usr1_blocked(true);
    return true;
  }
  ClientInASignalledApplication()
      : ClientWithHubTest((block_before_the_hub_starts(), "signalled")) {}

  void SetUp() override {
    struct sigaction action {};
    action.sa_handler = count_signal;
    sigemptyset(&action.sa_mask);
    action.sa_flags = 0;  // no SA_RESTART: an interrupted call fails with EINTR
    sigaction(SIGUSR1, &action, &previous_);
  }
  void TearDown() override { sigaction(SIGUSR1, &previous_, nullptr); }

  // A Client whose I/O thread starts with SIGUSR1 unblocked, as it would in an
  // application that never blocks it.
  std::unique_ptr<Client> client_started_unblocked(const std::string& id) {
    set_usr1_blocked(false);
    auto client = std::make_unique<Client>(options(id));
    set_usr1_blocked(true);
    return client;
  }

  struct sigaction previous_ {};
};

TEST_F(ClientInASignalledApplication, SignalsSentWhileItBeatsNeverReachItsThread) {
  auto provider = client_started_unblocked("provider");
  provider->register_instance(test_support::reg("orders", "o1", "10.0.0.1:80"));
  auto consumer = client_started_unblocked("consumer");
  ASSERT_TRUE(testing::eventually([&] {
    const auto r = consumer->resolve(orders);
    return r && r->instances.size() == 1;
  }));

  for (int i = 0; i < 3000; ++i) {
    ::kill(::getpid(), SIGUSR1);
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  // Pending, not handled: no thread of the library takes it.
  EXPECT_EQ(g_handled.load(), 0);
  provider->register_instance(test_support::reg("orders", "o2", "10.0.0.2:80"));
  EXPECT_TRUE(testing::eventually([&] {
    const auto r = consumer->resolve(orders);
    return r && r->instances.size() == 2;
  })) << "a client stopped beating after the signals";
}

}  // namespace
}  // namespace cascade::agent
