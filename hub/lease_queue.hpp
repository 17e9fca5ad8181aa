#pragma once
// Leases ordered by deadline, for O(1) renewal and O(expired) expiry.
//
// Every lease of one hub has the same duration and `now` only moves forward,
// so a renewed lease always belongs at the back: renewal is a splice, and the
// front is always the next lease to expire. Expiry walks from the front and
// stops at the first live lease, so it never scans what is still alive.
// (An insertion with an earlier deadline than the back is still placed
// correctly, by walking back from the end; it does not happen in steady state.)

#include <cstddef>
#include <list>
#include <optional>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

template <typename Key>
class LeaseQueue {
  struct Entry {
    Key key;
    MonoTime deadline;
  };

 public:
  using Handle = typename std::list<Entry>::iterator;

  Handle add(Key key, MonoTime deadline) {
    return entries_.insert(position_for(deadline), Entry{key, deadline});
  }

  void renew(Handle h, MonoTime deadline) {
    h->deadline = deadline;
    entries_.splice(position_for(deadline, h), entries_, h);
  }

  void remove(Handle h) { entries_.erase(h); }

  MonoTime deadline_of(Handle h) const { return h->deadline; }

  std::optional<MonoTime> next_deadline() const {
    if (entries_.empty()) return std::nullopt;
    return entries_.front().deadline;
  }

  // Calls on_expired(key) for leases whose deadline <= now, oldest first, at
  // most `max` of them. The callback must not touch this queue; the entries
  // are removed here. Returns how many expired.
  template <typename Fn>
  std::size_t expire(MonoTime now, std::size_t max, Fn&& on_expired) {
    std::size_t n = 0;
    while (n < max && !entries_.empty() && entries_.front().deadline <= now) {
      Key key = entries_.front().key;
      entries_.pop_front();
      on_expired(key);
      ++n;
    }
    return n;
  }

  std::size_t size() const { return entries_.size(); }

 private:
  // The position before which an entry with `deadline` keeps the list sorted;
  // `skip` is the entry being moved, if any.
  Handle position_for(MonoTime deadline, std::optional<Handle> skip = std::nullopt) {
    auto pos = entries_.end();
    while (pos != entries_.begin()) {
      auto prev = std::prev(pos);
      if (skip && prev == *skip) {
        pos = prev;
        continue;
      }
      if (prev->deadline <= deadline) break;
      pos = prev;
    }
    return pos;
  }

  std::list<Entry> entries_;
};

}  // namespace cascade::hub
