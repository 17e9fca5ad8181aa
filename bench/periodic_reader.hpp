#pragma once
// A reader that reads a server's state once per period on a thread of its
// own and records each read's round trip: what a monitoring poll (cascadectl
// status, a scrape of a metrics endpoint) does beside the load a benchmark
// measures. The read is any callable doing one whole read (send, wait for
// the answer, check it) that throws on a wrong or missing answer, so another
// kind of read plugs in as another PeriodicReader. Header-only.

#include <pthread.h>

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "cascade/bench/beat_fleet.hpp"

namespace cascade::bench {

class PeriodicReader {
 public:
  struct Report {
    std::string name;
    std::size_t reads = 0;
    LatencyUs latency;  // per read, start to checked answer
  };

  // `read` runs on the reader's thread only, between start() and stop(). A
  // ZeroMQ socket it uses may be created before start(): a socket may move to
  // another thread across a full fence, which starting the thread is.
  PeriodicReader(std::string name, std::chrono::milliseconds period, std::function<void()> read)
      : name_(std::move(name)), period_(period), read_(std::move(read)) {}
  ~PeriodicReader() { stop(); }
  PeriodicReader(const PeriodicReader&) = delete;
  PeriodicReader& operator=(const PeriodicReader&) = delete;

  // The first read at once, then one per period on an absolute schedule: a
  // read that overran its period delays the next, it does not cause a burst.
  void start() {
    thread_ = std::thread([this] {
      pthread_setname_np(pthread_self(), ("read-" + name_).substr(0, 15).c_str());
      run();
    });
  }
  // Waits for the read in progress to finish.
  void stop() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    if (thread_.joinable()) thread_.join();
  }
  // After stop(): the round trips, or the first read's failure thrown.
  Report report() const {
    if (!error_.empty()) throw std::runtime_error("reader " + name_ + ": " + error_);
    return {name_, round_trips_ns_.size(), latency_us(round_trips_ns_)};
  }

 private:
  void run() {
    auto next = SteadyClock::now();
    std::unique_lock lock(mutex_);
    while (!stopping_) {
      lock.unlock();
      const auto start = SteadyClock::now();
      try {
        read_();
      } catch (const std::exception& e) {
        error_ = e.what();
        return;
      }
      round_trips_ns_.push_back(ns_between(start, SteadyClock::now()));
      next = std::max(next + period_, SteadyClock::now());
      lock.lock();
      wake_.wait_until(lock, next, [this] { return stopping_; });
    }
  }

  std::string name_;
  std::chrono::milliseconds period_;
  std::function<void()> read_;
  std::thread thread_;
  std::mutex mutex_;
  std::condition_variable wake_;
  bool stopping_ = false;                     // guarded by mutex_
  std::vector<std::int64_t> round_trips_ns_;  // the reader thread's until it is joined
  std::string error_;                         // likewise
};

}  // namespace cascade::bench
