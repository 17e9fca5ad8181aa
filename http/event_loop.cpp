#include "cascade/http/event_loop.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <string>

namespace cascade::http {

namespace {

using std::chrono::milliseconds;
using SteadyClock = std::chrono::steady_clock;

// Idle connections are looked for this often.
constexpr milliseconds kSweepInterval{1000};
// A listener out of file descriptors is left alone this long.
constexpr milliseconds kAcceptPause{100};
constexpr int kEventsPerWait = 256;

std::runtime_error system_error(const std::string& what) {
  return std::runtime_error("http: " + what + ": " + std::strerror(errno));
}

int milliseconds_until(SteadyTime now, SteadyTime then) {
  if (then <= now) return 0;
  return static_cast<int>(std::chrono::ceil<milliseconds>(then - now).count());
}

}  // namespace

EventLoop::EventLoop() {
  epoll_ = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_ < 0) throw system_error("epoll_create1");
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) {
    ::close(epoll_);
    throw system_error("eventfd");
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.ptr = &wake_tag_;
  ::epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_fd_, &event);
}

EventLoop::~EventLoop() {
  for (auto& [raw, connection] : connections_)
    connection->close();
  ::close(wake_fd_);
  ::close(epoll_);
}

void EventLoop::listen(int listener, std::function<bool()> on_acceptable) {
  listener_ = listener;
  on_acceptable_ = std::move(on_acceptable);
  epoll_event event{};
  event.events = EPOLLIN;  // level-triggered: what one pass leaves is seen again
  event.data.ptr = &listen_tag_;
  if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, listener_, &event) != 0)
    throw system_error("epoll_ctl(listener)");
}

void EventLoop::adopt(std::shared_ptr<Connection> connection) {
  post({Kind::kAdopt, std::move(connection)});
}

void EventLoop::resume(std::shared_ptr<Connection> connection) {
  post({Kind::kResume, std::move(connection)});
}

void EventLoop::stop(Response shed, milliseconds drain) {
  {
    std::lock_guard lock(mu_);
    shed_ = std::move(shed);
    drain_ = drain;
  }
  stopping_ = true;
  wake();
}

void EventLoop::post(Message message) {
  bool was_empty = false;
  {
    std::lock_guard lock(mu_);
    was_empty = messages_.empty();
    messages_.push_back(std::move(message));
  }
  if (was_empty) wake();
}

void EventLoop::wake() {
  const std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof(one));
}

void EventLoop::run() {
  epoll_event events[kEventsPerWait];
  auto next_sweep = SteadyClock::now() + kSweepInterval;
  while (!stopping_) {
    auto now = SteadyClock::now();
    auto until = next_sweep;
    if (accept_paused_) until = std::min(until, accept_paused_until_);
    const int ready = ::epoll_wait(epoll_, events, kEventsPerWait, milliseconds_until(now, until));
    now = SteadyClock::now();
    for (int i = 0; i < ready; ++i)
      serve(events[i], now);
    if (accept_paused_ && now >= accept_paused_until_) {
      accept_paused_ = false;
      watch_listener(EPOLLIN);
    }
    if (now >= next_sweep) {
      sweep(now);
      next_sweep = now + kSweepInterval;
    }
  }
  shed_and_drain();
}

void EventLoop::serve(const epoll_event& event, SteadyTime now) {
  if (event.data.ptr == &wake_tag_) {
    std::uint64_t count = 0;
    (void)!::read(wake_fd_, &count, sizeof(count));
    take_messages(now);
    return;
  }
  if (event.data.ptr == &listen_tag_) {
    accept(now);
    return;
  }
  auto* connection = static_cast<Connection*>(event.data.ptr);
  if (connection->on_events(event.events, now)) connections_.erase(connection);
}

void EventLoop::take_messages(SteadyTime now) {
  std::vector<Message> messages;
  {
    std::lock_guard lock(mu_);
    messages.swap(messages_);
  }
  for (auto& message : messages) {
    auto& connection = message.connection;
    if (message.kind == Kind::kResume) {
      if (connection->resume(now)) connections_.erase(connection.get());
      continue;
    }
    epoll_event event{};
    event.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    event.data.ptr = connection.get();
    if (::epoll_ctl(epoll_, EPOLL_CTL_ADD, connection->fd(), &event) != 0) {
      connection->close();
      continue;
    }
    connections_.emplace(connection.get(), connection);
  }
}

void EventLoop::accept(SteadyTime now) {
  if (on_acceptable_()) return;
  // Out of descriptors: a level-triggered listener would report the same
  // waiting connections at once again, so it is left out for a moment.
  accept_paused_ = true;
  accept_paused_until_ = now + kAcceptPause;
  watch_listener(0);
}

void EventLoop::watch_listener(std::uint32_t events) {
  epoll_event event{};
  event.events = events;
  event.data.ptr = &listen_tag_;
  ::epoll_ctl(epoll_, EPOLL_CTL_MOD, listener_, &event);
}

void EventLoop::sweep(SteadyTime now) {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (it->second->close_if_expired(now))
      it = connections_.erase(it);
    else
      ++it;
  }
}

// The end of run(): no more connections, every parked request answered, a
// moment for the answers to go out, then every connection closed.
void EventLoop::shed_and_drain() {
  if (listener_ >= 0) ::epoll_ctl(epoll_, EPOLL_CTL_DEL, listener_, nullptr);
  take_messages(SteadyClock::now());  // connections accepted for this loop get their answer too
  Response shed;
  milliseconds drain{0};
  {
    std::lock_guard lock(mu_);
    shed = shed_;
    drain = drain_;
  }
  std::vector<Connection*> writing;
  for (auto& [raw, connection] : connections_)
    if (connection->shed(shed)) writing.push_back(raw);
  const auto deadline = SteadyClock::now() + drain;
  epoll_event events[kEventsPerWait];
  while (!writing.empty() && SteadyClock::now() < deadline) {
    const int ready = ::epoll_wait(epoll_, events, kEventsPerWait,
                                   milliseconds_until(SteadyClock::now(), deadline));
    const auto now = SteadyClock::now();
    for (int i = 0; i < ready; ++i)
      if (events[i].data.ptr != &wake_tag_ && events[i].data.ptr != &listen_tag_)
        static_cast<Connection*>(events[i].data.ptr)->on_events(events[i].events, now);
    std::erase_if(writing, [&](Connection* c) { return !c->shed(shed); });
  }
  for (auto& [raw, connection] : connections_)
    connection->close();
  connections_.clear();
}

}  // namespace cascade::http
