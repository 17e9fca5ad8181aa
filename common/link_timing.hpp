#pragma once
// How quickly a connection to a hub is found dead and made again, derived
// from the beat interval of what travels over it. Pure arithmetic, no socket:
// common/zmq_util.hpp applies it to a ZeroMQ socket (configure_link).
//
// Why these fractions (B = the link's beat interval):
// - ZMTP heartbeats (PING every B/2; no traffic B/2 after a PING: the
//   connection is dead) find a silently dropped link within B, before TCP's
//   retransmission timer has backed off far: a cut shorter than that heals
//   with TCP's next retransmission, a longer one kills the connection and
//   ZeroMQ reconnects.
// - One TCP connect attempt lasts at most B/5: one SYN, never the kernel's
//   exponentially backed-off SYN retransmissions (1 s, 3 s, 7 s, ...).
// - Between attempts ZeroMQ waits reconnect_interval, doubling up to
//   reconnect_interval_max, plus a random share of reconnect_interval drawn
//   by libzmq for every attempt: the clients of a healed datacenter come back
//   spread out, not in one instant.
// So once the network heals, the next connect attempt starts within
// connect_timeout + reconnect_interval_max + reconnect_interval = 0.9 B
// (worst_reconnect_after_heal), whatever the length of the cut.
// - heartbeat_ttl (2 B) makes the peer (a hub's ROUTER, which sends no PINGs
//   of its own) drop our dead connection too.

#include <algorithm>
#include <chrono>

namespace cascade {

struct LinkTiming {
  std::chrono::milliseconds heartbeat_interval{1000};  // a ZMTP PING this often
  std::chrono::milliseconds heartbeat_timeout{1000};   // silence after a PING: dead
  std::chrono::milliseconds heartbeat_ttl{4000};       // the peer drops us after this silence
  std::chrono::milliseconds handshake_timeout{2000};   // a ZMTP handshake takes at most this
  std::chrono::milliseconds connect_timeout{400};      // one TCP connect attempt (one SYN)
  std::chrono::milliseconds reconnect_interval{400};   // first pause; also the jitter range
  std::chrono::milliseconds reconnect_interval_max{1000};

  // The timing for a link carrying beats every `beat` (at least 10 ms).
  static LinkTiming for_beat_interval(std::chrono::milliseconds beat) {
    using std::chrono::milliseconds;
    const auto at_least = [](milliseconds v, milliseconds floor) { return std::max(v, floor); };
    // libzmq keeps the TTL in deciseconds, at most 65535 of them.
    constexpr milliseconds kMaxTtl{65'535 * 100};
    LinkTiming t;
    t.heartbeat_interval = at_least(beat / 2, milliseconds{5});
    t.heartbeat_timeout = at_least(beat / 2, milliseconds{5});
    t.heartbeat_ttl = std::clamp(beat * 2, milliseconds{100}, kMaxTtl);
    t.handshake_timeout = at_least(beat, milliseconds{10});
    t.connect_timeout = at_least(beat / 5, milliseconds{2});
    t.reconnect_interval = at_least(beat / 5, milliseconds{2});
    t.reconnect_interval_max = at_least(beat / 2, t.reconnect_interval);
    return t;
  }

  // The longest wait from a heal to the start of a connect attempt that gets
  // through: an attempt lost to the cut runs out, then the longest pause.
  std::chrono::milliseconds worst_reconnect_after_heal() const {
    return connect_timeout + reconnect_interval_max + reconnect_interval;
  }
};

}  // namespace cascade
