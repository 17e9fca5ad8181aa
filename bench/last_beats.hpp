#pragma once
// A FleetObserver that keeps when each agent of a fleet last sent a beat: a
// killed agent's lease runs out one lease after it (cascade_push_bench).

#include <mutex>
#include <variant>
#include <vector>

#include "cascade/bench/fast_fail_fleet.hpp"

namespace cascade::bench {

class LastBeats : public FleetObserver {
 public:
  explicit LastBeats(std::size_t agents) : last_(agents) {}
  void on_sent(std::size_t agent, const proto::Message& message, SteadyTime at) override {
    if (!std::holds_alternative<proto::UpBeat>(message)) return;
    std::lock_guard lock(mu_);
    last_[agent] = at;
  }
  SteadyTime last_beat(std::size_t agent) {
    std::lock_guard lock(mu_);
    return last_[agent];
  }

 private:
  std::mutex mu_;
  std::vector<SteadyTime> last_;
};

}  // namespace cascade::bench
