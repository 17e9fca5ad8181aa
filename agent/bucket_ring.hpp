#pragma once
// A sliding window of time buckets: `buckets` slices of `width` each, reused
// in a ring. The breaker, the extra-request budget and the latency tracker
// count in one; what each bucket counts is theirs.
//
// A bucket remembers which slice of time it counts (`index`); one left over
// from an older turn of the ring is reset when reused and skipped when
// summed, so no timer ever has to clear the ring.
//
// `Bucket` must be default-constructible (the empty bucket) with a member
// `std::int64_t index` defaulting to -1.

#include <cstdint>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::agent {

template <typename Bucket>
class BucketRing {
 public:
  BucketRing(std::size_t buckets, Duration width) : ring_(buckets), width_(width) {}

  // The bucket counting `now`, emptied first if it last counted an older slice.
  Bucket& at(MonoTime now) {
    const std::int64_t slice = slice_of(now);
    const auto n = static_cast<std::int64_t>(ring_.size());
    Bucket& bucket = ring_[static_cast<std::size_t>(((slice % n) + n) % n)];
    if (bucket.index != slice) {
      bucket = Bucket{};
      bucket.index = slice;
    }
    return bucket;
  }

  // Calls fn(bucket) for every bucket within the window ending at `now`.
  template <typename Fn>
  void for_each_live(MonoTime now, Fn&& fn) const {
    const std::int64_t slice = slice_of(now);
    const auto n = static_cast<std::int64_t>(ring_.size());
    for (const Bucket& b : ring_)
      if (b.index >= 0 && b.index <= slice && b.index > slice - n) fn(b);
  }

  void clear() {
    for (Bucket& b : ring_)
      b = Bucket{};
  }

 private:
  // Floor division, so times before the clock's epoch land in their own slices.
  std::int64_t slice_of(MonoTime now) const {
    const std::int64_t ms = to_ms(now);
    const std::int64_t w = width_.count();
    return ms >= 0 ? ms / w : -((-ms + w - 1) / w);
  }

  std::vector<Bucket> ring_;
  Duration width_;
};

}  // namespace cascade::agent
