#pragma once
// Measures how long a hub takes to answer, from a thread and a socket of its
// own: one Query for a service nobody registered every `period`. The hub
// answers it from the same serving thread and queue as beats, so its round
// trip is what a beat waits there, without the queue of a bench's agent
// fleet (whose driver thread may be the busier one) on top.

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/in_process_hub.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::bench {

class LatencyProber {
 public:
  LatencyProber(std::string endpoint, std::chrono::milliseconds period)
      : thread_([this, endpoint = std::move(endpoint), period] { run(endpoint, period); }) {}
  ~LatencyProber() {
    stop_ = true;
    thread_.join();
  }
  LatencyProber(const LatencyProber&) = delete;
  LatencyProber& operator=(const LatencyProber&) = delete;

  // Round trips (ms) of the queries sent within [from, to].
  std::vector<double> between(SteadyTime from, SteadyTime to) {
    std::lock_guard lock(mu_);
    std::vector<double> out;
    for (const auto& [at, ms] : samples_)
      if (at >= from && at <= to) out.push_back(ms);
    return out;
  }
  // Queries the hub never answered within the probe's timeout.
  std::size_t unanswered() const { return unanswered_; }

 private:
  void run(const std::string& endpoint, std::chrono::milliseconds period) {
    pthread_setname_np(pthread_self(), "latency-prober");  // found by name in a profile
    HubProbe probe(endpoint, std::chrono::seconds(10));
    proto::Query query;
    query.node_id = "latency-prober";
    query.service = proto::ServiceKey{"latency-prober-absent", std::string(proto::kDefaultGroup)};
    while (!stop_) {
      const auto sent = std::chrono::steady_clock::now();
      try {
        probe.request(query);
        const auto ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - sent)
                .count();
        std::lock_guard lock(mu_);
        samples_.emplace_back(sent, ms);
      } catch (const std::exception&) {
        ++unanswered_;
      }
      std::this_thread::sleep_until(sent + period);
    }
  }

  std::mutex mu_;
  std::vector<std::pair<SteadyTime, double>> samples_;
  std::atomic<std::size_t> unanswered_{0};
  std::atomic<bool> stop_{false};
  std::thread thread_;  // last: starts once the members above exist
};

}  // namespace cascade::bench
