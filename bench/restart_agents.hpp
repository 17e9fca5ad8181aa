#pragma once
// The emulated fleet of cascade_restart_scale_bench (bench/restart_scale_bench.cpp):
// N agents beating a real hub from a few sender threads, each agent reacting to
// the hub's replies as AgentCore does (a new hub epoch: one full-set beat at
// uniform(0, interval); send_full: the set at once; busy: back off; a lost link:
// beat when it is back; a granted interval kept until a reply changes it), and
// what they saw, per 100 ms since the restarted hub's exec.
// Header-only; one translation unit includes it.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/beat_fleet.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {

// ---------------------------------------------------------------- time

constexpr std::int64_t kBucketUs = 100'000;  // the re-send rate is counted per 100 ms
constexpr const char* kHubId = "restart-scale-bench";
constexpr std::int64_t kFrameTimeoutUs = 20'000'000;  // a frame unanswered this long is lost
constexpr std::int64_t kOrphanKeepUs = 120'000'000;   // ... and its late reply still applied

// Microseconds on the steady clock since the bench started (all threads share it).
class BenchClock {
 public:
  std::int64_t now_us() const {
    return std::chrono::duration_cast<std::chrono::microseconds>(SteadyClock::now() - start_)
        .count();
  }

 private:
  TimePoint start_ = SteadyClock::now();
};

// What the threads share about the restart: when the new hub was exec'd
// (-1: not yet), and the epoch of the first hub (0: not known yet).
struct RestartMark {
  std::atomic<std::int64_t> exec_us{-1};
  std::atomic<std::uint64_t> first_epoch{0};

  // A reply's time as milliseconds since the restart's exec; -1 before it.
  std::int64_t ms_since_exec(std::int64_t now_us) const {
    const auto exec = exec_us.load(std::memory_order_relaxed);
    return exec < 0 ? -1 : (now_us - exec) / 1000;
  }
  // The 100 ms bucket since the exec; -1 before it.
  std::int64_t bucket(std::int64_t now_us) const {
    const auto exec = exec_us.load(std::memory_order_relaxed);
    return exec < 0 || now_us < exec ? -1 : (now_us - exec) / kBucketUs;
  }
  // Whether `epoch` is the restarted hub's (the first hub's epoch is learnt
  // from the first reply any thread reads).
  bool is_new(std::uint64_t epoch) {
    auto first = first_epoch.load(std::memory_order_relaxed);
    if (first == 0) {
      first_epoch.compare_exchange_strong(first, epoch);
      first = first_epoch.load();
    }
    return epoch != first;
  }
};

// ---------------------------------------------------------------- the emulated nodes

// Nodes [0, N) are the fleet's (one realistic instance each); nodes N..N+19
// own the resolve target's instances and beat like the others.
class Nodes {
 public:
  Nodes(std::size_t agents, std::size_t services)
      : fleet_(agents, services, 0, /*realistic=*/true), agents_(agents) {
    for (std::size_t k = 0; k < kResolveInstances; ++k)
      resolve_owners_.push_back(resolve_owner_beat(k));
  }
  std::size_t size() const { return agents_ + kResolveInstances; }
  Fleet& fleet() { return fleet_; }

  std::string node_id(std::size_t i) const {
    return i < agents_ ? fleet_.node_id(i) : resolve_owners_[i - agents_].node_id;
  }
  std::uint64_t digest(std::size_t i) const {
    return i < agents_ ? fleet_.digest(i) : resolve_owners_[i - agents_].digest;
  }
  // A beat of node i with its whole set (seq left to the caller).
  proto::UpBeat full_beat(std::size_t i) {
    return i < agents_ ? fleet_.registration_beat(i) : resolve_owners_[i - agents_];
  }

 private:
  Fleet fleet_;
  std::size_t agents_;
  std::vector<proto::UpBeat> resolve_owners_;
};

// ---------------------------------------------------------------- one sender's agents

