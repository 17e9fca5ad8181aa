#pragma once
// The applications' calls in a simulation: each consumer calls one service
// every `period`, picking among its agent's candidates (AgentPool::candidates:
// eligible, confirmed first, nearest tier) in round-robin order. A call the
// scenario's fault model says fails is reported by the agent
// (AgentCore::report_failure), as Client::call reports a failed attempt.
//
// No call crosses the network: what matters to the registry is which address
// a consumer picks and what it reports, not the call itself. The fault model
// stands for the provider side (a provider that times out, a link down).
//
// `WorldT` is World or TieredWorld (at, now, running, candidates and
// report_failure are AgentWorld's; each has config().seed). Every consumer
// starts at a random phase within one period and a random place in the round
// robin, both drawn from a generator seeded from the world's seed: one seed,
// one run.
// Thread-safety: none.

#include <cstdint>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/common/random.hpp"
#include "cascade/sim/seed.hpp"

namespace cascade::sim {

// One call as the application made it.
struct Call {
  MonoTime at{};
  std::size_t consumer = 0;  // agent index
  proto::Instance picked{};  // as the consumer's cache listed it
  bool failed = false;
};

struct CallLoadStats {
  std::uint64_t calls = 0;
  std::uint64_t failed = 0;        // each one reported
  std::uint64_t no_candidate = 0;  // the consumer had nothing to pick
};

template <typename WorldT>
class CallLoad {
 public:
  // Whether a call made now to `address` by `consumer` fails.
  using Fails = std::function<bool(MonoTime now, std::size_t consumer, const std::string& address)>;
  // Sees every call, after it was made (and reported if it failed).
  using OnCall = std::function<void(const Call&)>;

  CallLoad(WorldT& world, proto::ServiceKey service, std::vector<std::size_t> consumers,
           Duration period, Fails fails, OnCall on_call = {})
      : world_(world),
        service_(std::move(service)),
        consumers_(std::move(consumers)),
        period_(period),
        fails_(std::move(fails)),
        on_call_(std::move(on_call)),
        rng_(stream_seed(world.config().seed, kCallStream)),
        next_(consumers_.size()) {}
  CallLoad(const CallLoad&) = delete;
  CallLoad& operator=(const CallLoad&) = delete;

  // Every consumer makes its first call within one period from now.
  void start() {
    ++life_;
    for (std::size_t i = 0; i < consumers_.size(); ++i) {
      next_[i] = static_cast<std::size_t>(rng_.uniform(0, 1'000'000));
      schedule(i, Duration{rng_.uniform(0, period_.count() - 1)});
    }
  }
  void stop() { ++life_; }  // calls already scheduled are not made

  const CallLoadStats& stats() const { return stats_; }

 private:
  void schedule(std::size_t i, Duration delay) {
    world_.at(world_.now() + delay, [this, i, life = life_] {
      if (life != life_) return;
      call(i);
      schedule(i, period_);
    });
  }

  void call(std::size_t i) {
    const std::size_t consumer = consumers_[i];
    if (!world_.running(consumer)) return;
    const auto candidates = world_.candidates(consumer, service_);
    if (candidates.empty()) {
      ++stats_.no_candidate;
      return;
    }
    Call c{world_.now(), consumer, candidates[next_[i]++ % candidates.size()], false};
    ++stats_.calls;
    if (fails_ && fails_(c.at, consumer, c.picked.address)) {
      c.failed = true;
      ++stats_.failed;
      world_.report_failure(consumer, service_, c.picked.address);
    }
    if (on_call_) on_call_(c);
  }

  WorldT& world_;
  proto::ServiceKey service_;
  std::vector<std::size_t> consumers_;
  Duration period_;
  Fails fails_;
  OnCall on_call_;
  Rng rng_;
  std::vector<std::size_t> next_;  // per consumer: its round robin's counter
  std::uint64_t life_ = 0;
  CallLoadStats stats_;
};

}  // namespace cascade::sim
