#pragma once
// A simulated fleet beating one hub over ZeroMQ tcp loopback, and the timed
// phases that measure it: registration with full-set beats, steady-state
// digest-only beats (--batch per frame or one per frame) from pipelining
// DEALER senders, and Query round trips. Every reply is matched to its frame
// and a sample is decoded and checked, so a hub answering fast but wrongly
// fails the run. Shared by cascade_hub_bench and cascade_curve_bench; the
// clients dial in plain text or, given keys, as CurveZMQ clients with a key
// per sender thread (HubAccess). Header-only.

#include <pthread.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/bench/thread_cpu.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/digest.hpp"
#include "cascade/common/frame_peek.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {

using SteadyClock = std::chrono::steady_clock;
using TimePoint = SteadyClock::time_point;

inline constexpr auto kReplyTimeout = std::chrono::seconds(20);
inline constexpr std::uint64_t kCheckEvery = 16;  // decode and verify one reply frame in this many
inline constexpr std::size_t kResolveInstances = 20;
inline constexpr const char* kResolveService = "resolve-svc";

// ---------------------------------------------------------------- measuring

struct LatencyUs {
  double p50_us = 0;
  double p99_us = 0;
  double max_us = 0;
};

// Round trips in nanoseconds -> nearest-rank percentiles in microseconds.
inline LatencyUs latency_us(const std::vector<std::int64_t>& ns) {
  std::vector<double> us(ns.size());
  std::transform(ns.begin(), ns.end(), us.begin(),
                 [](std::int64_t v) { return static_cast<double>(v) / 1000.0; });
  const auto p = percentiles(us);
  return {p.p50, p.p99, p.max};
}

inline double seconds_between(TimePoint a, TimePoint b) {
  return std::chrono::duration<double>(b - a).count();
}

inline std::int64_t ns_between(TimePoint a, TimePoint b) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(b - a).count();
}

// ---------------------------------------------------------------- dialling the hub

// How the benchmark's clients reach one hub: in plain text (no keys), or each
// sender thread as a CurveZMQ client with a key of its own, so that the nodes
// a sender beats for are bound to its key as an agent's are (the hub checks
// every beat against that binding). The reader key resolves and asks for the
// hub's counters; the sender keys own the nodes.
struct HubAccess {
  std::string endpoint;
  std::vector<CurveClientKey> senders;  // sender s dials as senders[s]; empty: plain text
  std::optional<CurveClientKey> reader;
  // ZMQ_THREAD_NAME_PREFIX of the clients' context, so that its I/O thread
  // (where a client encrypts) is measured apart; 0: unnamed, not measured.
  int client_io_prefix = 0;

  static HubAccess plain(std::string endpoint) {
    HubAccess a;
    a.endpoint = std::move(endpoint);
    return a;
  }
  const CurveClientKey* sender_key(std::size_t s) const {
    return senders.empty() ? nullptr : &senders.at(s);
  }
  const CurveClientKey* reader_key() const { return reader ? &*reader : nullptr; }
};