// What an emulated agent knows: the fields of AgentCore that decide when it
// beats and whether the beat carries its set.
struct AgentState {
  std::int64_t next_beat_us = 0;   // its regular beat, or when a busy answer lets it beat again
  std::int64_t resend_at_us = -1;  // the full re-send a new hub epoch scheduled; -1: none
  std::int64_t last_beat_us = 0;   // when it last sent a beat
  std::uint64_t hub_epoch = 0;     // of the last reply (0: none yet)
  std::uint32_t seq = 1;           // of the last beat sent (the registration was 1)
  std::uint32_t full_sent_seq = 1;
  std::int32_t digest_ok_ms = -1;  // since the restart's exec: the new epoch took its digest
  std::int32_t full_ok_ms = -1;    // ... acknowledged its full set
  std::uint32_t granted_ms = 0;    // the interval the hub granted it; 0: its own
  bool need_full = false;
  bool regular = true;   // next_beat_us is the period's beat (not a busy wait or an urgent beat)
  bool waiting = false;  // its beat could not go, or its frame was lost: beats when the link is up
};

// Counters of one sender, summed over senders at the end.
struct SenderStats {
  std::vector<std::uint64_t> full_offered, full_answered, full_shed, beats_answered;  // per bucket
  std::uint64_t lost = 0;                   // beats in frames the crash swallowed
  std::uint64_t unsent = 0;                 // beats that could not be sent: no connection
  std::uint64_t shed = 0;                   // beats in frames answered busy
  std::uint64_t full_requested = 0;         // replies asking for the full set, after the exec
  std::uint64_t full_requested_before = 0;  // ... before it (leases run out while registering)
  std::uint64_t timed_out = 0;              // beats in frames unanswered for kFrameTimeoutUs
  std::uint64_t link_downs = 0;             // sends refused: the connection was gone
  std::uint64_t frames_after_exec = 0;      // frames sent after the restart's exec
  std::uint64_t resends_scheduled = 0;
  std::uint64_t late_100ms = 0;  // regular beats sent over 100 ms after they were due
  std::int64_t max_late_us = 0;
  std::uint32_t max_interval_ms = 0;  // the longest interval the hub granted
  std::uint64_t unmatched = 0;        // replies that answer no frame sent: the run fails
  std::string first_unmatched;

  void add(const SenderStats& o) {
    add_buckets(full_offered, o.full_offered);
    add_buckets(full_answered, o.full_answered);
    add_buckets(full_shed, o.full_shed);
    add_buckets(beats_answered, o.beats_answered);
    lost += o.lost;
    unsent += o.unsent;
    shed += o.shed;
    full_requested += o.full_requested;
    full_requested_before += o.full_requested_before;
    timed_out += o.timed_out;
    link_downs += o.link_downs;
    frames_after_exec += o.frames_after_exec;
    resends_scheduled += o.resends_scheduled;
    late_100ms += o.late_100ms;
    max_late_us = std::max(max_late_us, o.max_late_us);
    max_interval_ms = std::max(max_interval_ms, o.max_interval_ms);
    unmatched += o.unmatched;
    if (first_unmatched.empty()) first_unmatched = o.first_unmatched;
  }
  static void count(std::vector<std::uint64_t>& buckets, std::int64_t bucket, std::uint64_t n = 1) {
    if (bucket < 0) return;
    if (buckets.size() <= static_cast<std::size_t>(bucket))
      buckets.resize(static_cast<std::size_t>(bucket) + 1);
    buckets[static_cast<std::size_t>(bucket)] += n;
  }

 private:
  static void add_buckets(std::vector<std::uint64_t>& into, const std::vector<std::uint64_t>& v) {
    for (std::size_t b = 0; b < v.size(); ++b)
      count(into, static_cast<std::int64_t>(b), v[b]);
  }
};

struct SenderConfig {
  std::string endpoint;
  Duration interval;
  std::size_t batch = 64;
  std::size_t window = 32;
};

// The agents [lo, hi) of one sender thread on one DEALER: a heap of due
// beats, frames of up to `batch` beats, up to `window` frames in flight.
class AgentSender {
 public:
  AgentSender(Nodes& nodes, std::size_t lo, std::size_t hi, const SenderConfig& config,
              const BenchClock& clock, RestartMark& mark, std::uint64_t seed)
      : nodes_(nodes),
        lo_(lo),
        config_(config),
        clock_(clock),
        mark_(mark),
        rng_(seed),
        agents_(hi - lo) {
    const auto interval_us =
        std::chrono::duration_cast<std::chrono::microseconds>(config_.interval).count();
    const auto start = clock_.now_us();
    for (std::uint32_t a = 0; a < agents_.size(); ++a) {  // a phase of its own in the interval
      agents_[a].next_beat_us = start + uniform(interval_us);
      due_.push({agents_[a].next_beat_us, a});
    }
  }

