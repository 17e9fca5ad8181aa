#include "cascade/agent/api/watch_board.hpp"

#include <spdlog/spdlog.h>

#include <map>

namespace cascade::agent::api {

namespace {

// Watched services are marked used this often, so that the agent keeps them
// in its beats' uses however long their watches wait (well within any
// subscription TTL, at least one beat interval).
constexpr Duration kTouchInterval{10'000};
// The thread wakes at least this often even with nothing due.
constexpr Duration kIdleWake{1000};

}  // namespace

WatchBoard::WatchBoard(WatchSource source, const Clock& clock, std::uint64_t seed)
    : source_(std::move(source)), clock_(clock), rng_(seed), thread_([this] { run(); }) {}

WatchBoard::~WatchBoard() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

void WatchBoard::watch(const proto::ServiceKey& service, std::uint64_t index, Duration wait,
                       std::string variant, Render render, http::ResponderPtr responder) {
  {
    std::lock_guard lock(mu_);
    // Read under the lock that on_change() takes: a change is either seen
    // here or wakes this watch, never lost in between.
    const auto version = source_.version(service);
    if (version && *version == index) {
      const auto jitter = Duration{rng_.uniform(0, wait.count() / 16)};
      const auto id = set_.park(service, index, clock_.now() + wait + jitter);
      waiters_.emplace(
          id, Waiter{service, std::move(variant), std::move(render), std::move(responder)});
      cv_.notify_all();  // the deadline may be the nearest now
      return;
    }
  }
  const auto now = source_.current(service);
  responder->respond(render(now ? &*now : nullptr));
}

void WatchBoard::on_change(const Resolution& resolution) {
  {
    std::lock_guard lock(mu_);
    auto waiters = take(set_.changed(resolution.service, resolution.version));
    if (waiters.empty()) return;
    wakeups_.push_back({std::make_shared<const Resolution>(resolution), std::move(waiters)});
  }
  cv_.notify_all();
}

std::size_t WatchBoard::parked() const {
  std::lock_guard lock(mu_);
  return set_.size();
}

std::vector<WatchBoard::Waiter> WatchBoard::take(const std::vector<WatchSet::Id>& ids) {
  std::vector<Waiter> taken;
  taken.reserve(ids.size());
  for (const auto id : ids) {
    auto it = waiters_.find(id);
    taken.push_back(std::move(it->second));
    waiters_.erase(it);
  }
  return taken;
}

void WatchBoard::run() {
  std::unique_lock lock(mu_);
  while (!stop_) {
    const auto now = clock_.now();
    const auto due = std::min({set_.next_deadline().value_or(now + kIdleWake), now + kIdleWake,
                               std::max(next_touch_, now)});
    cv_.wait_for(lock, due - now, [&] { return stop_ || !wakeups_.empty(); });
    std::deque<Wakeup> work;
    work.swap(wakeups_);
    if (auto expired = take(set_.expire(clock_.now())); !expired.empty())
      work.push_back({nullptr, std::move(expired)});
    std::vector<proto::ServiceKey> watched;
    if (clock_.now() >= next_touch_) {
      watched = set_.watched_services();
      next_touch_ = clock_.now() + kTouchInterval;
    }
    lock.unlock();
    for (const auto& wakeup : work)
      answer(wakeup);
    for (const auto& service : watched)
      source_.version(service);  // marks it used: kept in the beats' uses
    work.clear();
    lock.lock();
  }
}

void WatchBoard::answer(const Wakeup& wakeup) {
  // One rendering per service and variant: ten thousand watchers of a
  // service, woken by one change, cost one JSON document and one response
  // written once, which the server sends as is to each.
  std::map<std::pair<proto::ServiceKey, std::string>, std::shared_ptr<const http::SharedResponse>>
      rendered;
  std::map<proto::ServiceKey, std::optional<Resolution>> current;  // waits that ended
  for (const auto& waiter : wakeup.waiters) {
    const auto key = std::make_pair(waiter.service, waiter.variant);
    auto it = rendered.find(key);
    if (it == rendered.end()) {
      const Resolution* now = wakeup.now.get();
      if (now == nullptr) {
        // A wait that ended: the service as cached now (its age moved on).
        auto [cached, fresh] = current.try_emplace(waiter.service);
        if (fresh) cached->second = source_.current(waiter.service);
        now = cached->second ? &*cached->second : nullptr;
      }
      it = rendered.emplace(key, std::make_shared<const http::SharedResponse>(waiter.render(now)))
               .first;
    }
    waiter.responder->respond_shared(it->second);
  }
}

}  // namespace cascade::agent::api
