#pragma once
// The resolve prober of cascade_restart_scale_bench: a Query for the resolve
// target every few milliseconds on a connection of its own, counting every
// answer short of the target's instances (a registration missing from resolve).
// Header-only; one translation unit includes it.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/beat_fleet.hpp"
#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/restart_agents.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {

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

}  // namespace cascade::bench
