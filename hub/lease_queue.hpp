#pragma once
// Leases ordered by deadline, for O(1) renewal and O(expired) expiry.
//
// A hub grants deadlines in non-decreasing order (`now` only moves forward,
// and while a stretched lease comes down it grants at least last_deadline():
// HubCore::lease_deadline), so a renewed lease always belongs at the back:
// renewal is an unlink and a link at the back, and the front is always the
// next lease to expire. Expiry
// walks from the front and stops at the first live lease, so it never scans
// what is still alive. (An insertion with an earlier deadline than the back is
// still placed correctly, by walking back from the end; it does not happen in
// steady state.)
//
// Intrusive: the queue is threaded through a LeaseHook that the leaseholder
// derives from, so a lease costs no allocation of its own (a hub holds one per
// node: at a million nodes, a list node each was 48 MB). The holder must stay
// where it is while queued (heap-allocated or in a node-based container) and
// must be removed before it is destroyed; the queue never owns it.

#include <cassert>
#include <cstddef>
#include <optional>
#include <utility>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

// A place in one LeaseQueue. Not copyable: the queue points at it.
class LeaseHook {
 public:
  LeaseHook() = default;
  LeaseHook(const LeaseHook&) = delete;
  LeaseHook& operator=(const LeaseHook&) = delete;
  ~LeaseHook() = default;

  bool queued() const { return next_ != this; }
  MonoTime lease_deadline() const { return deadline_; }

 private:
  template <typename T>
  friend class LeaseQueue;
  LeaseHook* prev_ = nullptr;  // towards the front; nullptr at the front
  LeaseHook* next_ = this;     // towards the back; nullptr at the back, `this` when not queued
  MonoTime deadline_{};
};

// Leases of holders of type T, which derives from LeaseHook.
template <typename T>
class LeaseQueue {
 public:
  LeaseQueue() = default;
  LeaseQueue(const LeaseQueue&) = delete;  // two queues would share the hooks
  LeaseQueue& operator=(const LeaseQueue&) = delete;
  LeaseQueue(LeaseQueue&& other) noexcept
      : front_(std::exchange(other.front_, nullptr)),
        back_(std::exchange(other.back_, nullptr)),
        size_(std::exchange(other.size_, 0)) {}
  LeaseQueue& operator=(LeaseQueue&&) = delete;
  ~LeaseQueue() = default;

  // Queues `holder`, which must not be queued already.
  void add(T& holder, MonoTime deadline) {
    LeaseHook& h = holder;
    assert(!h.queued());
    h.deadline_ = deadline;
    link_before(h, position_for(deadline));
  }

  void renew(T& holder, MonoTime deadline) {
    remove(holder);
    add(holder, deadline);
  }

  // Safe on a holder that is not queued (its lease already expired).
  void remove(T& holder) {
    LeaseHook& h = holder;
    if (!h.queued()) return;
    (h.prev_ != nullptr ? h.prev_->next_ : front_) = h.next_;
    (h.next_ != nullptr ? h.next_->prev_ : back_) = h.prev_;
    h.prev_ = nullptr;
    h.next_ = &h;
    --size_;
  }

  std::optional<MonoTime> next_deadline() const {
    if (front_ == nullptr) return std::nullopt;
    return front_->deadline_;
  }
  // The latest deadline queued.
  std::optional<MonoTime> last_deadline() const {
    if (back_ == nullptr) return std::nullopt;
    return back_->deadline_;
  }

  // Calls on_expired(holder) for leases whose deadline <= now, oldest first,
  // at most `max` of them; each is unqueued before its call, so the callback
  // may queue it again or destroy it. Returns how many expired.
  template <typename Fn>
  std::size_t expire(MonoTime now, std::size_t max, Fn&& on_expired) {
    std::size_t n = 0;
    while (n < max && front_ != nullptr && front_->deadline_ <= now) {
      T& holder = static_cast<T&>(*front_);
      remove(holder);
      on_expired(holder);
      ++n;
    }
    return n;
  }

  std::size_t size() const { return size_; }

 private:
  // The hook before which a lease with `deadline` keeps the queue sorted
  // (nullptr: the back).
  LeaseHook* position_for(MonoTime deadline) const {
    LeaseHook* pos = nullptr;
    for (LeaseHook* prev = back_; prev != nullptr && prev->deadline_ > deadline; prev = prev->prev_)
      pos = prev;
    return pos;
  }

  void link_before(LeaseHook& h, LeaseHook* pos) {
    LeaseHook* prev = pos != nullptr ? pos->prev_ : back_;
    h.prev_ = prev;
    h.next_ = pos;
    (prev != nullptr ? prev->next_ : front_) = &h;
    (pos != nullptr ? pos->prev_ : back_) = &h;
    ++size_;
  }

  LeaseHook* front_ = nullptr;
  LeaseHook* back_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace cascade::hub
