// BlockedSignals and SignalFlags (common/process_signals.hpp), with SIGUSR1
// and SIGUSR2 in place of SIGTERM and SIGHUP. Their own test program: the mask
// they set is the process's from then on.

#include "cascade/common/process_signals.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <thread>

namespace cascade {
namespace {

bool becomes_true(const std::atomic<bool>& flag) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!flag.load()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return true;
}

TEST(SignalFlags, ReloadSignalSetsReloadAndAnotherSignalOfTheSetSetsStop) {
  const BlockedSignals signals({SIGUSR1, SIGUSR2});
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  const SignalFlags flags(signals, SIGUSR2, stop, reload);

  ::kill(::getpid(), SIGUSR2);
  EXPECT_TRUE(becomes_true(reload));
  EXPECT_FALSE(stop.load());
  reload = false;
  ::kill(::getpid(), SIGUSR2);  // the thread waits on after a reload
  EXPECT_TRUE(becomes_true(reload));

  ::kill(::getpid(), SIGUSR1);
  EXPECT_TRUE(becomes_true(stop));
}

TEST(SignalFlags, DestroyedBeforeAnyStopSignalEndsItsThread) {
  const BlockedSignals signals({SIGUSR1, SIGUSR2});
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  { const SignalFlags flags(signals, SIGUSR2, stop, reload); }  // hangs if the thread waits on
  EXPECT_FALSE(reload.load());
}

TEST(BlockedSignals, WaitReturnsTheSignalThatCame) {
  const BlockedSignals signals({SIGUSR1, SIGUSR2});
  EXPECT_TRUE(signals.contains(SIGUSR1));
  EXPECT_FALSE(signals.contains(SIGTERM));
  ::kill(::getpid(), SIGUSR2);  // pending: blocked in this thread, the only one
  EXPECT_EQ(signals.wait(), SIGUSR2);
}

}  // namespace
}  // namespace cascade
