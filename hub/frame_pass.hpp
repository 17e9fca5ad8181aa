#pragma once
// One pass of a server loop over the frames queued on a socket. The loop has
// other duties between passes: the mailbox (scrapes, admin requests), timers
// (expiry, pushes, uplink beats), commits that durable replies wait for, and
// upstream replies. A pass that ran until its socket was empty, or for a fixed
// number of frames, kept them all waiting: 4,096 frames of 64 beats is about a
// quarter of a second on a saturated hub. A pass therefore ends when the queue
// is empty, after `max_frames`, or once `budget` has passed, whichever comes
// first, so under any load those duties wait about one budget at most.
//
//   for (FramePass pass(clock_); pass.another();) {
//     if (!receive(frame)) return false;  // drained
//     handle(frame);
//   }
//   return true;  // ended by the pass: more may be queued

#include <cstddef>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

class FramePass {
 public:
  static constexpr Duration kDefaultBudget{5};
  static constexpr std::size_t kDefaultMaxFrames = 4096;

  explicit FramePass(const Clock& clock, Duration budget = kDefaultBudget,
                     std::size_t max_frames = kDefaultMaxFrames)
      : clock_(clock), until_(clock.now() + budget), frames_left_(max_frames) {}

  // True while the pass may take one more frame (the first always may). The
  // clock is read once per frame: a few tens of nanoseconds against the
  // microseconds a frame costs.
  bool another() {
    if (frames_left_ == 0) return false;
    --frames_left_;
    const bool first = first_;
    first_ = false;
    return first || clock_.now() < until_;
  }

 private:
  const Clock& clock_;
  MonoTime until_;
  std::size_t frames_left_;
  bool first_ = true;  // no frame taken yet
};

}  // namespace cascade::hub
