#include "cascade/agent/client.hpp"

#include <spdlog/spdlog.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <stdexcept>
#include <zmq.hpp>

#include "cascade/agent/sqlite_snapshot_store.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/curve_keys.hpp"
#include "cascade/common/handshake_monitor.hpp"
#include "cascade/common/host_name.hpp"
#include "cascade/common/log.hpp"
#include "cascade/common/options.hpp"
#include "cascade/common/process_signals.hpp"
#include "cascade/common/validate.hpp"
#include "cascade/common/zmq_util.hpp"

namespace cascade::agent {

namespace {

constexpr Duration kMaxPollWait{200};  // how soon a stop request is noticed at the latest

void require(const std::string& error) {
  if (!error.empty()) throw std::invalid_argument(error);
}

std::string default_node_id() {
  return host_name() + "-" + std::to_string(::getpid());
}

// Changes on every start of a process on this host (wall clock in µs); the
// hub treats a larger epoch as a newer incarnation of the same node id.
std::uint64_t new_epoch() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

AgentCoreConfig core_config(const ClientOptions& o, const std::string& node_id) {
  if (o.hubs.empty()) throw std::invalid_argument("at least one hub endpoint is required");
  for (const auto& hub : o.hubs)
    require(check_endpoint("hub", hub));
  require(proto::check_name("node id", node_id));
  require(check_lb_config(o.lb));
  AgentCoreConfig c;
  c.node_id = node_id;
  c.epoch = new_epoch();
  c.hub_count = o.hubs.size();
  c.hub_mode = o.hub_mode;
  c.beat_interval = o.beat_interval;
  c.misses_before_failover = o.misses_before_failover;
  c.failover_backoff_base = o.failover_backoff_base;
  c.failover_backoff_max = o.failover_backoff_max;
  c.subscription_ttl = o.subscription_ttl;
  c.query_timeout = o.query_timeout;
  c.reports = o.reports;
  return c;
}

}  // namespace

Client::Client(ClientOptions options)
    : options_(std::move(options)),
      node_id_(options_.node_id.empty() ? default_node_id() : options_.node_id),
      rejection_log_(std::make_unique<RateLimit>(5, Duration{10'000})),
      core_(core_config(options_, node_id_), new_epoch()),
      pick_rng_(new_epoch()) {
  if (auto errors = router_.load(options_.routes); !errors.empty()) {
    std::string all = "bad routing rules:";
    for (const auto& e : errors)
      all += "\n  " + e;
    throw std::invalid_argument(all);
  }
  if (options_.keys.enabled()) {
    for (const auto& hub : options_.hubs)
      if (!curve::is_z85_key(options_.keys.hub_key_for(hub)))
        throw std::invalid_argument("no Curve public key for hub " + hub);
    if (!curve::is_z85_key(options_.keys.public_key) ||
        !curve::is_z85_key(options_.keys.secret_key))
      throw std::invalid_argument("the agent's Curve key pair is not two Z85 keys");
  }
  if (options_.data_dir) {
    store_ = SqliteSnapshotStore::open(*options_.data_dir);
    core_.restore_snapshot(store_->load_all(), clock_.now());
    core_.restore_config_snapshot(store_->load_config_groups(), clock_.now());
  }
  for (const auto& group : options_.config_groups) {
    require(proto::check_name("config group", group));
    core_.pin_config(clock_.now(), group);
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error("eventfd failed");
  io_ = std::thread([this] { io_loop(); });
}

Client::~Client() {
  shutdown();
  ::close(wake_fd_);
}

void Client::wake() {
  const std::uint64_t one = 1;
  [[maybe_unused]] auto n = ::write(wake_fd_, &one, sizeof(one));
}

template <typename Fn>
void Client::with_core(Fn&& fn) {
  {
    std::lock_guard lock(mu_);
    AgentActions actions = fn(core_, clock_.now());
    for (auto& out : actions.send)
      outbox_.push_back(std::move(out));
  }
  wake();
}

void Client::register_instance(proto::Registration registration) {
  require(proto::check_registration(registration));
  with_core([&](AgentCore& core, MonoTime now) {
    return core.add_registration(now, std::move(registration));
  });
}

void Client::deregister_instance(const proto::ServiceKey& service, const std::string& instance_id) {
  with_core([&](AgentCore& core, MonoTime now) {
    return core.remove_registration(now, service, instance_id);
  });
}

void Client::keep_fresh(const proto::ServiceKey& service) {
  require(proto::check_service_key(service));
  with_core([&](AgentCore& core, MonoTime) {
    core.pin(service);
    return AgentActions{};
  });
}

void Client::on_change(std::function<void(const Resolution&)> callback) {
  std::lock_guard lock(mu_);
  on_change_ = std::move(callback);
}

bool Client::wait_for_query(std::unique_lock<std::mutex>& lock, std::uint64_t id) {
  // The core times the query out itself; the extra margin only guards against a stalled I/O thread.
  const auto deadline = std::chrono::steady_clock::now() + options_.query_timeout + Duration{500};
  cv_.wait_until(lock, deadline, [&] { return finished_queries_.contains(id) || shut_down_; });
  return finished_queries_.erase(id) > 0;
}

bool Client::answer_at_hand(MonoTime now, const proto::ServiceKey& service,
                            std::optional<Resolution>& answer) {
  answer = core_.lookup(now, clock_.wall_ms(), service);
  if (answer) return true;
  // Known-unreachable hubs: answer from what we have rather than wait.
  answer = core_.lookup_any(now, clock_.wall_ms(), service);
  if (answer && !core_.hub_reachable(now) && core_.failovers() > 0) return true;
  return shut_down_;
}

std::optional<Resolution> Client::resolve(const proto::ServiceKey& service) {
  require(proto::check_service_key(service));
  std::unique_lock lock(mu_);
  const auto now = clock_.now();
  if (std::optional<Resolution> answer; answer_at_hand(now, service, answer)) return answer;
  const auto id = send_query(now, service);
  wait_for_query(lock, id);
  return core_.lookup_any(clock_.now(), clock_.wall_ms(), service);
}

std::uint64_t Client::send_query(MonoTime now, const proto::ServiceKey& service) {
  std::uint64_t id = 0;
  auto actions = core_.query(now, service, id);
  for (auto& out : actions.send)
    outbox_.push_back(std::move(out));
  if (options_.observer) lookups_sent_.sent(id, std::chrono::steady_clock::now());
  wake();
  return id;
}

void Client::resolve_async(const proto::ServiceKey& service, ResolveCallback done) {
  require(proto::check_service_key(service));
  std::optional<Resolution> answer;
  {
    std::lock_guard lock(mu_);
    const auto now = clock_.now();
    if (!answer_at_hand(now, service, answer)) {
      if (const auto pending = async_.pending_query(service)) {
        async_.wait(service, *pending, std::move(done));
        return;
      }
      async_.wait(service, send_query(now, service), std::move(done));
      return;
    }
  }
  done(std::move(answer));
}

std::optional<Resolution> Client::cached(const proto::ServiceKey& service) {
  std::lock_guard lock(mu_);
  return core_.lookup_any(clock_.now(), clock_.wall_ms(), service);
}

std::optional<Resolution> Client::peek(const proto::ServiceKey& service) const {
  std::lock_guard lock(mu_);
  return core_.peek(clock_.now(), clock_.wall_ms(), service);
}

std::optional<std::uint64_t> Client::cached_version(const proto::ServiceKey& service) {
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  const auto held = core_.held(now, service);
  if (!held) return std::nullopt;
  core_.touch(now, service);
  return held->version;
}

void Client::finish_async(const std::vector<std::uint64_t>& finished) {
  std::vector<std::pair<std::vector<ResolveCallback>, std::optional<Resolution>>> answers;
  {
    std::lock_guard lock(mu_);
    if (async_.empty()) return;
    for (const auto id : finished) {
      auto [service, callers] = async_.finish(id);
      if (callers.empty()) continue;
      answers.emplace_back(std::move(callers),
                           core_.lookup_any(clock_.now(), clock_.wall_ms(), service));
    }
  }
  for (auto& [callers, answer] : answers)
    answer_async(callers, answer);
}

void Client::answer_async(std::vector<ResolveCallback>& callers,
                          const std::optional<Resolution>& answer) {
  for (auto& done : callers) {
    // A caller's code must not take the I/O thread (and the beats) down with it.
    try {
      done(answer);
    } catch (const std::exception& e) {
      spdlog::error("resolve_async callback threw: {}", e.what());
    }
  }
}

std::optional<proto::Instance> Client::pick_with(LoadBalancer& balancer, const PickContext& ctx) {
  const auto chosen = balancer.pick(ctx, pick_rng_);
  if (!chosen) return std::nullopt;
  return balancer.candidates()[*chosen];
}

std::optional<proto::Instance> Client::pick(const proto::ServiceKey& service, LbPolicy policy,
                                            const PickContext& ctx) {
  if (std::optional<proto::Instance> chosen; hot_pick(service, policy, ctx, chosen))
    return counted(std::move(chosen));
  // First use, new version, or a stale list: resolve as resolve() does (it may
  // ask the hub), then rebuild the candidates if their list changed.
  auto resolution = resolve(service);
  if (!resolution) return unresolved_pick();
  return counted(pick_from(service, policy, ctx, *resolution));
}

std::optional<proto::Instance> Client::pick_cached(const proto::ServiceKey& service,
                                                   LbPolicy policy, const PickContext& ctx) {
  if (std::optional<proto::Instance> chosen; hot_pick(service, policy, ctx, chosen))
    return counted(std::move(chosen));
  auto resolution = cached(service);
  if (!resolution) return unresolved_pick();
  return counted(pick_from(service, policy, ctx, *resolution));
}

std::optional<proto::Instance> Client::counted(std::optional<proto::Instance> chosen) {
  const auto result = chosen ? PickResult::kPicked : PickResult::kNoInstance;
  picks_[static_cast<std::size_t>(result)].fetch_add(1, std::memory_order_relaxed);
  return chosen;
}

std::optional<proto::Instance> Client::unresolved_pick() {
  picks_[static_cast<std::size_t>(PickResult::kUnresolved)].fetch_add(1, std::memory_order_relaxed);
  return std::nullopt;
}

bool Client::hot_pick(const proto::ServiceKey& service, LbPolicy policy, const PickContext& ctx,
                      std::optional<proto::Instance>& chosen) {
  const auto index = static_cast<std::size_t>(policy);
  if (index >= kLbPolicyCount) throw std::invalid_argument("unknown load-balancing policy");
  // The balancer was built from the version the core holds, and that version
  // is fresh. No list is copied, no candidates rebuilt.
  std::lock_guard lock(mu_);
  const auto now = clock_.now();
  const auto held = core_.held(now, service);
  const auto it = balancers_.find(service);
  if (!held || held->age > stale_after() || it == balancers_.end()) return false;
  auto& slot = it->second.by_policy[index];
  if (!slot.balancer || slot.version != held->version || slot.source != Source::kHub ||
      (router_.size() > 0 && slot.method != ctx.method))
    return false;
  core_.touch(now, service);  // what resolve()'s lookup() does for a used service
  chosen = pick_with(*slot.balancer, ctx);
  return true;
}

std::optional<proto::Instance> Client::pick_from(const proto::ServiceKey& service, LbPolicy policy,
                                                 const PickContext& ctx,
                                                 const Resolution& resolution) {
  const auto index = static_cast<std::size_t>(policy);
  std::lock_guard lock(mu_);
  if (!core_.held(clock_.now(), service)) {
    // Dropped from the cache meanwhile: answer once, keep no balancer the
    // pruning in dispatch() would never see.
    auto once = make_load_balancer(policy, options_.lb);
    once->set_candidates(candidates_of(resolution, ctx.method));
    return pick_with(*once, ctx);
  }
  sync_hub_routes(service);  // the rules that came with this list, before its candidates
  auto& slot = balancers_[service].by_policy[index];
  const bool method_changed = router_.size() > 0 && slot.method != ctx.method;
  if (!slot.balancer || slot.version != resolution.version || slot.source != resolution.source ||
      method_changed) {
    if (!slot.balancer) slot.balancer = make_load_balancer(policy, options_.lb);
    slot.balancer->set_candidates(candidates_of(resolution, ctx.method));
    slot.version = resolution.version;
    slot.source = resolution.source;
    slot.method = ctx.method;
  }
  return pick_with(*slot.balancer, ctx);
}

// (with_core is defined in this file.)
void Client::report_failure(const proto::ServiceKey& service, const std::string& address,
                            proto::FailureKind kind) {
  if (kind == proto::FailureKind::kBusinessError && !options_.report_business_errors) return;
  with_core([&](AgentCore& core, MonoTime now) {
    core.report_failure(now, service, address, kind);
    return AgentActions{};
  });
}

std::vector<proto::Instance> Client::candidates_of(const Resolution& resolution,
                                                   std::string_view method) {
  auto eligible = eligible_instances(resolution.instances);
  if (router_.size() > 0) {
    auto consumer = options_.consumer;
    consumer.method = method;
    const auto outcome = router_.route(resolution.service, consumer, eligible);
    eligible = selected_instances(outcome, eligible);
  }
  return nearest_tier(confirmed_first(std::move(eligible)));
}

void Client::sync_hub_routes(const proto::ServiceKey& service) {
  static const std::vector<proto::RouteRuleText> kNone;
  const auto* held = core_.routes_of(service);  // nullptr: no hub said (or not cached)
  const auto& want = held != nullptr ? *held : kNone;
  const auto seen = hub_routes_.find(service);
  if (want == (seen != hub_routes_.end() ? seen->second : kNone)) return;
  if (want.empty())
    hub_routes_.erase(service);
  else
    hub_routes_[service] = want;
  const auto scope = exact_scope(service);
  if (!scope) {
    // Hubs refuse rules for such names; one of another release may not.
    spdlog::warn("routing rules from the hub for {} ignored: its name or group cannot be a scope",
                 service.name);
    return;
  }
  // replace_scope() replaces every rule of the scope: the ones configured
  // locally with exactly this scope go back in, ahead of the hub's.
  std::vector<RouteRuleSpec> specs;
  for (const auto& local : options_.routes)
    if (local.scope == scope) specs.push_back(local);
  for (const auto& rule : want)
    specs.push_back(RouteRuleSpec{rule.text, rule.priority, rule.force, rule.enabled, scope});
  if (auto errors = router_.replace_scope(scope, std::move(specs)); !errors.empty()) {
    // The hub checked them with this parser; a hub of another release may not have.
    spdlog::warn("routing rules from the hub for {} not applied (the previous ones stay): {}",
                 service.name, errors.front());
    return;
  }
  spdlog::info("routing rules for {}: {} from the hub", service.name, want.size());
  balancers_.erase(service);  // candidates are rebuilt under the new rules at the next pick
}

std::optional<proto::Instance> Client::pick(const proto::ServiceKey& service,
                                            const PickContext& ctx) {
  return pick(service, policy_for(service), ctx);
}

LbPolicy Client::policy_for(const proto::ServiceKey& service) const {
  const auto it = options_.policies.find(service);
  return it == options_.policies.end() ? options_.default_policy : it->second;
}

void Client::on_call_started(const proto::ServiceKey& service, std::string_view address) {
  std::lock_guard lock(mu_);
  const auto it = balancers_.find(service);
  if (it == balancers_.end()) return;
  for (auto& slot : it->second.by_policy)
    if (slot.balancer) slot.balancer->on_call_started(address);
}

void Client::on_call_finished(const proto::ServiceKey& service, std::string_view address,
                              std::chrono::microseconds latency, bool ok) {
  std::lock_guard lock(mu_);
  const auto it = balancers_.find(service);
  if (it == balancers_.end()) return;
  for (auto& slot : it->second.by_policy)
    if (slot.balancer) slot.balancer->on_call_finished(address, latency, ok);
}

bool Client::shutdown() {
  if (std::this_thread::get_id() == io_.get_id()) {
    // From an on_change callback: the I/O thread cannot wait for itself.
    spdlog::error("Client::shutdown() called from the I/O thread (an on_change callback); ignored");
    return false;
  }
  std::lock_guard once(shutdown_mu_);  // a second caller waits for the first to finish
  {
    std::unique_lock lock(mu_);
    if (shut_down_) return deregistered_;
    auto actions = core_.shutdown(clock_.now());
    for (auto& out : actions.send)
      outbox_.push_back(std::move(out));
    wake();
    cv_.wait_for(lock, options_.shutdown_timeout, [&] { return deregistered_; });
    shut_down_ = true;
    if (!deregistered_)
      spdlog::warn("hub did not acknowledge the deregistration within {} ms",
                   options_.shutdown_timeout.count());
  }
  cv_.notify_all();
  stop_ = true;
  wake();
  if (io_.joinable()) io_.join();
  // No query will finish any more: whoever still waits gets what is cached.
  std::vector<std::pair<std::vector<ResolveCallback>, std::optional<Resolution>>> answers;
  {
    std::lock_guard lock(mu_);
    for (auto& [service, callers] : async_.take_all())
      answers.emplace_back(std::move(callers),
                           core_.lookup_any(clock_.now(), clock_.wall_ms(), service));
  }
  for (auto& [callers, answer] : answers)
    answer_async(callers, answer);
  // Record the last confirmation of every list, not only the last change.
  if (store_) {
    std::vector<proto::ServiceKey> all;
    {
      std::lock_guard lock(mu_);
      all = core_.cached_keys();
    }
    save_snapshots(all, {});
    save_config_snapshots(all_config_groups(), {});
  }
  return deregistered_;
}

ClientStatus Client::status() const {
  std::lock_guard lock(mu_);
  return status_of(clock_.now());
}

ClientStatus Client::status_of(MonoTime now) const {
  ClientStatus status{node_id_, core_.current_hub(), core_.hub_reachable(now), core_.failovers(),
                      core_.cache_size()};
  if (const auto& refusal = core_.last_refusal())
    status.last_refusal = fmt::format("{}: {}", proto::to_string(refusal->code), refusal->message);
  status.hub_id = core_.hub_id();
  status.lease = core_.granted_lease();
  status.beat_interval = core_.beat_interval();
  if (const auto at = core_.last_reply_at()) status.last_reply_age = now - *at;
  return status;
}

ClientStats Client::stats() const {
  ClientStats stats;
  const Caller* caller = nullptr;
  {
    std::lock_guard lock(mu_);
    const auto now = clock_.now();
    stats.status = status_of(now);
    stats.registered_instances = core_.registration_count();
    stats.hub = core_.counters();
    stats.failures = core_.report_counters();
    stats.cache = core_.cache_ages(now, clock_.wall_ms());
    caller = caller_.get();
  }
  for (std::size_t i = 0; i < kPickResultCount; ++i)
    stats.picks[i] = picks_[i].load(std::memory_order_relaxed);
  stats.levers = levers_.counters();
  // The Caller has a lock of its own, never taken inside ours.
  if (caller) {
    stats.calls = caller->totals();
    stats.breakers = caller->breaker_census();
  }
  return stats;
}

std::vector<proto::Registration> Client::registrations() const {
  std::lock_guard lock(mu_);
  return core_.registrations();
}

std::vector<proto::ServiceKey> Client::cached_services() const {
  std::lock_guard lock(mu_);
  return core_.cached_keys();
}

// ---------------------------------------------------------------- I/O thread

namespace {

// How long a hub that refused our key waits before it is dialled again: a
// refusal costs the hub a handshake, so not at libzmq's reconnect pace.
constexpr Duration kRedialRefused{2000};

struct HubSockets {
  std::vector<std::string> endpoints;
  std::vector<zmq::socket_t> sockets;
  LinkWatches links;
  // With keys, one per socket: a hub refusing our key is logged, not just
  // missed, and dialled again later (libzmq never retries a refused
  // handshake itself; a reload at the hub may have added the key since).
  std::vector<std::unique_ptr<HandshakeMonitor>> monitors;
  std::vector<std::optional<MonoTime>> redial_at;  // per socket: after a refusal
  RateLimit refusal_log{5, Duration{10'000}};

  HubSockets(zmq::context_t& ctx, const ClientOptions& options)
      : endpoints(options.hubs), links(options.hubs.size()), redial_at(options.hubs.size()) {
    // A beat that cannot go out is a miss (ZMQ_IMMEDIATE); a dead connection
    // is found and made again within one beat interval.
    const auto timing = LinkTiming::for_beat_interval(options.beat_interval);
    sockets.reserve(endpoints.size());  // the monitors hold references
    for (const auto& ep : endpoints) {
      auto& s = sockets.emplace_back(ctx, zmq::socket_type::dealer);
      configure_link(s, timing);
      if (options.keys.enabled()) {
        curve::make_curve_client(s, {options.keys.public_key, options.keys.secret_key},
                                 options.keys.hub_key_for(ep));
        monitors.push_back(std::make_unique<HandshakeMonitor>(ctx, s));
      }
      s.connect(ep);
    }
  }

  // Reads the monitors whose items (from items[0]) are readable: logs each
  // refusal and schedules the redial.
  void note_refusals(const zmq::pollitem_t* items, MonoTime now) {
    for (std::size_t hub = 0; hub < monitors.size(); ++hub) {
      if ((items[hub].revents & ZMQ_POLLIN) == 0 || monitors[hub]->take_refusals() == 0) continue;
      redial_at[hub] = now + kRedialRefused;
      std::uint64_t suppressed = 0;
      if (refusal_log.allow(now, suppressed))
        spdlog::error(
            "hub {} refused this agent's key (unauthenticated): is its public key in "
            "the hub's authorised keys?{}",
            endpoints[hub],
            suppressed ? fmt::format(" [{} more suppressed]", suppressed) : std::string());
    }
  }

  void redial_due(MonoTime now) {
    for (std::size_t hub = 0; hub < redial_at.size(); ++hub) {
      if (!redial_at[hub] || now < *redial_at[hub]) continue;
      redial_at[hub].reset();
      try {
        sockets[hub].disconnect(endpoints[hub]);
      } catch (const zmq::error_t&) {
        // The refused session may be gone already.
      }
      sockets[hub].connect(endpoints[hub]);
    }
  }
};

}  // namespace

void Client::io_loop() {
  // The application's signals are for its threads: here one would interrupt
  // a ZeroMQ call, which throws EINTR (common/process_signals.hpp).
  block_async_signals_in_this_thread();
  zmq::context_t ctx(1);
  HubSockets hubs(ctx, options_);
  sockets_ = &hubs.sockets;
  {
    // With ZMQ_IMMEDIATE a message sent before the connection is up is
    // dropped: give the first hub's connection up to one beat interval to
    // come up, so the first beat and the first query are not lost.
    zmq::pollitem_t ready{hubs.sockets.front().handle(), 0, ZMQ_POLLOUT, 0};
    poll_ignoring_signals(&ready, 1, options_.beat_interval);
  }
  AgentActions first;
  {
    std::lock_guard lock(mu_);
    first = core_.start(clock_.now());
  }
  dispatch(std::move(first));
  std::vector<zmq::pollitem_t> items;
  for (auto& s : hubs.sockets)
    items.push_back({s.handle(), 0, ZMQ_POLLIN, 0});
  items.push_back({nullptr, wake_fd_, ZMQ_POLLIN, 0});
  const auto first_monitor = items.size();
  for (auto& monitor : hubs.monitors)
    items.push_back(monitor->poll_item());
  while (!stop_) {
    Duration wait;
    {
      std::lock_guard lock(mu_);
      wait = std::clamp(core_.next_deadline() - clock_.now(), Duration{0}, kMaxPollWait);
    }
    hubs.links.set_poll_events(items.data());
    poll_ignoring_signals(items.data(), items.size(), wait);
    hubs.note_refusals(items.data() + first_monitor, clock_.now());
    hubs.redial_due(clock_.now());
    if (items[first_monitor - 1].revents & ZMQ_POLLIN) {
      std::uint64_t drained = 0;
      [[maybe_unused]] auto n = ::read(wake_fd_, &drained, sizeof(drained));
    }
    for (std::size_t hub = 0; hub < hubs.sockets.size(); ++hub)
      if (items[hub].revents & ZMQ_POLLIN) receive_from(hub);
    for (const auto hub : hubs.links.links_back(hubs.sockets))
      with_core([&](AgentCore& core, MonoTime now) { return core.on_link_up(now, hub); });
    AgentActions due;
    {
      std::lock_guard lock(mu_);
      if (clock_.now() >= core_.next_deadline()) due = core_.on_timer(clock_.now());
      for (auto& out : outbox_)
        due.send.push_back(std::move(out));
      outbox_.clear();
    }
    dispatch(std::move(due));
  }
  sockets_ = nullptr;
}

void Client::receive_from(std::size_t hub) {
  auto& socket = (*sockets_)[hub];
  zmq::message_t frame;
  while (socket.recv(frame, zmq::recv_flags::dontwait)) {
    auto decoded = proto::decode_frame(frame.to_string_view());
    for (auto& item : decoded.items) {
      if (auto* failure = std::get_if<proto::DecodeFailure>(&item)) {
        log_hub_problem(hub, "undecodable reply from the hub", failure->what, failure->code);
        continue;
      }
      const auto& message = std::get<proto::Message>(item);
      spdlog::debug("{} <- {} from {}", node_id_, proto::to_string(proto::type_of(message)),
                    options_.hubs[hub]);
      if (const auto* error = std::get_if<proto::ErrorReply>(&message)) log_rejection(hub, *error);
      time_beat_reply(message);
      AgentActions actions;
      {
        std::lock_guard lock(mu_);
        actions = core_.on_message(clock_.now(), hub, message);
      }
      dispatch(std::move(actions));
    }
  }
}

void Client::log_rejection(std::size_t hub, const proto::ErrorReply& error) {
  const bool busy = error.code == proto::ErrorCode::kBusy;
  log_hub_problem(hub,
                  busy ? "the hub is overloaded: it shed a message, sent again later"
                       : "the hub rejected a message",
                  error.message, error.code);
}

// A refused beat comes back every interval, and so would garbage from a
// broken hub: logged rate-limited, with how many were left out.
void Client::log_hub_problem(std::size_t hub, std::string_view what, std::string_view detail,
                             proto::ErrorCode code) {
  std::uint64_t suppressed = 0;
  if (!rejection_log_->allow(clock_.now(), suppressed)) return;
  log_event(spdlog::level::warn, what,
            {{"node", node_id_},
             {"hub", options_.hubs[hub]},
             {"code", proto::to_string(code)},
             {"detail", detail},
             {"suppressed", suppressed}});
}

// Any hub's reply to any beat of ours is a round trip (its ack_seq names the
// beat); a push answers none.
void Client::time_beat_reply(const proto::Message& message) {
  const auto* down = std::get_if<proto::DownBeat>(&message);
  if (!options_.observer || !down || down->push || down->node_id != node_id_) return;
  if (const auto rtt = beats_sent_.answered(down->ack_seq, std::chrono::steady_clock::now()))
    options_.observer->beat_round_trip(*rtt);
}

void Client::time_lookups(const std::vector<std::uint64_t>& ids) {
  if (!options_.observer) return;
  const auto now = std::chrono::steady_clock::now();
  for (const auto id : ids)
    if (const auto latency = lookups_sent_.answered(id, now))
      options_.observer->first_lookup(*latency);
}

void Client::dispatch(AgentActions actions) {
  for (const auto& out : actions.send)
    send(out);
  if (!actions.keepalive.empty()) {
    static const auto kEmptyBatch = proto::encode_batch({});
    for (const auto hub : actions.keepalive)  // not connected: nothing to keep alive
      [[maybe_unused]] auto sent =
          (*sockets_)[hub].send(zmq::buffer(kEmptyBatch), zmq::send_flags::dontwait);
  }
  if (!actions.changed.empty() || !actions.dropped.empty()) {
    // Before anyone waiting on a query wakes: the rules that came with a list apply with it.
    std::lock_guard lock(mu_);
    for (const auto& key : actions.changed)
      sync_hub_routes(key);
    for (const auto& key : actions.dropped)
      sync_hub_routes(key);  // no longer cached: its hub rules go
  }
  if (!actions.answered.empty() || !actions.timed_out.empty() || actions.deregistered) {
    {
      std::lock_guard lock(mu_);
      finished_queries_.insert(actions.answered.begin(), actions.answered.end());
      finished_queries_.insert(actions.timed_out.begin(), actions.timed_out.end());
      deregistered_ |= actions.deregistered;
      time_lookups(actions.answered);
      time_lookups(actions.timed_out);
    }
    cv_.notify_all();
    finish_async(actions.answered);
    finish_async(actions.timed_out);
  }
  if (!actions.dropped.empty()) {
    std::lock_guard lock(mu_);
    for (const auto& key : actions.dropped)
      balancers_.erase(key);  // no growth with churning names
  }
  persist(actions);
  notify_changes(actions.changed);
  config_changed(actions);
}

void Client::send(const Outgoing& out) {
  const auto bytes = proto::encode(out.message);
  // Not connected (immediate) or over the high-water mark: the core counts the
  // unanswered beat as a miss and fails over; nothing queues up meanwhile.
  const auto sent = (*sockets_)[out.hub].send(zmq::buffer(bytes), zmq::send_flags::dontwait);
  spdlog::debug("{} -> {} to {}{}", node_id_, proto::to_string(proto::type_of(out.message)),
                options_.hubs[out.hub], sent ? "" : " (not sent)");
  const auto* beat = std::get_if<proto::UpBeat>(&out.message);
  if (beat && sent && options_.observer)
    beats_sent_.sent(beat->seq, std::chrono::steady_clock::now());
  if (beat && !sent) {
    std::lock_guard lock(mu_);
    core_.beat_not_sent(clock_.now());
  }
}

void Client::persist(const AgentActions& actions) {
  if (!store_ || (actions.changed.empty() && actions.dropped.empty())) return;
  save_snapshots(actions.changed, actions.dropped);
}

void Client::save_snapshots(const std::vector<proto::ServiceKey>& keep,
                            const std::vector<proto::ServiceKey>& drop) {
  std::vector<ServiceSnapshot> snapshots;
  {
    std::lock_guard lock(mu_);
    for (const auto& key : keep)
      snapshots.push_back(core_.snapshot_of(key, clock_.wall_ms(), clock_.now()));
  }
  try {
    store_->save(snapshots, drop);
  } catch (const std::exception& e) {
    spdlog::error("could not save the service snapshot: {}", e.what());
  }
}

void Client::notify_changes(const std::vector<proto::ServiceKey>& changed) {
  std::function<void(const Resolution&)> callback;
  std::vector<Resolution> resolutions;
  {
    std::lock_guard lock(mu_);
    if (!on_change_ || changed.empty()) return;
    callback = on_change_;
    for (const auto& key : changed)
      if (auto r = core_.peek(clock_.now(), clock_.wall_ms(), key))
        resolutions.push_back(std::move(*r));
  }
  for (const auto& r : resolutions) {
    // The application's code must not take the I/O thread (and the beats) down with it.
    try {
      callback(r);
    } catch (const std::exception& e) {
      spdlog::error("on_change callback threw for {}: {}", r.service.name, e.what());
    } catch (...) {
      spdlog::error("on_change callback threw for {}", r.service.name);
    }
  }
}

}  // namespace cascade::agent
