#pragma once
// The hub's own queue of received frames, bounded by how long a frame may
// wait in it (protocol section 5.18).
//
// ZeroMQ queues what the serving thread has not read yet, up to a high-water
// mark per connection; a hub that falls behind lets that queue grow until a
// beat waits half a second for its answer. The serving loop therefore reads
// everything its connections have queued into this queue at the start of
// every pass, stamping each frame with the time it was read, and takes from
// it oldest first. Once frames have waited longer than `shed_after` for
// `standing_for` on end (a standing queue, as CoDel calls it: the hub is
// behind, not digesting a burst), a frame that waited longer than
// `shed_after` comes out marked to shed: the loop answers it `busy` without
// decoding it, which costs a small part of serving it, so the frames behind
// it are served within the bound and the queue cannot grow. Having shed, the
// queue sheds any frame past the bound at once for a while (the overload is
// still on: waiting for another standing queue would let the wait grow by
// `standing_for` each time). The granted interval (section 5.17) then brings
// the offered load down to what the hub serves, and the shedding stops.
//
// A burst is served whole: a proxy's flush or a closed-loop sender's window
// waits past the bound for a moment, but the queue empties again before
// `standing_for`. So is a short queue of heavy frames (a registration wave's
// batches of a thousand full sets, each longer to serve than the bound):
// with fewer than `min_depth` frames behind it, no frame is shed, since a
// handful of frames is never the storm the bound is for, and shedding them
// would only idle the hub while their senders wait to send them again.
//
// The queue also holds at most `max_frames` frames and `max_bytes` bytes of
// payload: past that the loop stops reading and ZeroMQ's own limits push
// back on the senders.

#include <cstddef>
#include <deque>
#include <optional>
#include <vector>
#include <zmq.hpp>

#include "cascade/common/clock.hpp"

namespace cascade::hub {

struct InboundLimits {
  // A frame read longer ago than this is shed, once the queue stood; 0: never.
  Duration shed_after{20};
  // How long frames must wait past shed_after on end before the first is
  // shed; after a shed, ten times this passes before it must stand again.
  Duration standing_for{50};
  // A frame with fewer frames than this queued behind it is never shed.
  std::size_t min_depth = 64;
  std::size_t max_frames = 65'536;
  std::size_t max_bytes = std::size_t{64} << 20;
};

class InboundQueue {
 public:
  using Frames = std::vector<zmq::message_t>;  // routing frames, then the payload

  explicit InboundQueue(const InboundLimits& limits) : limits_(limits) {}

  // Room for another frame (an empty queue always has room).
  bool has_room() const {
    return queued_.empty() || (queued_.size() < limits_.max_frames && bytes_ < limits_.max_bytes);
  }
  void push(MonoTime read_at, Frames frames);

  struct Next {
    Frames frames;
    Duration waited{0};
    bool shed = false;  // waited longer than shed_after
  };
  // The oldest frame; nullopt when the queue is empty.
  std::optional<Next> pop(MonoTime now);

  bool empty() const { return queued_.empty(); }
  std::size_t size() const { return queued_.size(); }

 private:
  struct Queued {
    MonoTime read_at;
    Frames frames;
  };
  static std::size_t payload_bytes(const Frames& frames) {
    return frames.empty() ? 0 : frames.back().size();
  }
  // Whether a frame that waited `waited` is shed, taken at `now` (before it
  // leaves the queue).
  bool should_shed(MonoTime now, Duration waited);

  InboundLimits limits_;
  std::deque<Queued> queued_;
  std::size_t bytes_ = 0;
  std::optional<MonoTime> over_since_;  // every frame taken since waited past shed_after
  std::optional<MonoTime> last_shed_;
};

}  // namespace cascade::hub