  // Beats until `stop`; throws on a wrong reply.
  void run(zmq::context_t& context, const std::atomic<bool>& stop) {
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.set(zmq::sockopt::immediate, 1);  // as the agent library: nothing queued while down
    socket.set(zmq::sockopt::sndhwm, 100'000);
    socket.set(zmq::sockopt::rcvhwm, 100'000);
    auto monitor = watch_disconnects(context, socket);
    socket.connect(config_.endpoint);
    while (!stop.load(std::memory_order_relaxed)) {
      send_due(socket);
      zmq::pollitem_t items[]{{socket.handle(), 0, ZMQ_POLLIN, 0},
                              {monitor.handle(), 0, ZMQ_POLLIN, 0}};
      zmq::poll(items, 2, std::chrono::milliseconds(1));
      zmq::message_t reply;
      while (socket.recv(reply, zmq::recv_flags::dontwait))
        on_reply(reply);
      if (disconnected(monitor)) link_lost();
    }
  }

  // The connection's drops, as the agent's transport sees them (a frame in
  // flight then will not be answered: its agent beats again on the new link).
  zmq::socket_t watch_disconnects(zmq::context_t& context, zmq::socket_t& socket) const {
    const auto address = "inproc://restart-scale-monitor-" + std::to_string(lo_);
    if (zmq_socket_monitor(socket.handle(), address.c_str(), ZMQ_EVENT_DISCONNECTED) != 0)
      throw std::runtime_error("zmq_socket_monitor failed");
    zmq::socket_t monitor(context, zmq::socket_type::pair);
    monitor.connect(address);
    return monitor;
  }
  // Reads the monitor's events (two frames each); true if one was a disconnect.
  static bool disconnected(zmq::socket_t& monitor) {
    bool any = false;
    zmq::message_t event, address;
    while (monitor.recv(event, zmq::recv_flags::dontwait)) {
      (void)monitor.recv(address, zmq::recv_flags::none);
      std::uint16_t id = 0;
      if (event.size() >= sizeof id) std::memcpy(&id, event.data(), sizeof id);
      any = any || id == ZMQ_EVENT_DISCONNECTED;
    }
    return any;
  }

  std::size_t answered() const { return answered_.load(std::memory_order_relaxed); }
  std::uint32_t granted_ms() const { return granted_ms_.load(std::memory_order_relaxed); }
  std::size_t confirmed_full() const { return confirmed_full_.load(); }
  const SenderStats& stats() const { return stats_; }
  // Milliseconds since the exec at which each agent was confirmed (-1: never).
  void confirmation_times(std::vector<double>& digest_ms, std::vector<double>& full_ms,
                          std::size_t& never) const {
    for (const auto& a : agents_) {
      if (a.full_ok_ms < 0) ++never;
      if (a.digest_ok_ms >= 0) digest_ms.push_back(a.digest_ok_ms);
      if (a.full_ok_ms >= 0) full_ms.push_back(a.full_ok_ms);
    }
  }

 private:
  struct Due {
    std::int64_t at_us;
    std::uint32_t agent;
    bool operator>(const Due& o) const { return at_us > o.at_us; }
  };
  struct InFlight {
    std::int64_t sent_us = 0;
    std::vector<std::uint32_t> agents;
    std::vector<std::uint32_t> seqs;
    std::vector<bool> full;
  };

  std::int64_t uniform(std::int64_t below_us) {
    return std::uniform_int_distribution<std::int64_t>(
        0, std::max<std::int64_t>(below_us, 1) - 1)(rng_);
  }
  // AgentCore::beat_interval: its own, or the longer one the hub granted it.
  std::int64_t interval_us(const AgentState& agent) const {
    const auto own = std::chrono::duration_cast<std::chrono::microseconds>(config_.interval);
    return std::max<std::int64_t>(own.count(), std::int64_t{agent.granted_ms} * 1000);
  }
  // The interval ±10%, as AgentCore's send_beat draws it.
  std::int64_t jittered_interval_us(const AgentState& agent) {
    const auto base = interval_us(agent);
    return base - base / 10 + uniform(base / 5 + 1);
  }
  // `regular`: the period's beat (a new grant moves it), not a wait or an urgent beat.
  void schedule(std::uint32_t a, std::int64_t at_us, bool regular = false) {
    agents_[a].next_beat_us = at_us;
    agents_[a].regular = regular;
    due_.push({at_us, a});
  }
  // AgentCore::adopt_interval: a new grant moves the pending regular beat.
  void adopt_interval(std::uint32_t a, std::uint32_t granted_ms, std::int64_t now) {
    auto& agent = agents_[a];
    if (granted_ms == agent.granted_ms) return;
    agent.granted_ms = granted_ms;
    if (!agent.regular || agent.next_beat_us <= now) return;
    schedule(a, agent.last_beat_us + jittered_interval_us(agent), true);
  }

  // The next agent whose beat is due, waiting ones (the link is back) first;
  // false: none.
  bool next_due(std::int64_t now, std::uint32_t& agent) {
    if (!waiting_.empty()) {
      agent = waiting_.front();
      waiting_.pop_front();
      agents_[agent].waiting = false;
      return true;
    }
    while (!due_.empty() && due_.top().at_us <= now)
      if (pop_due(now, agent)) return true;
    return false;
  }

  // Pops the earliest entry (due by `now`); true when it is a beat to send,
  // false when a later schedule superseded it or the agent waits for the link.
  bool pop_due(std::int64_t now, std::uint32_t& agent) {
    const Due d = due_.top();
    due_.pop();
    auto& a = agents_[d.agent];
    if (d.at_us == a.resend_at_us) {  // AgentCore::on_timer: the re-send goes now, full
      a.resend_at_us = -1;
      a.need_full = true;
    } else if (d.at_us != a.next_beat_us) {
      return false;
    }
    if (a.waiting) return false;
    const auto late = now - d.at_us;
    stats_.max_late_us = std::max(stats_.max_late_us, late);
    if (late > 100'000) ++stats_.late_100ms;
    agent = d.agent;
    return true;
  }

  // While the link is down, every beat that falls due cannot go: the agent
  // waits for the link (AgentCore::beat_not_sent, then on_link_up).
  void park_due(std::int64_t now) {
    std::uint32_t a = 0;
    while (!due_.empty() && due_.top().at_us <= now)
      if (pop_due(now, a)) {
        wait_for_link(a);
        ++stats_.unsent;
      }
  }

  void send_due(zmq::socket_t& socket) {
    const auto now = clock_.now_us();
    expire_in_flight(now);
    if (!link_up_) park_due(now);
    while (in_flight_.size() < config_.window) {
      InFlight frame;
      beats_.clear();
      std::uint32_t a = 0;
      while (frame.agents.size() < config_.batch && next_due(now, a))
        add_beat(a, now, frame);
      if (frame.agents.empty()) return;
      const auto bytes = proto::encode_batch(beats_);
      if (!socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
        link_down(frame);
        return;
      }
      link_up_ = true;
      frame.sent_us = now;
      if (mark_.exec_us.load(std::memory_order_relaxed) >= 0) ++stats_.frames_after_exec;
      for (std::size_t k = 0; k < frame.agents.size(); ++k)
        if (frame.full[k]) SenderStats::count(stats_.full_offered, mark_.bucket(now));
      in_flight_.push_back(std::move(frame));
    }
  }

  // A frame unanswered this long went into a connection that died without
  // the send failing: its agents beat again (as AgentCore's retries would),
  // and the window does not stay full of it.
  void expire_in_flight(std::int64_t now) {
    while (!in_flight_.empty() && now - in_flight_.front().sent_us > kFrameTimeoutUs) {
      stats_.timed_out += in_flight_.front().agents.size();
      lose(std::move(in_flight_.front()));
      in_flight_.pop_front();
    }
  }

  void add_beat(std::uint32_t a, std::int64_t now, InFlight& frame) {
    auto& agent = agents_[a];
    const std::size_t node = lo_ + a;
    proto::UpBeat beat;
    if (agent.need_full) {
      beat = nodes_.full_beat(node);
      agent.full_sent_seq = agent.seq + 1;
    } else {
      beat.node_id = nodes_.node_id(node);
      beat.digest = nodes_.digest(node);
    }
    beat.epoch = 1;
    beat.seq = ++agent.seq;
    frame.agents.push_back(a);
    frame.seqs.push_back(agent.seq);
    frame.full.push_back(agent.need_full);
    beats_.emplace_back(std::move(beat));
    agent.last_beat_us = now;
    schedule(a, now + jittered_interval_us(agent), true);  // the period runs from every beat
  }

  // The connection is gone: this frame did not go, and the frames in flight
  // are orphans, lost unless their replies still come out of the old
  // connection's queue; all their agents beat once the link is back
  // (AgentCore::on_link_up).
  void link_down(const InFlight& unsent) {
    if (link_up_) stats_.unsent += unsent.agents.size();  // not the probes while it stays down
    for (auto a : unsent.agents) {
      --agents_[a].seq;  // the beat never left: its seq is free again
      wait_for_link(a);
    }
    link_lost();
  }
  void link_lost() {
    if (link_up_) ++stats_.link_downs;
    link_up_ = false;
    for (auto& frame : in_flight_)
      lose(std::move(frame));
    in_flight_.clear();
  }
  void wait_for_link(std::uint32_t a) {
    if (agents_[a].waiting) return;
    agents_[a].waiting = true;
    waiting_.push_back(a);
  }

  void on_reply(const zmq::message_t& reply) {
    const auto now = clock_.now_us();
    const auto decoded = proto::decode_frame(reply.to_string_view());
    if (const auto* busy = whole_frame_busy(decoded)) return on_busy(take_oldest(), *busy, now);
    const auto frame = take_matching(decoded);
    if (!frame) return;
    for (std::size_t k = 0; k < frame->agents.size(); ++k)
      on_downbeat(*frame, k, checked_downbeat(decoded.items[k], *frame, k), now);
  }

  // The frame a busy answer (which names no beat of a batch) answers: the
  // oldest sent on the live connection, else the oldest orphan.
  InFlight take_oldest() {
    auto& from = in_flight_.empty() ? orphans_ : in_flight_;
    if (from.empty()) throw std::runtime_error("a busy answer to no frame in flight");
    InFlight frame = std::move(from.front());
    from.pop_front();
    if (&from == &orphans_) stats_.lost -= frame.agents.size();
    return frame;
  }

  // The frame a reply answers, by its first beat's node and seq: in order on
  // the live connection (frames passed over lost their replies), else an
  // orphan whose reply came out of the old connection's queue.
  // A reply that matches none is counted (the run fails) and described.
  std::optional<InFlight> take_matching(const proto::DecodedFrame& decoded) {
    for (std::size_t i = 0; i < in_flight_.size(); ++i) {
      if (!answers(decoded, in_flight_[i])) continue;
      for (std::size_t j = 0; j < i; ++j)
        lose(std::move(in_flight_[j]));
      InFlight frame = std::move(in_flight_[i]);
      in_flight_.erase(in_flight_.begin(), in_flight_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return frame;
    }
    for (auto it = orphans_.begin(); it != orphans_.end(); ++it) {
      if (!answers(decoded, *it)) continue;
      InFlight frame = std::move(*it);
      orphans_.erase(it);
      stats_.lost -= frame.agents.size();
      return frame;
    }
    if (stats_.unmatched++ == 0)
      stats_.first_unmatched = "a reply of " + std::to_string(decoded.items.size()) +
                               " messages answers no frame sent" + describe_first(decoded) +
                               "; in flight " + describe(in_flight_) + "; orphans " +
                               describe(orphans_);
    return std::nullopt;
  }
  bool answers(const proto::DecodedFrame& decoded, const InFlight& frame) const {
    if (decoded.items.size() != frame.agents.size()) return false;
    const auto* msg = std::get_if<proto::Message>(&decoded.items[0]);
    const auto* down = msg ? std::get_if<proto::DownBeat>(msg) : nullptr;
    return down != nullptr && down->ack_seq == frame.seqs[0] &&
           down->node_id == nodes_.node_id(lo_ + frame.agents[0]);
  }
  // A frame whose reply did not come in order: lost, unless its reply still
  // comes out of an old connection's queue (replies of two connections
  // interleave). Its agents beat again when the link is up.
  void lose(InFlight frame) {
    stats_.lost += frame.agents.size();
    for (auto a : frame.agents)
      wait_for_link(a);
    orphans_.push_back(std::move(frame));
    while (orphans_.front().sent_us < orphans_.back().sent_us - kOrphanKeepUs)
      orphans_.pop_front();
  }

  // What the first message of a reply is, for an error message.
  static std::string describe_first(const proto::DecodedFrame& decoded) {
    if (decoded.items.empty()) return "";
    const auto* msg = std::get_if<proto::Message>(&decoded.items[0]);
    if (msg == nullptr) return "; the first did not decode";
    if (const auto* err = std::get_if<proto::ErrorReply>(msg))
      return "; the first is an error, code " + std::to_string(static_cast<int>(err->code)) + ": " +
             err->message;
    if (const auto* down = std::get_if<proto::DownBeat>(msg))
      return "; the first answers " + down->node_id + " seq " + std::to_string(down->ack_seq);
    return "; the first is of type index " + std::to_string(msg->index());
  }
  // Each frame's size, first node and seq, for an error message.
  std::string describe(const std::deque<InFlight>& frames) const {
    std::string out;
    for (const auto& f : frames)
      out += std::to_string(f.agents.size()) + ":" + nodes_.node_id(lo_ + f.agents[0]) + "/" +
             std::to_string(f.seqs[0]) + " ";
    return out;
  }

  const proto::DownBeat& checked_downbeat(const proto::DecodedMessage& item, const InFlight& frame,
                                          std::size_t k) const {
    const auto* msg = std::get_if<proto::Message>(&item);
    const auto* down = msg ? std::get_if<proto::DownBeat>(msg) : nullptr;
    const auto node = nodes_.node_id(lo_ + frame.agents[k]);
    if (down == nullptr) throw std::runtime_error("a beat of " + node + " was not answered");
    if (down->node_id != node || down->ack_seq != frame.seqs[k] || down->hub_id != kHubId ||
        !down->updates.empty() || down->lease_ms == 0)
      throw std::runtime_error(
          "wrong DownBeat for " + node + " seq " + std::to_string(frame.seqs[k]) + ": node " +
          down->node_id + ", ack_seq " + std::to_string(down->ack_seq) + ", hub " + down->hub_id);
    return *down;
  }

  // AgentCore::back_off: the beat goes again after the wait, plus up to half.
  void on_busy(const InFlight& frame, const proto::ErrorReply& busy, std::int64_t now) {
    stats_.shed += frame.agents.size();
    for (std::size_t k = 0; k < frame.agents.size(); ++k) {
      const auto a = frame.agents[k];
      const std::int64_t after_us = busy.retry_after_ms > 0
                                        ? std::int64_t{busy.retry_after_ms} * 1000
                                        : interval_us(agents_[a]);
      if (frame.full[k]) SenderStats::count(stats_.full_shed, mark_.bucket(now));
      schedule(a, now + after_us + uniform(after_us / 2 + 1), true);
    }
  }

  // AgentCore::on_downbeat, the parts that decide the next beats.
  void on_downbeat(const InFlight& frame, std::size_t k, const proto::DownBeat& down,
                   std::int64_t now) {
    const auto a = frame.agents[k];
    auto& agent = agents_[a];
    const bool new_epoch = mark_.is_new(down.hub_epoch);
    SenderStats::count(stats_.beats_answered, mark_.bucket(now));
    answered_.fetch_add(1, std::memory_order_relaxed);
    if (agent.hub_epoch != 0 && agent.hub_epoch != down.hub_epoch) {
      // Once, within one interval: the one granted so far (AgentCore draws it
      // before it adopts the reply's grant).
      agent.resend_at_us = now + uniform(interval_us(agent));
      due_.push({agent.resend_at_us, a});
      ++stats_.resends_scheduled;
    }
    agent.hub_epoch = down.hub_epoch;
    adopt_interval(a, down.interval_ms, now);
    granted_ms_.store(down.interval_ms, std::memory_order_relaxed);
    stats_.max_interval_ms = std::max(stats_.max_interval_ms, down.interval_ms);
    if (down.send_full) {
      ++(mark_.exec_us.load(std::memory_order_relaxed) < 0 ? stats_.full_requested_before
                                                           : stats_.full_requested);
      if (down.ack_seq >= agent.full_sent_seq) {
        agent.need_full = true;
        schedule(a, now);  // the hub lacks the set: it goes now
      }
      return;
    }
    if (frame.full[k]) {
      SenderStats::count(stats_.full_answered, mark_.bucket(now));
      if (down.ack_seq >= agent.full_sent_seq) agent.need_full = false;
    }
    if (!new_epoch) return;
    const auto ms = static_cast<std::int32_t>(mark_.ms_since_exec(now));
    if (agent.digest_ok_ms < 0) agent.digest_ok_ms = ms;
    if (frame.full[k] && agent.full_ok_ms < 0) {
      agent.full_ok_ms = ms;
      ++confirmed_full_;
    }
  }

  Nodes& nodes_;
  std::size_t lo_;
  SenderConfig config_;
  const BenchClock& clock_;
  RestartMark& mark_;
  std::mt19937_64 rng_;
  std::vector<AgentState> agents_;
  std::priority_queue<Due, std::vector<Due>, std::greater<Due>> due_;
  std::deque<std::uint32_t> waiting_;
  std::deque<InFlight> in_flight_;
  std::deque<InFlight>
      orphans_;  // in flight when the connection went: their replies may still come
  std::vector<proto::Message> beats_;
  std::atomic<std::uint32_t> granted_ms_{0};  // the newest grant read, for the report
  SenderStats stats_;
  bool link_up_ = true;
  std::atomic<std::size_t> answered_{0}, confirmed_full_{0};
};

// All senders, each on a thread of its own.
class EmulatedFleet {
 public:
  EmulatedFleet(Nodes& nodes, std::size_t senders, const SenderConfig& config,
                const BenchClock& clock, RestartMark& mark) {
    for (std::size_t s = 0; s < senders; ++s) {
      const auto [lo, hi] = sender_slice(0, nodes.size(), senders, s);
      senders_.push_back(std::make_unique<AgentSender>(nodes, lo, hi, config, clock, mark, s + 1));
    }
    errors_.resize(senders_.size());
    for (std::size_t s = 0; s < senders_.size(); ++s)
      threads_.emplace_back([this, s] {
        try {
          senders_[s]->run(context_, stop_);
        } catch (const std::exception& e) {
          errors_[s] = e.what();
          failed_ = true;
        }
      });
  }
  ~EmulatedFleet() { join(); }
  EmulatedFleet(const EmulatedFleet&) = delete;
  EmulatedFleet& operator=(const EmulatedFleet&) = delete;

  // Joins the threads; throws the first sender's error.
  void stop() {
    join();
    for (std::size_t s = 0; s < errors_.size(); ++s)
      if (!errors_[s].empty())
        throw std::runtime_error("sender " + std::to_string(s) + ": " + errors_[s]);
  }
  void join() {
    stop_ = true;
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  void throw_if_failed() {
    if (failed_) stop();
  }

  std::size_t answered() const { return sum(&AgentSender::answered); }
  std::uint32_t granted_ms() const {
    std::uint32_t most = 0;
    for (const auto& s : senders_)
      most = std::max(most, s->granted_ms());
    return most;
  }
  std::size_t confirmed_full() const { return sum(&AgentSender::confirmed_full); }
  SenderStats stats() const {
    SenderStats all;
    for (const auto& s : senders_)
      all.add(s->stats());
    return all;
  }
  void confirmation_times(std::vector<double>& digest_ms, std::vector<double>& full_ms,
                          std::size_t& never) const {
    for (const auto& s : senders_)
      s->confirmation_times(digest_ms, full_ms, never);
  }

 private:
  std::size_t sum(std::size_t (AgentSender::*count)() const) const {
    std::size_t n = 0;
    for (const auto& s : senders_)
      n += ((*s).*count)();
    return n;
  }

  zmq::context_t context_{2};
  std::vector<std::unique_ptr<AgentSender>> senders_;
  std::vector<std::string> errors_;
  std::vector<std::thread> threads_;
  std::atomic<bool> stop_{false}, failed_{false};
};

}  // namespace cascade::bench
