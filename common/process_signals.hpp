#pragma once
// The signals a daemon acts on (SIGTERM, SIGINT, SIGHUP...), taken by sigwait
// in one thread instead of by a handler. A handler runs on whichever thread
// the kernel picks and interrupts the system call that thread was in: a
// ZeroMQ receive, send or getsockopt then throws EINTR, which nothing but the
// poll expects, and the process dies on it. Blocked in every thread, the
// signals interrupt nothing; only sigwait sees them.

#include <signal.h>

#include <atomic>
#include <initializer_list>
#include <thread>

namespace cascade {

// For a library's own thread in a process it does not own (the agent's
// Client inside an application): blocks every signal but the ones a fault
// raises in the faulting thread (SIGSEGV, SIGBUS, SIGFPE, SIGILL, SIGTRAP,
// SIGSYS, SIGABRT), so the application's handlers (SIGTERM, SIGCHLD, a
// profiler's SIGPROF) run on its own threads and never interrupt this one's
// system calls. libzmq does the same for its I/O threads.
void block_async_signals_in_this_thread();

// Blocks `signals` in the calling thread, and so in every thread it starts
// afterwards (threads inherit the mask): construct it first thing in main,
// before anything (ZeroMQ, SQLite, an HTTP server) starts a thread.
class BlockedSignals {
 public:
  explicit BlockedSignals(std::initializer_list<int> signals);

  // Waits until one of the signals is pending and returns it.
  int wait() const;
  bool contains(int signal) const { return sigismember(&set_, signal) == 1; }

 private:
  sigset_t set_{};
};

// For a main thread busy serving: a thread that takes the blocked signals and
// turns them into flags the serving loop reads. `reload_signal` sets `reload`
// (and the thread waits on); any other signal of the set sets `stop` and ends
// it. Destroyed before a stop signal came (an error path), it stops the
// thread itself.
class SignalFlags {
 public:
  SignalFlags(const BlockedSignals& signals, int reload_signal, std::atomic<bool>& stop,
              std::atomic<bool>& reload);
  SignalFlags(const SignalFlags&) = delete;
  SignalFlags& operator=(const SignalFlags&) = delete;
  ~SignalFlags();

 private:
  void run();

  const BlockedSignals& signals_;
  const int reload_signal_;
  std::atomic<bool>& stop_;
  std::atomic<bool>& reload_;
  std::atomic<bool> stopped_{false};
  std::thread thread_;
};

}  // namespace cascade
