// cascade_restart_scale_bench: a hub restart at 1M instances, without a storm
// (issue 16 section 4; docs/benchmarks.md, "Hub restart at 1M instances").
//
// Starts the real cascade-hub, registers N instances (realistic names, one
// per node) and the resolve target's 20 through the bench's senders, then
// beats them as N agents would: each agent beats its digest once per
// interval at a phase of its own (±10% jitter per beat, as AgentCore), the
// beats of one sender thread batched into frames. Then the hub is killed
// (SIGKILL, or SIGTERM with --graceful) and started again on the same port and
// data directory while the senders keep going. Each emulated agent reacts as
// AgentCore::on_downbeat does: a reply with a new hub epoch schedules one
// full-set beat at uniform(0, interval) after that reply; a reply asking for
// the full set gets it at once; a busy answer delays the beat by the wait it
// asks for plus up to half as much; a beat that could not be sent (the link was
// down) or whose frame was lost in the crash goes when the link is back
// (AgentCore::on_link_up). Every reply is decoded and checked.
//
// Measured: when the restarted hub first answers a Query for the resolve
// target with all its instances (it answers from SQLite), when every agent was
// confirmed by the new epoch (its digest taken; its full set acknowledged),
// full re-sends per 100 ms offered and answered against the steady rate N/I,
// beats lost, unsent and shed, and a resolve prober that must never see the
// target with fewer instances than registered.
//
// Not emulated: an agent's retries of an unanswered beat within its interval
// (only a dropped connection loses replies here, and those agents beat again
// when the link is back, as the retries would).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <deque>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <queue>
#include <random>
#include <string>
#include <string_view>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/beat_fleet.hpp"
#include "cascade/bench/bench_flags.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/child_hub.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {
namespace {

namespace fs = std::filesystem;

constexpr const char* kUsage =
    "cascade_restart_scale_bench: N agents beating a real cascade-hub, which is killed and\n"
    "restarted on the same port and data directory; reports when it answers from SQLite, when\n"
    "every agent is confirmed again, the full re-sends per 100 ms against the steady rate, and\n"
    "resolve answers across the restart.\n"
    "  --agents N          emulated agents, one realistic instance each (default 1000000)\n"
    "  --beat-interval-ms  the agents' and the hub's beat interval (default 2000)\n"
    "  --senders N         sender threads, one DEALER each (default 2)\n"
    "  --batch N           beats per frame at most (default 64)\n"
    "  --window N          frames in flight per sender at most (default 32)\n"
    "  --services N        distinct service names (default 1000)\n"
    "  --steady-ms         steady beats before the kill (default 3 intervals)\n"
    "  --down-ms           pause between the hub's exit and its new start (default 0)\n"
    "  --settle-ms         longest wait after the registration for the hub to grant the agents\n"
    "                      their own interval again (default 60000)\n"
    "  --patience-ms       longest wait for every agent's confirmation (default 60000)\n"
    "  --probe-ms          the resolve prober's period (default 10)\n"
    "  --graceful          stop the hub with SIGTERM instead of SIGKILL\n"
    "  --quick             10,000 agents, 1 s interval (smoke test)\n";

struct Options {
  std::size_t agents = 1'000'000;
  Duration beat{2000};
  std::size_t senders = 2;
  std::size_t batch = 64;
  std::size_t window = 32;
  std::size_t services = 1000;
  Duration steady{0};  // 0: three intervals
  Duration down{0};
  Duration settle{60'000};
  Duration patience{60'000};
  Duration probe{10};
  bool graceful = false;
};

Options parse(int argc, char** argv) {
  auto o = parse_flags<Options>(argc, argv, kUsage, [](Flags& flags, Options& opt) {
    flags.first("--quick", [&opt] {
      opt.agents = 10'000;
      opt.beat = Duration{1000};
    });
    flags.on("--graceful", [&opt] { opt.graceful = true; });
    flags.add({{"--agents", &opt.agents},
               {"--beat-interval-ms", &opt.beat},
               {"--senders", &opt.senders},
               {"--batch", &opt.batch},
               {"--window", &opt.window},
               {"--services", &opt.services},
               {"--steady-ms", &opt.steady},
               {"--down-ms", &opt.down, kZeroOk},
               {"--settle-ms", &opt.settle},
               {"--patience-ms", &opt.patience},
               {"--probe-ms", &opt.probe}});
  });
  if (o.steady.count() == 0) o.steady = o.beat * 3;
  if (o.batch > proto::kMaxBatchMessages) throw std::invalid_argument("--batch is too large");
  return o;
}

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
  EmulatedFleet(Nodes& nodes, const Options& o, const SenderConfig& config, const BenchClock& clock,
                RestartMark& mark) {
    for (std::size_t s = 0; s < o.senders; ++s) {
      const auto [lo, hi] = sender_slice(0, nodes.size(), o.senders, s);
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

// ---------------------------------------------------------------- the resolve prober

struct ProbeStats {
  std::uint64_t sent = 0, unsent = 0, answered = 0, unanswered = 0;
  std::uint64_t misses = 0;  // answers with fewer instances than registered
  std::uint64_t misses_before_exec = 0;
  std::int64_t first_miss_ms = -1, last_miss_ms = -1;  // since the exec, of the misses after it
  std::int64_t first_correct_ms = -1;                  // since the restart's exec
  std::vector<double> rtt_ms;                          // answered queries after the exec
};

// Queries the resolve target every `period` on a DEALER of its own, one in
// flight (given up after a second), across the restart.
class ResolveProber {
 public:
  ResolveProber(const std::string& endpoint, Duration period, const BenchClock& clock,
                RestartMark& mark)
      : thread_([this, endpoint, period, &clock, &mark] { run(endpoint, period, clock, mark); }) {}
  ~ResolveProber() { join(); }
  ResolveProber(const ResolveProber&) = delete;
  ResolveProber& operator=(const ResolveProber&) = delete;

  // Joins; throws what the prober found wrong.
  ProbeStats stop() {
    join();
    if (!error_.empty()) throw std::runtime_error("resolve prober: " + error_);
    return stats_;
  }

 private:
  void join() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
  }

  void run(const std::string& endpoint, Duration period, const BenchClock& clock,
           RestartMark& mark) {
    try {
      zmq::context_t context(1);
      zmq::socket_t socket(context, zmq::socket_type::dealer);
      socket.set(zmq::sockopt::linger, 0);
      socket.set(zmq::sockopt::immediate, 1);
      socket.connect(endpoint);
      for (std::uint64_t id = 1; !stop_; ++id) {
        const auto start = SteadyClock::now();
        probe_once(socket, id, clock, mark);
        std::this_thread::sleep_until(start + period);
      }
    } catch (const std::exception& e) {
      error_ = e.what();
    }
  }

  void probe_once(zmq::socket_t& socket, std::uint64_t id, const BenchClock& clock,
                  RestartMark& mark) {
    proto::Query query;
    query.request_id = id;
    query.node_id = "prober";
    query.service.name = kResolveService;
    const auto bytes = proto::encode(query);
    const auto sent_us = clock.now_us();
    if (!socket.send(zmq::buffer(bytes), zmq::send_flags::dontwait)) {
      ++stats_.unsent;  // no connection: the hub is down
      return;
    }
    ++stats_.sent;
    const auto* reply = await_reply(socket, id);
    if (reply == nullptr) {
      ++stats_.unanswered;
      return;
    }
    ++stats_.answered;
    judge(*reply, sent_us, clock.now_us(), mark);
  }

  // The reply naming `id` within a second (older ones are dropped), or null.
  const proto::QueryReply* await_reply(zmq::socket_t& socket, std::uint64_t id) {
    const auto deadline = SteadyClock::now() + std::chrono::seconds(1);
    while (SteadyClock::now() < deadline && !stop_) {
      zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
      zmq::poll(&item, 1, std::chrono::milliseconds(10));
      zmq::message_t frame;
      if (!socket.recv(frame, zmq::recv_flags::dontwait)) continue;
      decoded_ = proto::decode_frame(frame.to_string_view());
      const auto* msg = decoded_.items.size() == 1 && !decoded_.batched
                            ? std::get_if<proto::Message>(&decoded_.items[0])
                            : nullptr;
      const auto* r = msg ? std::get_if<proto::QueryReply>(msg) : nullptr;
      if (r == nullptr) throw std::runtime_error("a Query was not answered with a QueryReply");
      if (r->request_id == id) return r;
    }
    return nullptr;
  }

  // Fewer instances than registered is a miss; anything else but all of them is wrong.
  void judge(const proto::QueryReply& r, std::int64_t sent_us, std::int64_t now_us,
             RestartMark& mark) {
    if (r.instances.size() > kResolveInstances || r.hub_id != kHubId)
      throw std::runtime_error("a wrong answer for " + std::string(kResolveService));
    for (const auto& in : r.instances)
      if (!in.id.starts_with("resolve-"))
        throw std::runtime_error("an instance " + in.id + " in " + kResolveService);
    const auto since_exec = mark.ms_since_exec(now_us);
    if (r.instances.size() < kResolveInstances) {
      ++stats_.misses;
      if (since_exec < 0) {
        ++stats_.misses_before_exec;
      } else {
        if (stats_.first_miss_ms < 0) stats_.first_miss_ms = since_exec;
        stats_.last_miss_ms = since_exec;
      }
      return;
    }
    if (since_exec < 0 || !mark.is_new(r.hub_epoch)) return;
    stats_.rtt_ms.push_back(static_cast<double>(now_us - sent_us) / 1000.0);
    if (stats_.first_correct_ms < 0) stats_.first_correct_ms = since_exec;
  }

  ProbeStats stats_;
  proto::DecodedFrame decoded_;
  std::atomic<bool> stop_{false};
  std::string error_;
  std::thread thread_;
};

// ---------------------------------------------------------------- the run

std::unique_ptr<ChildHub> start_hub(const Options& o, const fs::path& dir,
                                    const std::string& listen, bool again) {
  return std::make_unique<ChildHub>(
      ChildHubOptions{.binary = kHubBinary,
                      .dir = dir,
                      .id = kHubId,
                      .listen = listen,
                      .extra_args = {"--beat-interval-ms", std::to_string(o.beat.count())},
                      .append_log = again,
                      // The restarted hub says how long it read its store.
                      .log_level = again ? "info" : "warn"});
}

void register_all(Nodes& nodes, const std::string& endpoint, const Options& o) {
  zmq::context_t context(1);
  const auto access = HubAccess::plain(endpoint);
  progress("cascade_restart_scale_bench", "registering " + std::to_string(o.agents) + " instances");
  const auto reg = register_nodes(context, access, nodes.fleet(), 0, o.agents, RegistrationLoad{});
  register_resolve_target(context, access);
  std::printf("registration: %zu instances in %.1f s (%s/s), %llu frames shed and sent again\n",
              reg.instances, reg.seconds,
              si(static_cast<double>(reg.instances) / reg.seconds).c_str(),
              static_cast<unsigned long long>(reg.frames_shed));
}

// Beats until the hub grants the agents their own interval again for one
// whole interval (the registration wave made it stretch them), at least one
// interval and at most --settle-ms; the seconds it took.
double settle(EmulatedFleet& fleet, const Options& o) {
  const auto start = SteadyClock::now();
  auto calm_since = start;
  while (SteadyClock::now() < start + o.settle) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    fleet.throw_if_failed();
    if (fleet.granted_ms() != 0) calm_since = SteadyClock::now();
    if (SteadyClock::now() - calm_since >= o.beat) break;
  }
  return seconds_since(start);
}

// Waits until every agent's full set was acknowledged by the new epoch, or the patience ran out.
void await_confirmations(EmulatedFleet& fleet, std::size_t total, TimePoint exec,
                         Duration patience) {
  while (fleet.confirmed_full() < total && SteadyClock::now() < exec + patience) {
    fleet.throw_if_failed();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
}

void print_buckets(const SenderStats& s, double steady_per_bucket) {
  std::printf("\nper 100 ms since the restart's exec (steady beat rate N/I = %s per bucket):\n",
              si(steady_per_bucket).c_str());
  std::printf("%8s %12s %12s %10s %14s\n", "from_ms", "full_offered", "full_answered", "full_shed",
              "beats_answered");
  const auto buckets =
      std::max({s.full_offered.size(), s.full_answered.size(), s.beats_answered.size()});
  auto at = [](const std::vector<std::uint64_t>& v, std::size_t b) {
    return b < v.size() ? v[b] : std::uint64_t{0};
  };
  for (std::size_t b = 0; b < buckets; ++b)
    std::printf("%8zu %12llu %12llu %10llu %14llu\n", b * 100,
                static_cast<unsigned long long>(at(s.full_offered, b)),
                static_cast<unsigned long long>(at(s.full_answered, b)),
                static_cast<unsigned long long>(at(s.full_shed, b)),
                static_cast<unsigned long long>(at(s.beats_answered, b)));
}

double peak(const std::vector<std::uint64_t>& v) {
  return v.empty() ? 0.0 : static_cast<double>(*std::max_element(v.begin(), v.end()));
}

void print_percentiles(const char* what, std::vector<double>& ms) {
  const auto p = percentiles(ms);
  std::printf("  %-44s p50 %7.0f ms  p99 %7.0f ms  max %7.0f ms  (%zu)\n", what, p.p50, p.p99,
              p.max, p.count);
}

struct Timeline {
  double listening_ms = 0;           // the endpoint file was written
  double all_full_ms = -1;           // every agent's full set acknowledged
  double steady_answered_per_s = 0;  // beats answered per second before the kill
  std::uint64_t rss_loaded = 0;      // KiB, the restarted hub as it starts listening
  std::string load_line;             // the restarted hub's log line on reading its store
};

// The last line of the hub's log that holds `needle` ("" if none).
std::string last_log_line(const fs::path& log, std::string_view needle) {
  std::ifstream in(log);
  std::string line, found;
  while (std::getline(in, line))
    if (line.find(needle) != std::string::npos) found = line;
  return found;
}

int report(const Options& o, std::size_t total, const EmulatedFleet& fleet, ProbeStats& probe,
           const Timeline& t, std::uint64_t rss_before, std::uint64_t rss_after,
           const std::map<std::string, std::uint64_t>& counters) {
  const auto s = fleet.stats();
  const double steady_per_s =
      static_cast<double>(total) / std::chrono::duration<double>(o.beat).count();
  const double steady_per_bucket = steady_per_s * kBucketUs / 1e6;
  const double measured_per_bucket = t.steady_answered_per_s * kBucketUs / 1e6;
  print_buckets(s, steady_per_bucket);
  std::vector<double> digest_ms, full_ms;
  std::size_t never = 0;
  fleet.confirmation_times(digest_ms, full_ms, never);
  std::printf("\nrestart (%s), times since the new hub's exec:\n",
              o.graceful ? "SIGTERM" : "SIGKILL");
  std::printf("  listening (endpoint written)                 %7.0f ms\n", t.listening_ms);
  std::printf("  first complete answer to a Query             %7lld ms\n",
              static_cast<long long>(probe.first_correct_ms));
  if (!t.load_line.empty()) std::printf("  hub: %s\n", t.load_line.c_str());
  print_percentiles("agent's digest taken by the new epoch", digest_ms);
  print_percentiles("agent's full set acknowledged (confirmed)", full_ms);
  std::printf("  every agent confirmed: %s (%zu of %zu never)\n",
              t.all_full_ms < 0
                  ? "no"
                  : (std::to_string(static_cast<long long>(t.all_full_ms)) + " ms").c_str(),
              never, total);
  std::printf(
      "full re-sends per 100 ms: peak offered %s, peak answered %s; steady N/I %s (%.2fx / "
      "%.2fx); beats answered before the kill %s (%.2fx / %.2fx)\n",
      si(peak(s.full_offered)).c_str(), si(peak(s.full_answered)).c_str(),
      si(steady_per_bucket).c_str(), peak(s.full_offered) / steady_per_bucket,
      peak(s.full_answered) / steady_per_bucket, si(measured_per_bucket).c_str(),
      peak(s.full_offered) / measured_per_bucket, peak(s.full_answered) / measured_per_bucket);
  std::printf(
      "beats: %llu lost (in flight when the connection went; %llu of them unanswered for %lld s), "
      "%llu unsent while down (%llu link losses), %llu shed (busy), %llu full sets asked for "
      "after the exec (%llu before: leases run out while registering), %llu re-sends "
      "scheduled, %llu frames sent after the exec; longest granted interval %u ms; %llu "
      "regular beats sent >100 ms late (max %.0f ms)\n",
      static_cast<unsigned long long>(s.lost), static_cast<unsigned long long>(s.timed_out),
      static_cast<long long>(kFrameTimeoutUs / 1'000'000),
      static_cast<unsigned long long>(s.unsent), static_cast<unsigned long long>(s.link_downs),
      static_cast<unsigned long long>(s.shed), static_cast<unsigned long long>(s.full_requested),
      static_cast<unsigned long long>(s.full_requested_before),
      static_cast<unsigned long long>(s.resends_scheduled),
      static_cast<unsigned long long>(s.frames_after_exec), s.max_interval_ms,
      static_cast<unsigned long long>(s.late_100ms), static_cast<double>(s.max_late_us) / 1000.0);
  std::printf(
      "hub counters after (new hub): beats %llu, full_sets_received %llu, "
      "full_sets_requested %llu, frames_shed %llu, nodes_expired %llu, instances %llu\n",
      static_cast<unsigned long long>(counters.at("beats")),
      static_cast<unsigned long long>(counters.at("full_sets_received")),
      static_cast<unsigned long long>(counters.at("full_sets_requested")),
      static_cast<unsigned long long>(counters.at("frames_shed")),
      static_cast<unsigned long long>(counters.at("nodes_expired")),
      static_cast<unsigned long long>(counters.at("instances")));
  std::printf(
      "resolve prober (every %lld ms): %llu sent, %llu answered, %llu unanswered, %llu "
      "unsent (hub down), %llu misses (fewer than %zu instances; %llu before the kill, the others "
      "from %lld to %lld ms after the exec)\n",
      static_cast<long long>(o.probe.count()), static_cast<unsigned long long>(probe.sent),
      static_cast<unsigned long long>(probe.answered),
      static_cast<unsigned long long>(probe.unanswered),
      static_cast<unsigned long long>(probe.unsent), static_cast<unsigned long long>(probe.misses),
      kResolveInstances, static_cast<unsigned long long>(probe.misses_before_exec),
      static_cast<long long>(probe.first_miss_ms), static_cast<long long>(probe.last_miss_ms));
  print_percentiles("resolve round trip after the exec", probe.rtt_ms);
  std::printf(
      "hub RSS: %.1f MiB before the kill, %.1f MiB once restarted and listening, %.1f MiB after "
      "every agent was confirmed\n",
      static_cast<double>(rss_before) / 1024, static_cast<double>(t.rss_loaded) / 1024,
      static_cast<double>(rss_after) / 1024);
  std::printf("load average at end: %s\n\n", load_average().c_str());

  Verdicts v;
  v.line(peak(s.full_answered) <= 2 * steady_per_bucket,
         "peak full re-sends answered per 100 ms <= 2x steady (" + si(peak(s.full_answered)) +
             " vs " + si(2 * steady_per_bucket) + ")");
  v.line(probe.misses == 0,
         "resolve never short of instances (" + std::to_string(probe.misses) + " misses)");
  v.line(never == 0 && t.all_full_ms >= 0, "every agent confirmed by the new epoch");
  if (s.unmatched != 0)
    throw std::runtime_error(std::to_string(s.unmatched) +
                             " replies answered no frame sent; first: " + s.first_unmatched);
  v.line(s.full_requested == 0 && counters.at("nodes_expired") == 0,
         "nothing lost from SQLite (no full set asked for, no node expired)");
  return 0;
}

int run(const Options& o) {
  const BenchClock clock;
  RestartMark mark;
  TempDir dir("cascade-restart-scale");
  std::printf(
      "cascade_restart_scale_bench: %zu agents + %zu resolve-target owners, interval %lld "
      "ms, %zu senders, batch %zu, window %zu, %s\n  cpu %s x%u, load average at start %s\n",
      o.agents, kResolveInstances, static_cast<long long>(o.beat.count()), o.senders, o.batch,
      o.window, o.graceful ? "graceful (SIGTERM)" : "crash (SIGKILL)", cpu_model().c_str(),
      std::thread::hardware_concurrency(), load_average().c_str());
  auto hub = start_hub(o, dir.path(), "tcp://127.0.0.1:*", false);
  const std::string endpoint = hub->endpoint();  // fixed from now on: the restart binds it again
  Nodes nodes(o.agents, o.services);
  register_all(nodes, endpoint, o);

  EmulatedFleet fleet(nodes, o, SenderConfig{endpoint, o.beat, o.batch, o.window}, clock, mark);
  ResolveProber prober(endpoint, o.probe, clock, mark);
  const double settle_s = settle(fleet, o);
  const auto answered_before = fleet.answered();
  std::this_thread::sleep_for(o.steady);
  fleet.throw_if_failed();
  const auto rss_before = hub->rss();
  const double steady_s = std::chrono::duration<double>(o.steady).count();
  Timeline t;
  t.steady_answered_per_s = static_cast<double>(fleet.answered() - answered_before) / steady_s;
  std::printf(
      "steady beats before the kill: %s/s answered (N/I = %s/s), interval granted %u ms "
      "(%.1f s after the registration for the grant to settle)\n",
      si(t.steady_answered_per_s).c_str(),
      si(static_cast<double>(nodes.size()) * 1000.0 / static_cast<double>(o.beat.count())).c_str(),
      fleet.granted_ms(), settle_s);
  std::fflush(stdout);

  progress("cascade_restart_scale_bench", o.graceful ? "stopping the hub" : "killing the hub");
  o.graceful ? hub->stop() : hub->crash();
  std::this_thread::sleep_for(o.down);
  const auto exec = SteadyClock::now();
  mark.exec_us = clock.now_us();
  hub = start_hub(o, dir.path(), endpoint, true);
  hub->endpoint(std::chrono::seconds(300));  // it binds once it loaded 1M rows
  t.listening_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - exec).count();
  t.rss_loaded = hub->rss();
  t.load_line = last_log_line(dir.path() / "hub.log", "read the store in");
  await_confirmations(fleet, nodes.size(), exec, o.patience);
  if (fleet.confirmed_full() == nodes.size())
    t.all_full_ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - exec).count();
  std::this_thread::sleep_for(o.beat);  // one more interval: the tail of the re-send rate
  const auto rss_after = hub->rss();
  auto probe = prober.stop();
  fleet.stop();
  const auto counters = hub_counters(HubAccess::plain(endpoint));
  return report(o, nodes.size(), fleet, probe, t, rss_before, rss_after, counters);
}

}  // namespace
}  // namespace cascade::bench

int main(int argc, char** argv) {
  return cascade::bench::bench_main<cascade::bench::Options>(
      argc, argv, "cascade_restart_scale_bench", "restart-scale-bench", cascade::bench::parse,
      cascade::bench::run);
}
