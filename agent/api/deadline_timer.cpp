#include "cascade/agent/api/deadline_timer.hpp"

namespace cascade::agent::api {

namespace {

// Looked at this often even with nothing due: a clock that moved without a
// poke is noticed within a second.
constexpr Duration kIdleWake{1000};

}  // namespace

DeadlineTimer::DeadlineTimer(const Clock& clock, Next next, Fire fire)
    : clock_(clock), next_(std::move(next)), fire_(std::move(fire)), thread_([this] { run(); }) {}

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void DeadlineTimer::poke() {
  {
    std::lock_guard lock(mu_);
    poked_ = true;
  }
  cv_.notify_all();
}

void DeadlineTimer::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    poked_ = false;
    lock.unlock();
    const auto now = clock_.now();
    const auto due = std::min(next_().value_or(now + kIdleWake), now + kIdleWake);
    if (due <= now) fire_(now);
    lock.lock();
    if (due > now) cv_.wait_for(lock, due - now, [this] { return stop_ || poked_; });
  }
}

}  // namespace cascade::agent::api
