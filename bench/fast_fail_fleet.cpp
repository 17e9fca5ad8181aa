#include "cascade/bench/fast_fail_fleet.hpp"

#include <pthread.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <stdexcept>

#include "cascade/bench/thread_cpu.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/random.hpp"

namespace cascade::bench {

namespace {

constexpr Duration kMaxPollWait{50};  // how soon a stop request or a task is noticed at worst
constexpr int kHighWaterMark = 100'000;
constexpr std::size_t kMaxFramesPerPass = 64;

}  // namespace

agent::AgentCore& AgentFleet::Access::core(std::size_t agent) {
  return *fleet_.agents_.at(agent).core;
}

void AgentFleet::Access::silence(std::size_t agent) {
  auto& a = fleet_.agents_.at(agent);
  a.silenced = true;
  fleet_.timers_.erase({a.scheduled, agent});
}

MonoTime AgentFleet::Access::now() const {
  return fleet_.clock_.now();
}

std::size_t AgentFleet::Access::size() const {
  return fleet_.agents_.size();
}

AgentFleet::AgentFleet(FleetConfig config, std::vector<FleetAgent> agents, FleetObserver* observer)
    : config_(std::move(config)), observer_(observer) {
  if (config_.endpoint.empty()) throw std::invalid_argument("fleet: no hub endpoint");
  const std::size_t socket_count =
      config_.sockets == 0 ? agents.size() : std::min(config_.sockets, agents.size());
  agents_of_socket_.resize(socket_count);
  is_dirty_.assign(socket_count, 0);
  if (config_.io_thread_prefix != 0)
    zmq_ctx_set(context_.handle(), ZMQ_THREAD_NAME_PREFIX, config_.io_thread_prefix);
  Rng rng(config_.seed);
  const auto now = clock_.now();
  agents_.reserve(agents.size());
  for (std::size_t i = 0; i < agents.size(); ++i) {
    auto& spec = agents[i];
    Agent a;
    const auto node_id = spec.config.node_id;
    a.core = std::make_unique<agent::AgentCore>(std::move(spec.config), rng.next_u64());
    for (auto& reg : spec.registrations)
      a.core->add_registration(now, std::move(reg));  // before start: travels in the first beat
    for (const auto& service : spec.pinned)
      a.core->pin(service);
    for (const auto& group : spec.configs)
      a.core->pin_config(now, group);
    a.socket = i % socket_count;
    agents_of_socket_[a.socket].push_back(i);
    if (!by_node_.emplace(node_id, i).second)
      throw std::invalid_argument("fleet: node id " + node_id + " appears twice");
    agents_.push_back(std::move(a));
    reschedule(i, now + Duration{rng.uniform(0, config_.start_spread.count())});
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error("fleet: eventfd failed");
  thread_ = std::thread([this] { run(); });
  if (pthread_getcpuclockid(thread_.native_handle(), &cpu_clock_) != 0)
    throw std::runtime_error("fleet: no CPU clock for the driver thread");
}

AgentFleet::~AgentFleet() {
  stop_.store(true);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  thread_.join();
  ::close(wake_fd_);
}

void AgentFleet::call(const std::function<void(Access&)>& task) {
  Task t{&task, nullptr, false};
  std::unique_lock lock(mu_);
  tasks_.push_back(&t);
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof one);
  done_cv_.wait(lock, [&] { return t.done; });
  if (t.error) std::rethrow_exception(t.error);
}

FleetCounters AgentFleet::counters() {
  FleetCounters copy;
  call([&](Access&) { copy = counters_; });
  return copy;
}

double AgentFleet::cpu_seconds() const {
  return bench::cpu_seconds(cpu_clock_);
}

void AgentFleet::run() {
  pthread_setname_np(pthread_self(), config_.name.substr(0, 15).c_str());
  // epoll over the sockets' ZMQ_FDs, so a pass costs what is active, not
  // what is connected (zmq_poll walks every socket on every call). ZMQ_FD
  // only says "look again": a socket it names is read until EAGAIN, and a
  // socket something was sent on is read again too (sending may consume the
  // signal of a message that arrived meanwhile).
  const int epoll_fd = ::epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd < 0) throw std::runtime_error("fleet: epoll_create1 failed");
  auto watch = [&](int fd, std::uint64_t tag) {
    epoll_event ev{};
    ev.events = EPOLLIN;
    ev.data.u64 = tag;
    if (::epoll_ctl(epoll_fd, EPOLL_CTL_ADD, fd, &ev) != 0)
      throw std::runtime_error("fleet: epoll_ctl failed");
  };
  for (std::size_t s = 0; s < agents_of_socket_.size(); ++s) {
    auto& socket = sockets_.emplace_back(context_, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    // As agent::Client: nothing is queued for a hub that is not connected (a
    // beat that cannot go out is retried by the core after a short pause).
    socket.set(zmq::sockopt::immediate, 1);
    socket.set(zmq::sockopt::sndhwm, kHighWaterMark);
    socket.set(zmq::sockopt::rcvhwm, kHighWaterMark);
    socket.connect(config_.endpoint);
    watch(socket.get(zmq::sockopt::fd), s);
    mark_dirty(s);
  }
  const std::uint64_t wake_tag = sockets_.size();
  watch(wake_fd_, wake_tag);
  std::vector<epoll_event> events(256);
  std::vector<std::size_t> ready;
  while (!stop_.load()) {
    ++counters_.loop_passes;
    const auto now = clock_.now();
    Duration wait = kMaxPollWait;
    if (!timers_.empty()) wait = std::clamp(timers_.begin()->first - now, Duration{0}, wait);
    if (!dirty_.empty()) wait = Duration{0};
    const int n = ::epoll_wait(epoll_fd, events.data(), static_cast<int>(events.size()),
                               static_cast<int>(wait.count()));
    for (int e = 0; e < n; ++e) {
      const auto tag = events[static_cast<std::size_t>(e)].data.u64;
      if (tag == wake_tag) {
        std::uint64_t drained = 0;
        [[maybe_unused]] auto r = ::read(wake_fd_, &drained, sizeof drained);
      } else {
        mark_dirty(static_cast<std::size_t>(tag));
      }
    }
    ready.swap(dirty_);
    for (const auto s : ready) {
      is_dirty_[s] = 0;
      receive(s);
    }
    ready.clear();
    fire_due(clock_.now());
    run_tasks();
  }
  ::close(epoll_fd);
  sockets_.clear();
  run_tasks();  // nobody waits forever on a fleet that stopped
}

void AgentFleet::mark_dirty(std::size_t socket) {
  if (is_dirty_[socket]) return;
  is_dirty_[socket] = 1;
  dirty_.push_back(socket);
}

void AgentFleet::run_tasks() {
  std::vector<Task*> tasks;
  {
    std::lock_guard lock(mu_);
    tasks.swap(tasks_);
  }
  if (tasks.empty()) return;
  Access access(*this);
  for (Task* t : tasks) {
    try {
      if (!stop_.load()) (*t->fn)(access);
    } catch (...) {
      t->error = std::current_exception();
    }
  }
  reschedule_all();
  {
    std::lock_guard lock(mu_);
    for (Task* t : tasks)
      t->done = true;
  }
  done_cv_.notify_all();
}

void AgentFleet::receive(std::size_t socket) {
  zmq::message_t frame;
  const auto& sharing = agents_of_socket_[socket];
  // At most kMaxFramesPerPass per socket and pass (the socket stays dirty
  // if more wait), so one busy socket cannot hold back the others or the timers.
  for (std::size_t taken = 0;; ++taken) {
    if (taken == kMaxFramesPerPass) {
      mark_dirty(socket);
      return;
    }
    if (!sockets_[socket].recv(frame, zmq::recv_flags::dontwait)) return;
    const auto at = std::chrono::steady_clock::now();
    const auto now = clock_.now();
    ++counters_.frames_received;
    auto decoded = proto::decode_frame(frame.to_string_view());
    for (auto& item : decoded.items) {
      const auto* message = std::get_if<proto::Message>(&item);
      if (message == nullptr) {
        ++counters_.decode_failures;
        continue;
      }
      ++counters_.messages_received;
      std::size_t agent = sharing.front();
      if (sharing.size() > 1) {
        const std::string* node = nullptr;
        if (const auto* down = std::get_if<proto::DownBeat>(message))
          node = &down->node_id;
        else if (const auto* ack = std::get_if<proto::DeregisterAck>(message))
          node = &ack->node_id;
        auto it = node ? by_node_.find(*node) : by_node_.end();
        if (it == by_node_.end() || agents_[it->second].socket != socket) {
          ++counters_.unrouted;
          continue;
        }
        agent = it->second;
      }
      if (agents_[agent].silenced) continue;
      if (const auto* down = std::get_if<proto::DownBeat>(message); down && down->push)
        ++counters_.pushes_received;
      if (observer_ != nullptr) observer_->on_received(agent, *message, at);
      auto actions = agents_[agent].core->on_message(now, 0, *message);
      apply(agent, std::move(actions));
      reschedule(agent, agents_[agent].core->next_deadline());
    }
  }
}

void AgentFleet::fire_due(MonoTime now) {
  while (!timers_.empty() && timers_.begin()->first <= now) {
    const auto agent = timers_.begin()->second;
    timers_.erase(timers_.begin());
    Agent& a = agents_[agent];
    agent::AgentActions actions;
    if (!a.started) {
      a.started = true;
      actions = a.core->start(now);
    } else {
      actions = a.core->on_timer(now);
    }
    apply(agent, std::move(actions));
    // A core never asks to be woken in the past twice; the floor keeps a
    // misbehaving one from spinning this loop.
    reschedule(agent, std::max(a.core->next_deadline(), now + Duration{1}));
  }
}

void AgentFleet::apply(std::size_t agent, agent::AgentActions actions) {
  Agent& a = agents_[agent];
  for (const auto& out : actions.send) {
    const auto bytes = proto::encode(out.message);
    const auto sent = sockets_[a.socket].send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    mark_dirty(a.socket);
    if (sent) {
      ++counters_.sent;
      if (observer_ != nullptr)
        observer_->on_sent(agent, out.message, std::chrono::steady_clock::now());
    } else {
      ++counters_.not_sent;
      if (std::holds_alternative<proto::UpBeat>(out.message)) a.core->beat_not_sent(clock_.now());
    }
  }
  if (observer_ == nullptr || (actions.changed.empty() && actions.config_changed.empty())) return;
  const auto at = std::chrono::steady_clock::now();
  for (const auto& service : actions.changed)
    observer_->on_changed(agent, service, at);
  for (const auto& group : actions.config_changed)
    observer_->on_config_changed(agent, group, at);
}

void AgentFleet::reschedule(std::size_t agent, MonoTime at) {
  Agent& a = agents_[agent];
  if (a.silenced) return;
  timers_.erase({a.scheduled, agent});
  a.scheduled = at;
  timers_.insert({at, agent});
}

void AgentFleet::reschedule_all() {
  for (std::size_t i = 0; i < agents_.size(); ++i)
    if (agents_[i].started) reschedule(i, agents_[i].core->next_deadline());
}

}  // namespace cascade::bench
