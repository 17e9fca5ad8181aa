#pragma once
// Where registry lookups that finish on another thread (the Client's I/O
// thread, when the hub answers) wait for the DNS server's thread, which owns
// everything else. A callback holds the mailbox by shared_ptr, not the
// server: a lookup that finishes after the server stopped finds the mailbox
// closed and its answer is dropped, never delivered into a gone object.
//
// Thread-safety: post() from any thread; the rest from the owner thread.

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "cascade/agent/agent_core.hpp"

namespace cascade::agent::dns {

class LookupMailbox {
 public:
  using Delivery = std::pair<std::uint64_t, std::optional<Resolution>>;

  // Throws std::system_error when no eventfd can be had.
  LookupMailbox();
  ~LookupMailbox();
  LookupMailbox(const LookupMailbox&) = delete;
  LookupMailbox& operator=(const LookupMailbox&) = delete;

  // The calling thread becomes the one that takes the deliveries; its own
  // posts (a lookup answered at once, inside the call) wake nothing.
  void adopt() { owner_.store(std::this_thread::get_id()); }
  // Readable when a delivery from another thread (or a wake()) waits.
  int fd() const { return fd_; }
  void post(std::uint64_t ticket, std::optional<Resolution> answer);
  // Wakes the owner thread's poll (to stop it).
  void wake();
  // What was posted so far.
  std::vector<Delivery> take();
  // Makes fd() unreadable until the next post from another thread or wake().
  void clear_wake();
  // Later posts are dropped.
  void close();

 private:
  std::atomic<std::thread::id> owner_{};
  int fd_ = -1;
  std::mutex mu_;
  std::vector<Delivery> deliveries_;  // guarded by mu_
  bool closed_ = false;               // guarded by mu_
};

}  // namespace cascade::agent::dns
