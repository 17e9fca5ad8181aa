#include "cascade/common/process_signals.hpp"

#include <pthread.h>

#include <cassert>

namespace cascade {
namespace {

// A signal of the set that stops (0: none).
int stop_signal(const BlockedSignals& signals, int reload_signal) {
  for (int signal = 1; signal < NSIG; ++signal)
    if (signal != reload_signal && signals.contains(signal)) return signal;
  return 0;
}

}  // namespace

void block_async_signals_in_this_thread() {
  sigset_t set;
  sigfillset(&set);
  for (const int fault : {SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP, SIGSYS, SIGABRT})
    sigdelset(&set, fault);
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

BlockedSignals::BlockedSignals(std::initializer_list<int> signals) {
  sigemptyset(&set_);
  for (const int signal : signals)
    sigaddset(&set_, signal);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

int BlockedSignals::wait() const {
  int signal = 0;
  while (sigwait(&set_, &signal) != 0) {
  }
  return signal;
}

SignalFlags::SignalFlags(const BlockedSignals& signals, int reload_signal, std::atomic<bool>& stop,
                         std::atomic<bool>& reload)
    : signals_(signals), reload_signal_(reload_signal), stop_(stop), reload_(reload) {
  assert(signals.contains(reload_signal) && stop_signal(signals, reload_signal) != 0);
  thread_ = std::thread([this] { run(); });
}

SignalFlags::~SignalFlags() {
  // Directed at the waiting thread, a stop signal of the set reaches its
  // sigwait (every thread blocks it). Sent to a thread that has already
  // returned but is not yet joined, it is discarded.
  if (!stopped_.load())
    pthread_kill(thread_.native_handle(), stop_signal(signals_, reload_signal_));
  thread_.join();
}

void SignalFlags::run() {
  for (;;) {
    const int signal = signals_.wait();
    if (signal == reload_signal_) {
      reload_.store(true);
      continue;
    }
    stopped_.store(true);
    stop_.store(true);
    return;
  }
}

}  // namespace cascade
