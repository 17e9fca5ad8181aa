#include "cascade/hub/inbound_queue.hpp"

namespace cascade::hub {

void InboundQueue::push(MonoTime read_at, Frames frames) {
  bytes_ += payload_bytes(frames);
  queued_.push_back({read_at, std::move(frames)});
}

std::optional<InboundQueue::Next> InboundQueue::pop(MonoTime now) {
  if (queued_.empty()) return std::nullopt;
  Queued& oldest = queued_.front();
  Next next{std::move(oldest.frames), now - oldest.read_at, false};
  next.shed = should_shed(now, next.waited);
  bytes_ -= payload_bytes(next.frames);
  queued_.pop_front();
  if (queued_.empty()) over_since_.reset();  // drained: the hub caught up
  return next;
}

bool InboundQueue::should_shed(MonoTime now, Duration waited) {
  if (limits_.shed_after <= Duration{0}) return false;
  if (waited <= limits_.shed_after || queued_.size() <= limits_.min_depth) {
    over_since_.reset();
    return false;
  }
  if (!over_since_) over_since_ = now;
  const bool standing = now - *over_since_ >= limits_.standing_for;
  const bool shedding = last_shed_ && now - *last_shed_ < limits_.standing_for * 10;
  if (!standing && !shedding) return false;
  last_shed_ = now;
  return true;
}

}  // namespace cascade::hub