// A DEALER with deep queues (the senders pipeline) and a reply timeout,
// dialling as `key` (plain text when nullptr).
inline zmq::socket_t connect_dealer(zmq::context_t& context, const std::string& endpoint,
                                    const CurveClientKey* key = nullptr) {
  zmq::socket_t s(context, zmq::socket_type::dealer);
  s.set(zmq::sockopt::linger, 0);
  s.set(zmq::sockopt::rcvtimeo, static_cast<int>(std::chrono::milliseconds(kReplyTimeout).count()));
  s.set(zmq::sockopt::sndhwm, 100'000);
  s.set(zmq::sockopt::rcvhwm, 100'000);
  dial_as(s, key);
  s.connect(endpoint);
  return s;
}

// The hub's counters (and instances, nodes), asked on a socket of their own.
inline std::map<std::string, std::uint64_t> hub_counters(const HubAccess& access) {
  return HubProbe(access.endpoint, kReplyTimeout, access.reader_key()).counters();
}

// ---------------------------------------------------------------- one pipelined DEALER

// What a sender saw: replies inside the measured interval, round trips of the
// frames sent inside it, and replies that failed their check.
struct Flow {
  std::uint64_t frames = 0;        // replies received inside the interval
  std::uint64_t frames_total = 0;  // every frame answered, warm-up and drain included
  std::vector<std::int64_t> latency_ns;
  std::uint64_t bad = 0;
  std::string first_problem;
  std::uint64_t shed = 0;  // frames the hub answered busy (sent again when it asked)
};

struct Interval {
  TimePoint measure_from;
  TimePoint stop_sending;
};

// A hub's busy answer to a whole frame (protocol section 5.18), or null.
inline const proto::ErrorReply* whole_frame_busy(const proto::DecodedFrame& frame) {
  if (frame.batched || frame.items.size() != 1) return nullptr;
  const auto* message = std::get_if<proto::Message>(&frame.items[0]);
  const auto* error = message ? std::get_if<proto::ErrorReply>(message) : nullptr;
  return error && error->code == proto::ErrorCode::kBusy ? error : nullptr;
}

// The wait a busy answer asks for, plus up to half as much again, as an
// agent spreads it (`spread_seed`: any random number).
inline Duration busy_backoff(const proto::ErrorReply& busy, std::uint64_t spread_seed) {
  const auto after = static_cast<std::int64_t>(busy.retry_after_ms);
  return Duration{after + static_cast<std::int64_t>(spread_seed % (after / 2 + 1))};
}

// The wait a reply asks for when it is a busy answer to the whole frame;
// only an ErrorReply's frame is decoded here (check() decodes the others).
inline std::optional<Duration> busy_wait_of(const zmq::message_t& reply,
                                            std::uint64_t spread_seed) {
  if (proto::peek_type(reply.to_string_view()) != proto::MsgType::kError) return std::nullopt;
  const auto frame = proto::decode_frame(reply.to_string_view());
  const auto* busy = whole_frame_busy(frame);
  return busy ? std::optional(busy_backoff(*busy, spread_seed)) : std::nullopt;
}

// Keeps `window` frames in flight on one DEALER until the interval ends or
// `max_frames` were sent, then waits for the rest. make(frame_no) builds frame
// number frame_no; check(frame_no, reply, problem) judges its reply. Replies
// on one DEALER arrive in the order sent (one ROUTER peer, one queue). A
// frame the hub shed (busy) is made and sent again once the wait it asked
// for has passed, as an agent does; it counts in `shed`, not as answered.
template <typename Make, typename Check>
Flow pump(zmq::socket_t& socket, std::size_t window, Interval interval, std::uint64_t max_frames,
          Make&& make, Check&& check) {
  Flow flow;
  std::deque<std::pair<TimePoint, std::uint64_t>> in_flight;
  std::deque<std::pair<TimePoint, std::uint64_t>> shed;  // due to be sent again, in order
  std::uint64_t next = 0;
  const auto send = [&](std::uint64_t frame_no) {
    zmq::message_t frame = make(frame_no);
    const auto sent_at = SteadyClock::now();
    if (!socket.send(frame, zmq::send_flags::none)) throw std::runtime_error("send failed");
    in_flight.emplace_back(sent_at, frame_no);
  };
  for (;;) {
    const auto now = SteadyClock::now();
    const bool open = now < interval.stop_sending;
    while (open && !shed.empty() && shed.front().first <= now && in_flight.size() < window) {
      send(shed.front().second);
      shed.pop_front();
    }
    while (open && next < max_frames && in_flight.size() < window)
      send(next++);
    if (in_flight.empty()) {
      if (!open || shed.empty()) break;
      std::this_thread::sleep_until(shed.front().first);
      continue;
    }
    zmq::message_t reply;
    if (!socket.recv(reply, zmq::recv_flags::none))
      throw std::runtime_error("no reply within " + std::to_string(kReplyTimeout.count()) + " s");
    const auto done = SteadyClock::now();
    const auto [sent_at, frame_no] = in_flight.front();
    in_flight.pop_front();
    if (const auto wait = busy_wait_of(reply, frame_no * 0x9E3779B97F4A7C15ull >> 33)) {
      ++flow.shed;
      const auto due = done + *wait;
      shed.insert(std::upper_bound(shed.begin(), shed.end(), std::pair{due, frame_no}),
                  {due, frame_no});
      continue;
    }
    ++flow.frames_total;
    std::string problem;
    if (!check(frame_no, reply, problem)) {
      if (flow.bad++ == 0) flow.first_problem = std::move(problem);
    }
    if (done >= interval.measure_from && done <= interval.stop_sending) ++flow.frames;
    if (sent_at >= interval.measure_from && sent_at < interval.stop_sending)
      flow.latency_ns.push_back(ns_between(sent_at, done));
  }
  return flow;
}

// Runs body(sender_index) on `n` threads and merges their flows.
inline Flow run_senders(std::size_t n, const std::function<Flow(std::size_t)>& body) {
  std::vector<Flow> flows(n);
  std::vector<std::string> errors(n);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < n; ++i)
    threads.emplace_back([&, i] {
      pthread_setname_np(pthread_self(), ("sender-" + std::to_string(i)).c_str());
      try {
        flows[i] = body(i);
      } catch (const std::exception& e) {
        errors[i] = e.what();
      }
    });
  for (auto& t : threads)
    t.join();
  Flow all;
  for (std::size_t i = 0; i < n; ++i) {
    if (!errors[i].empty())
      throw std::runtime_error("sender " + std::to_string(i) + ": " + errors[i]);
    all.frames += flows[i].frames;
    all.frames_total += flows[i].frames_total;
    all.bad += flows[i].bad;
    all.shed += flows[i].shed;
    if (all.first_problem.empty()) all.first_problem = flows[i].first_problem;
    all.latency_ns.insert(all.latency_ns.end(), flows[i].latency_ns.begin(),
                          flows[i].latency_ns.end());
  }
  return all;
}

// Sender s of `senders` owns nodes [lo, hi) of [from, to): contiguous slices,
// so registration and steady beats over the same range split it alike (with
// keys, a node must beat from the sender whose key registered it).
inline std::pair<std::size_t, std::size_t> sender_slice(std::size_t from, std::size_t to,
                                                        std::size_t senders, std::size_t s) {
  const std::size_t per_sender = (to - from + senders - 1) / senders;
  const std::size_t lo = std::min(to, from + s * per_sender);
  return {lo, std::min(to, lo + per_sender)};
}

// ---------------------------------------------------------------- the simulated fleet

// Node i provides one instance of service "svc-<i mod services>"; its id is
// the node id. Node ids are "n" + digits, id_bytes long: the default 9 fits
// std::string's inline buffer, which real host names do not, so memory
// figures with the default lean optimistic (--id-bytes 36 shows the cost).
//
// With realistic names (--realistic-names) the shapes follow a production
// fleet instead: 8-byte node ids, a 36-byte UUID per instance, service names
// of 30 to 60 bytes, 16-to-20-byte addresses and two metadata pairs.
class Fleet {
 public:
  Fleet(std::size_t capacity, std::size_t services, std::size_t id_bytes, bool realistic = false)
      : services_(services),
        id_bytes_(realistic ? kRealisticNodeIdBytes : id_bytes),
        realistic_(realistic),
        service_names_(service_names(services, realistic)),
        digests_(capacity, 0) {}

  std::string node_id(std::size_t i) const {
    std::string id(id_bytes_, '0');
    id[0] = 'n';
    for (std::size_t pos = id.size() - 1; i != 0 && pos > 0; --pos, i /= 10)
      id[pos] = static_cast<char>('0' + i % 10);
    return id;
  }

  proto::Registration registration(std::size_t i) const {
    proto::Registration r;
    r.service.name = service_names_[i % services_];
    r.instance.id = realistic_ ? uuid(i) : node_id(i);
    r.instance.address = realistic_ ? realistic_address(i) : address(i, 8080);
    r.instance.zone = i % 3 == 0 ? "zone-a" : (i % 3 == 1 ? "zone-b" : "zone-c");
    r.instance.metadata.emplace("version", "1.4.2");
    if (realistic_) r.instance.metadata.emplace("protocol", i % 2 == 0 ? "grpc" : "http");
    return r;
  }

  // The registration beat of node i; remembers the digest it carries.
  proto::UpBeat registration_beat(std::size_t i) {
    std::vector<proto::Registration> set{registration(i)};
    proto::canonicalize(set);
    proto::UpBeat b;
    b.node_id = node_id(i);
    b.epoch = 1;
    b.seq = 1;
    b.digest = proto::digest_of(set);
    b.registrations = std::move(set);
    digests_[i] = b.digest;
    return b;
  }

  std::uint64_t digest(std::size_t i) const { return digests_[i]; }

 private:
  static constexpr std::size_t kRealisticNodeIdBytes = 8;  // "n" + 7 digits: 10M nodes

  // "svc-<s>", or a dotted name of 30..60 bytes, its length spread by s.
  static std::vector<std::string> service_names(std::size_t services, bool realistic) {
    static constexpr const char* kTeams[] = {"payments",  "checkout", "search", "identity",
                                             "inventory", "shipping", "ads",    "messaging"};
    static constexpr std::string_view kTail = "-backend-internal-api-grpc-v2-primary-endpoint";
    std::vector<std::string> names;
    for (std::size_t s = 0; s < services; ++s) {
      if (!realistic) {
        names.push_back("svc-" + std::to_string(s));
        continue;
      }
      auto name = "com.example." + std::string(kTeams[s % 8]) + ".service-" + std::to_string(s);
      const auto length = 30 + (s * 13) % 31;
      if (name.size() < length) name += kTail.substr(0, length - name.size());
      names.push_back(std::move(name));
    }
    return names;
  }
  // "172.<16..31>.b.c:<port>", distinct for every i below 2^20.
  static std::string realistic_address(std::size_t i) {
    return "172." + std::to_string(16 + ((i >> 16) & 15)) + "." + std::to_string((i >> 8) & 255) +
           "." + std::to_string(i & 255) + ":" + std::to_string(20'000 + i % 40'000);
  }
  // A version-4-shaped UUID, distinct per i: 8-4-4-4-12 hex digits.
  static std::string uuid(std::size_t i) {
    const auto a = static_cast<unsigned long long>(i) * 0x9E3779B97F4A7C15ull;
    char out[37];
    std::snprintf(out, sizeof out, "%08llx-%04llx-4%03llx-a%03llx-%012llx", a >> 32,
                  (a >> 16) & 0xffff, a & 0xfff, (a >> 52) & 0xfff,
                  static_cast<unsigned long long>(i) & 0xffffffffffffull);
    return out;
  }

  std::size_t services_;
  std::size_t id_bytes_;
  bool realistic_;
  std::vector<std::string> service_names_;
  std::vector<std::uint64_t> digests_;  // written by disjoint senders while registering
};

// The instances of the resolve target: owned by nodes "r100".."r119", which
// never beat again (the lease is long).
inline proto::UpBeat resolve_owner_beat(std::size_t k) {
  proto::Registration r;
  r.service.name = kResolveService;
  r.instance.id = "resolve-" + std::to_string(k);
  r.instance.address = "10.200.0." + std::to_string(k) + ":9000";
  r.instance.zone = "zone-a";
  r.instance.metadata.emplace("version", "1.4.2");
  std::vector<proto::Registration> set{r};
  proto::UpBeat b;
  b.node_id = "r" + std::to_string(100 + k);
  b.epoch = 1;
  b.seq = 1;
  b.digest = proto::digest_of(set);
  b.registrations = std::move(set);
  return b;
}

// Checks a reply frame holding `expected` DownBeats acknowledging first_seq,
// first_seq + step, ...; fills `problem` when it does not.
inline bool check_downbeats(const zmq::message_t& reply, bool batched, std::size_t expected,
                            std::uint64_t first_seq, std::uint64_t step, std::string& problem) {
  const auto frame = proto::decode_frame(reply.to_string_view());
  if (frame.batched != batched || frame.items.size() != expected) {
    problem = "reply holds " + std::to_string(frame.items.size()) + " messages, expected " +
              std::to_string(expected);
    return false;
  }
  for (std::size_t k = 0; k < expected; ++k) {
    const auto* msg = std::get_if<proto::Message>(&frame.items[k]);
    const auto* down = msg ? std::get_if<proto::DownBeat>(msg) : nullptr;
    if (down == nullptr) {
      const auto* err = msg ? std::get_if<proto::ErrorReply>(msg) : nullptr;
      problem = err ? "hub replied with an error: " + err->message : "reply is not a DownBeat";
      return false;
    }
    if (down->ack_seq != first_seq + k * step) {
      problem = "ack_seq " + std::to_string(down->ack_seq) + ", expected " +
                std::to_string(first_seq + k * step);
      return false;
    }
    if (down->send_full) {
      problem = "hub asked node " + down->node_id + " for its full set";
      return false;
    }
    if (!down->updates.empty()) {
      problem = "unexpected service updates for node " + down->node_id;
      return false;
    }
  }
  return true;
}

inline zmq::message_t to_message(const proto::Bytes& bytes) {
  return zmq::message_t(bytes.data(), bytes.size());
}

// ---------------------------------------------------------------- registration

// How registrations travel: sender threads (one DEALER each), full-set beats
// per frame, frames in flight per sender.
struct RegistrationLoad {
  std::size_t senders = 2;
  std::size_t batch = 1024;
  std::size_t window = 8;
};

struct RegistrationResult {
  std::size_t instances = 0;
  double seconds = 0;
  LatencyUs latency;              // per frame, send to reply
  std::uint64_t frames_shed = 0;  // answered busy by an overloaded hub, and sent again
};

// Registers nodes [from, to) with full-set beats, load.batch per frame, split
// over the senders (sender_slice); every reply is checked.
inline RegistrationResult register_nodes(zmq::context_t& context, const HubAccess& access,
                                         Fleet& fleet, std::size_t from, std::size_t to,
                                         const RegistrationLoad& load) {
  const auto start = SteadyClock::now();
  const Interval forever{start, TimePoint::max()};
  auto flow = run_senders(load.senders, [&](std::size_t s) {
    const auto [lo, hi] = sender_slice(from, to, load.senders, s);
    const std::uint64_t frames = (hi - lo + load.batch - 1) / load.batch;
    auto socket = connect_dealer(context, access.endpoint, access.sender_key(s));
    std::vector<proto::Message> beats;
    auto frame_range = [&, lo = lo, hi = hi](std::uint64_t n) {
      const std::size_t first = lo + n * load.batch;
      return std::pair{first, std::min(hi, first + load.batch)};
    };
    return pump(
        socket, load.window, forever, frames,
        [&](std::uint64_t n) {
          beats.clear();
          auto [a, b] = frame_range(n);
          for (std::size_t i = a; i < b; ++i)
            beats.emplace_back(fleet.registration_beat(i));
          // One per frame is how an agent registers: a lone message, not a batch of one.
          return to_message(load.batch == 1 ? proto::encode(beats.front())
                                            : proto::encode_batch(beats));
        },
        [&](std::uint64_t n, const zmq::message_t& reply, std::string& problem) {
          auto [a, b] = frame_range(n);
          return check_downbeats(reply, load.batch > 1, b - a, 1, 0, problem);
        });
  });
  if (flow.bad != 0)
    throw std::runtime_error(std::to_string(flow.bad) +
                             " registration replies were wrong; first: " + flow.first_problem);
  return {to - from, seconds_between(start, SteadyClock::now()), latency_us(flow.latency_ns),
          flow.shed};
}

// Registers the resolve target's 20 instances in one frame (from sender 0's key).
inline void register_resolve_target(zmq::context_t& context, const HubAccess& access) {
  std::vector<proto::Message> beats;
  for (std::size_t k = 0; k < kResolveInstances; ++k)
    beats.emplace_back(resolve_owner_beat(k));
  auto socket = connect_dealer(context, access.endpoint, access.sender_key(0));
  const auto bytes = proto::encode_batch(beats);
  if (!socket.send(zmq::buffer(bytes), zmq::send_flags::none))
    throw std::runtime_error("send failed");
  zmq::message_t reply;
  std::string problem;
  if (!socket.recv(reply, zmq::recv_flags::none))
    throw std::runtime_error("resolve target not acknowledged");
  if (!check_downbeats(reply, true, kResolveInstances, 1, 0, problem))
    throw std::runtime_error("resolve target: " + problem);
}

// ---------------------------------------------------------------- steady-state beats

// Digest-only beats from nodes [0, population): sender s owns a contiguous
// slice and walks it round robin, `batch` consecutive nodes per frame. Beat j
// of a sender carries seq = seq_base + j, so every node's seq only grows.
class SteadyBeats {
 public:
  SteadyBeats(const Fleet& fleet, std::size_t lo, std::size_t hi, std::size_t batch,
              const std::vector<proto::ServiceUse>& uses, std::uint64_t seq_base)
      : fleet_(fleet), lo_(lo), span_(hi - lo), batch_(batch), seq_base_(seq_base) {
    beats_.resize(batch);
    for (auto& m : beats_) {
      proto::UpBeat b;
      b.epoch = 1;
      b.uses = uses;
      m = std::move(b);
    }
  }

  zmq::message_t frame(std::uint64_t n) {
    for (std::size_t k = 0; k < batch_; ++k) {
      const std::uint64_t j = n * batch_ + k;
      const std::size_t node = lo_ + static_cast<std::size_t>(j % span_);
      auto& b = std::get<proto::UpBeat>(beats_[k]);
      b.node_id = fleet_.node_id(node);
      b.seq = seq_base_ + j;
      b.digest = fleet_.digest(node);
    }
    if (batch_ == 1) {
      out_.clear();
      proto::encode_into(beats_[0], out_);
      return to_message(out_);
    }
    return to_message(proto::encode_batch(beats_));
  }

  bool check(std::uint64_t n, const zmq::message_t& reply, std::string& problem) const {
    if (n % kCheckEvery != 0) return reply.size() != 0;
    return check_downbeats(reply, batch_ > 1, batch_, seq_base_ + n * batch_, 1, problem);
  }

 private:
  const Fleet& fleet_;
  std::size_t lo_;
  std::size_t span_;
  std::size_t batch_;
  std::uint64_t seq_base_;
  std::vector<proto::Message> beats_;
  proto::Bytes out_;
};

struct PhaseResult {
  std::size_t frame_bytes = 0;
  double frames_per_s = 0;
  LatencyUs latency;
  double server_cpu = 0;     // CPU seconds of the serving thread per wall second
  double server_sys = 0;     // ... of which in the kernel
  double server_io_cpu = 0;  // ... of the server's ZeroMQ I/O thread (0: not named, not measured)
  double client_io_cpu = 0;  // ... of the clients' ZeroMQ I/O thread (0: not named, not measured)
  double process_cpu = 0;    // CPU seconds of the whole bench process per wall second
};

// The byte size of a steady-state frame of `batch` beats (seq values as in a run).
inline std::size_t steady_frame_bytes(const Fleet& fleet, std::size_t population, std::size_t batch,
                                      const std::vector<proto::ServiceUse>& uses) {
  SteadyBeats probe(fleet, 0, population, batch, uses, 1'000'000);
  return probe.frame(0).size();
}

// ---------------------------------------------------------------- timed phases

// How hard a timed phase drives the server: sender threads (one DEALER each)
// for `seconds` measured, after a warm-up of a fifth of that.
struct Load {
  std::size_t senders = 2;
  double seconds = 5;
};

// CPU seconds read from clocks that only grow: a server thread's (total and
// kernel part), its ZeroMQ I/O thread's, the clients' I/O thread's, the
// whole process's.
struct CpuSample {
  CpuTime server;
  double io = 0;
  double client_io = 0;
  double process = 0;
};

// The CPU the server (thread and I/O thread) and the whole process used
// inside an interval, sampled by a thread of its own so the senders are not
// delayed.
class CpuWindow {
 public:
  CpuWindow(Interval interval, std::function<CpuSample()> sample)
      : seconds_(seconds_between(interval.measure_from, interval.stop_sending)),
        thread_([this, interval, sample = std::move(sample)] {
          std::this_thread::sleep_until(interval.measure_from);
          first_ = sample();
          std::this_thread::sleep_until(interval.stop_sending);
          last_ = sample();
        }) {}
  ~CpuWindow() {
    if (thread_.joinable()) thread_.join();
  }
  CpuWindow(const CpuWindow&) = delete;
  CpuWindow& operator=(const CpuWindow&) = delete;

  // Waits for the interval to end; CPU seconds per wall second.
  CpuSample result() {
    thread_.join();
    CpuSample u;
    u.server.total = (last_.server.total - first_.server.total) / seconds_;
    u.server.sys = (last_.server.sys - first_.server.sys) / seconds_;
    u.io = (last_.io - first_.io) / seconds_;
    u.client_io = (last_.client_io - first_.client_io) / seconds_;
    u.process = (last_.process - first_.process) / seconds_;
    return u;
  }

 private:
  double seconds_;
  CpuSample first_, last_;
  std::thread thread_;
};

// A CPU sampler for a server whose thread's CPU server_cpu() reads (its I/O
// thread's, if io_cpu is given; the clients' I/O thread's, if named).
inline std::function<CpuSample()> cpu_sampler(std::function<CpuTime()> server_cpu,
                                              std::function<double()> io_cpu = {},
                                              int client_io_prefix = 0) {
  return [server_cpu = std::move(server_cpu), io_cpu = std::move(io_cpu), client_io_prefix] {
    return CpuSample{server_cpu(), io_cpu ? io_cpu() : 0.0, zmq_io_thread_cpu(client_io_prefix),
                     cpu_seconds(CLOCK_PROCESS_CPUTIME_ID)};
  };
}

inline Interval next_interval(double seconds) {
  const auto start = SteadyClock::now();
  auto after = [&](double s) {
    return start +
           std::chrono::duration_cast<SteadyClock::duration>(std::chrono::duration<double>(s));
  };
  return {after(seconds * 0.2), after(seconds * 1.2)};
}

// Runs one timed throughput phase: body(sender, interval) drives one socket.
inline PhaseResult timed_phase(const Load& load, std::function<CpuSample()> sample,
                               const std::function<Flow(std::size_t, Interval)>& body, Flow& flow) {
  const Interval interval = next_interval(load.seconds);
  CpuWindow cpu(interval, std::move(sample));
  flow = run_senders(load.senders, [&](std::size_t s) { return body(s, interval); });
  PhaseResult r;
  const auto use = cpu.result();
  r.server_cpu = use.server.total;
  r.server_sys = use.server.sys;
  r.server_io_cpu = use.io;
  r.client_io_cpu = use.client_io;
  r.process_cpu = use.process;
  r.frames_per_s = static_cast<double>(flow.frames) / load.seconds;
  r.latency = latency_us(flow.latency_ns);
  return r;
}

// What one steady-state beat phase sends: `batch` beats per frame from nodes
// [0, population), `window` frames in flight per sender, each beat with `uses`.
struct BeatShape {
  std::size_t population = 0;
  std::size_t batch = 64;
  std::size_t window = 4;
  std::vector<proto::ServiceUse> uses{};
};

// Steady-state beats of `shape` to `hub` through `access`. Checks the hub's
// counters against what was sent; advances seq_floor past every seq used.
inline PhaseResult measure_beats(zmq::context_t& client, const InProcessHub& hub,
                                 const HubAccess& access, const Fleet& fleet,
                                 const BeatShape& shape, std::uint64_t& seq_floor,
                                 const Load& load) {
  const auto before = hub_counters(access);
  const std::uint64_t seq_base = seq_floor;
  Flow flow;
  auto r = timed_phase(
      load,
      cpu_sampler([&] { return hub.cpu(); }, [&] { return hub.io_cpu_seconds(); },
                  access.client_io_prefix),
      [&](std::size_t s, Interval interval) {
        const auto [lo, hi] = sender_slice(0, shape.population, load.senders, s);
        if (lo == hi) return Flow{};
        SteadyBeats beats(fleet, lo, hi, shape.batch, shape.uses, seq_base);
        auto socket = connect_dealer(client, access.endpoint, access.sender_key(s));
        return pump(
            socket, shape.window, interval, UINT64_MAX,
            [&](std::uint64_t n) { return beats.frame(n); },
            [&](std::uint64_t n, const zmq::message_t& reply, std::string& problem) {
              return beats.check(n, reply, problem);
            });
      },
      flow);
  seq_floor = seq_base + flow.frames_total * shape.batch + 1;
  if (flow.bad != 0)
    throw std::runtime_error(std::to_string(flow.bad) +
                             " beat replies were wrong; first: " + flow.first_problem);
  auto after = hub_counters(access);
  auto delta = [&](const char* name) { return after[name] - before.at(name); };
  if (delta("beats") != flow.frames_total * shape.batch)
    throw std::runtime_error("hub counted " + std::to_string(delta("beats")) + " beats, sent " +
                             std::to_string(flow.frames_total * shape.batch));
  for (const char* must_stay : {"full_sets_requested", "beats_stale_seq", "decode_errors",
                                "invalid_messages", "updates_full", "updates_delta"})
    if (delta(must_stay) != 0)
      throw std::runtime_error(std::string("hub counter ") + must_stay + " moved by " +
                               std::to_string(delta(must_stay)) + " in steady state");
  r.frame_bytes = steady_frame_bytes(fleet, shape.population, shape.batch, shape.uses);
  return r;
}

// ---------------------------------------------------------------- resolve

// One Query for the resolve target on `socket`, checked; its round trip in ns.
inline std::int64_t query_round_trip(zmq::socket_t& socket, std::uint64_t request_id) {
  proto::Query query;
  query.request_id = request_id;
  query.node_id = "bench";
  query.service.name = kResolveService;
  const auto bytes = proto::encode(query);
  const auto t0 = SteadyClock::now();
  if (!socket.send(zmq::buffer(bytes), zmq::send_flags::none))
    throw std::runtime_error("send failed");
  zmq::message_t reply;
  if (!socket.recv(reply, zmq::recv_flags::none)) throw std::runtime_error("no query reply");
  const auto t1 = SteadyClock::now();
  const auto frame = proto::decode_frame(reply.to_string_view());
  const auto* msg =
      frame.items.size() == 1 ? std::get_if<proto::Message>(&frame.items[0]) : nullptr;
  const auto* r = msg ? std::get_if<proto::QueryReply>(msg) : nullptr;
  if (r == nullptr || r->request_id != request_id || r->instances.size() != kResolveInstances)
    throw std::runtime_error("wrong reply to a query for " + std::string(kResolveService));
  return ns_between(t0, t1);
}

// Query round trips for the resolve target, one in flight, on one connection.
inline LatencyUs measure_resolve(zmq::context_t& client, const HubAccess& access,
                                 std::size_t queries) {
  auto socket = connect_dealer(client, access.endpoint, access.reader_key());
  std::vector<std::int64_t> ns;
  ns.reserve(queries);
  const std::size_t warm_up = std::max<std::size_t>(50, queries / 10);
  for (std::size_t q = 0; q < warm_up + queries; ++q) {
    const auto rtt = query_round_trip(socket, q + 1);
    if (q >= warm_up) ns.push_back(rtt);
  }
  return latency_us(ns);
}

}  // namespace cascade::bench
