#include "cascade/hub/uplink.hpp"

#include <algorithm>

namespace cascade::hub {

namespace {

constexpr Duration kTtlBeforeFirstLease{3000};

agent::AgentCoreConfig core_config(const UplinkConfig& c, const std::string& hub_id,
                                   std::uint32_t tier, std::uint64_t epoch, std::size_t hubs) {
  agent::AgentCoreConfig a;
  a.node_id = hub_id;
  a.epoch = epoch;
  a.hub_count = hubs;
  a.beat_interval = c.beat_interval;
  a.subscription_ttl = c.unused_ttl;
  a.query_timeout = c.query_timeout;
  a.change_delay = c.change_delay;
  a.send_deltas = true;
  a.max_registrations_per_beat = c.max_registrations_per_beat;
  a.sender_tier = tier;
  return a;
}

}  // namespace

Uplink::Uplink(UplinkConfig config, std::string hub_id, std::uint32_t tier, std::uint64_t epoch,
               std::uint64_t rng_seed, MonoTime now)
    : config_(std::move(config)),
      tier_(tier),
      started_(now),
      missing_(config_.negative_ttl, config_.unused_ttl, config_.max_negative_entries) {
  const auto n = std::max<std::size_t>(1, config_.endpoints.size());
  if (config_.mode == UplinkMode::kAll) {
    for (std::size_t i = 0; i < n; ++i)
      cores_.emplace_back(core_config(config_, hub_id, tier, epoch, 1), rng_seed + i);
  } else {
    cores_.emplace_back(core_config(config_, hub_id, tier, epoch, n), rng_seed);
  }
}

agent::AgentCore& Uplink::core_for(std::size_t upstream, std::size_t& from_hub) {
  if (config_.mode == UplinkMode::kAll) {
    from_hub = 0;
    return cores_.at(upstream);
  }
  from_hub = upstream;
  return cores_.front();
}

std::size_t Uplink::upstream_of(std::size_t core, std::size_t hub) const {
  return config_.mode == UplinkMode::kAll ? core : hub;
}

void Uplink::take_actions(MonoTime now, std::size_t core, agent::AgentActions&& actions) {
  for (auto& out : actions.send)
    outgoing_.push_back({upstream_of(core, out.hub), std::move(out.message)});
  const auto finish = [&](std::uint64_t id, bool answered) {
    auto it = question_by_request_.find({core, id});
    if (it == question_by_request_.end()) return;
    const auto service = it->second;
    question_by_request_.erase(it);
    settle(now, service, answered);
  };
  for (const auto id : actions.answered)
    finish(id, true);
  for (const auto id : actions.timed_out)
    finish(id, false);
  for (auto& group : actions.config_changed)
    config_changes_.insert(std::move(group));
  for (auto& group : actions.config_dropped)
    config_changes_.insert(std::move(group));
}

void Uplink::upsert(MonoTime now, proto::Registration reg) {
  for (std::size_t i = 0; i < cores_.size(); ++i)
    take_actions(now, i, cores_[i].add_registration(now, reg));
}

void Uplink::remove(MonoTime now, const proto::InstanceKey& key) {
  for (std::size_t i = 0; i < cores_.size(); ++i)
    take_actions(now, i, cores_[i].remove_registration(now, key.service, key.id));
}

// Marks the service used in every link, so their beats keep it fresh.
void Uplink::touch(MonoTime now, const proto::ServiceKey& service) {
  for (auto& core : cores_)
    core.touch(now, service);
}

void Uplink::follow_config(MonoTime now, std::string_view group) {
  for (auto& core : cores_)
    core.use_config(now, group);
}

bool Uplink::config_pending(MonoTime now, std::string_view group) const {
  if (known_down(now)) return false;
  bool asked_lately = false;
  for (const auto& core : cores_) {
    const auto* held = core.configs().find(group);
    if (held == nullptr) continue;
    if (held->received) return false;
    asked_lately |= now - held->followed_since < config_.query_timeout;
  }
  return asked_lately;
}

// The hubs of an upper pair (kAll) each hold their own keys: the copy is
// every key any link holds, the first-listed upstream's value where several
// hold one. Taking one link's copy whole instead (say, the one confirmed
// last) would lose an edit made at the other hub, or flip between the two
// with the order in which their replies came.
std::optional<proto::ConfigValues> Uplink::upper_config(std::string_view group) const {
  proto::ConfigValues merged;
  for (const auto& core : cores_) {  // in the order the upstreams are listed
    const auto* held = core.configs().find(group);
    if (held != nullptr && held->received)
      merged.insert(held->entries.begin(), held->entries.end());  // the first value stays
  }
  if (merged.empty()) return std::nullopt;
  return merged;
}

std::optional<Duration> Uplink::config_stale_age(MonoTime now, std::string_view group) const {
  if (config_pending(now, group)) return std::nullopt;
  std::optional<Duration> youngest;
  for (const auto& core : cores_) {
    const auto* held = core.configs().find(group);
    if (held == nullptr) continue;
    const auto age = now - (held->received ? held->confirmed_at : held->followed_since);
    if (!youngest || age < *youngest) youngest = age;
  }
  if (!youngest || *youngest <= ttl()) return std::nullopt;
  return youngest;
}

std::vector<std::string> Uplink::take_config_changes() {
  std::vector<std::string> out(config_changes_.begin(), config_changes_.end());
  config_changes_.clear();
  return out;
}

std::uint64_t Uplink::config_groups_left_out() const {
  std::uint64_t n = 0;
  for (const auto& core : cores_)
    n += core.counters().config_groups_left_out;
  return n;
}

std::optional<CrossTierAnswer> Uplink::lookup(MonoTime now, const proto::ServiceKey& service,
                                              std::uint64_t token) {
  touch(now, service);
  auto answer = answer_now(now, service);
  count_lookup(answer);
  if (answer) return answer;
  ask(now, service, token);
  return std::nullopt;
}

void Uplink::count_lookup(const std::optional<CrossTierAnswer>& answer) {
  if (!answer) {
    ++lookups_.misses;
  } else if (answer->outcome == Outcome::kNotFound) {
    ++lookups_.negative_hits;
  } else if (answer->outcome == Outcome::kUnavailable) {
    ++lookups_.unavailable;
  } else {
    ++(answer->view->stale ? lookups_.stale : lookups_.hits);
  }
}

std::optional<CrossTierAnswer> Uplink::answer_now(MonoTime now,
                                                  const proto::ServiceKey& service) const {
  if (known_missing(now, service)) return CrossTierAnswer{Outcome::kNotFound, std::nullopt, false};
  auto view = best_view(now, service);
  if (view && !view->stale) return CrossTierAnswer{Outcome::kFound, std::move(view), false};
  if (!known_down(now)) return std::nullopt;  // ask: the upstream should answer
  if (view && view->age <= config_.max_stale)
    return CrossTierAnswer{Outcome::kFound, std::move(view), false};
  return CrossTierAnswer{Outcome::kUnavailable, std::nullopt, false};
}

Uplink::Known Uplink::use(MonoTime now, const proto::ServiceKey& service) {
  touch(now, service);
  if (const auto* core = serving_core(now, service))
    return {core->held(now, service)->version, false};
  const auto declared = missing_.declare(now, service);
  if (declared.missing) wait_for(now, service);
  const bool ask_again = !declared.missing || declared.expired;
  if (ask_again && !known_down(now)) ask(now, service, std::nullopt);
  return {std::nullopt, declared.missing};
}

// The hubs of an upper pair hold this tier's state independently, and one
// may lag the other by a lost message. Serving whichever copy was confirmed
// last would flip consumers between the two, and since every change is
// pushed, a lagging copy would take a change back from them: the first
// link (in the order the upstreams are listed) with a copy within the TTL is
// served, the others only when it has none.
const agent::AgentCore* Uplink::serving_core(MonoTime now, const proto::ServiceKey& service) const {
  const agent::AgentCore* youngest = nullptr;
  Duration youngest_age{0};
  for (const auto& core : cores_) {
    auto held = core.held(now, service);
    if (!held) continue;
    if (held->age <= ttl()) return &core;
    if (youngest == nullptr || held->age < youngest_age) {
      youngest = &core;
      youngest_age = held->age;
    }
  }
  return youngest;
}

std::optional<Duration> Uplink::stale_age(MonoTime now, const proto::ServiceKey& service) const {
  const auto* core = serving_core(now, service);
  if (core == nullptr) return std::nullopt;
  const auto age = core->held(now, service)->age;
  if (age <= ttl()) return std::nullopt;
  return age;
}

bool Uplink::known_missing(MonoTime now, const proto::ServiceKey& service) const {
  return missing_.fresh(now, service);
}

std::size_t Uplink::reachable_core(MonoTime now) const {
  for (std::size_t i = 0; i < cores_.size(); ++i)
    if (cores_[i].hub_reachable(now)) return i;
  return 0;
}

bool Uplink::knows_address(MonoTime now, const proto::ServiceKey& service,
                           std::string_view address) const {
  const auto* core = serving_core(now, service);
  if (core == nullptr) return false;
  const auto held = core->peek(now, 0, service);
  return held && std::any_of(held->instances.begin(), held->instances.end(),
                             [&](const proto::Instance& in) { return in.address == address; });
}

void Uplink::send_report(MonoTime now, proto::FailureReport report) {
  const std::size_t core = reachable_core(now);
  outgoing_.push_back({upstream_of(core, cores_[core].current_hub()), std::move(report)});
}

void Uplink::ask(MonoTime now, const proto::ServiceKey& service,
                 std::optional<std::uint64_t> waiter) {
  auto [it, fresh_question] = questions_.try_emplace(service);
  if (waiter) it->second.waiters.push_back(*waiter);
  if (!fresh_question) return;  // already asked: wait for that answer
  const std::size_t core = reachable_core(now);
  std::uint64_t request_id = 0;
  auto actions = cores_[core].query(now, service, request_id);
  it->second.core = core;
  it->second.request_id = request_id;
  question_by_request_[{core, request_id}] = service;
  take_actions(now, core, std::move(actions));
}

// The question for `service` got its reply (`answered`) or timed out.
void Uplink::settle(MonoTime now, const proto::ServiceKey& service, bool answered) {
  auto it = questions_.find(service);
  if (it == questions_.end()) return;
  auto waiters = std::move(it->second.waiters);
  questions_.erase(it);
  CrossTierAnswer answer;
  answer.asked_now = answered;
  auto view = best_view(now, service);
  if (answered && known_missing(now, service)) {
    answer.outcome = Outcome::kNotFound;
  } else if (view && (answered || view->age <= config_.max_stale)) {
    answer.outcome = Outcome::kFound;
    answer.view = std::move(view);
  } else {
    answer.outcome = Outcome::kUnavailable;
  }
  for (const auto token : waiters)
    answered_.push_back({token, service, answer});
}

std::optional<CrossTierView> Uplink::best_view(MonoTime now,
                                               const proto::ServiceKey& service) const {
  const auto* core = serving_core(now, service);
  if (core == nullptr) return std::nullopt;
  auto best = core->peek(now, 0, service);
  CrossTierView view;
  view.version = best->version;
  view.instances = std::move(best->instances);
  view.tier = 0;
  for (auto& in : view.instances) {
    if (in.tier == 0) in.tier = upstream_tier();  // held by the upstream's own registry
    if (view.tier == 0 || in.tier < view.tier) view.tier = in.tier;  // the nearest tier answers
  }
  if (view.tier == 0) view.tier = upstream_tier();
  view.age = best->age;
  view.stale = best->age > ttl();
  return view;
}

void Uplink::on_link_up(MonoTime now, std::size_t upstream) {
  if (upstream >= std::max<std::size_t>(1, config_.endpoints.size())) return;
  std::size_t from_hub = 0;
  auto& core = core_for(upstream, from_hub);
  take_actions(now, config_.mode == UplinkMode::kAll ? upstream : 0,
               core.on_link_up(now, from_hub));
}

void Uplink::on_message(MonoTime now, std::size_t upstream, const proto::Message& message) {
  if (upstream >= std::max<std::size_t>(1, config_.endpoints.size())) return;
  std::size_t from_hub = 0;
  auto& core = core_for(upstream, from_hub);
  const auto* reply = std::get_if<proto::QueryReply>(&message);
  const bool not_found = reply != nullptr && !reply->found;
  if (not_found)
    missing_.remember(now, reply->service);
  else if (reply != nullptr)
    missing_.forget(reply->service);
  const auto index = config_.mode == UplinkMode::kAll ? upstream : 0;
  take_actions(now, index, core.on_message(now, from_hub, message));
  // Kept as a negative entry here, not as an empty list the beats would declare.
  if (not_found) core.forget(reply->service);
  end_waits_found(message);
}

void Uplink::on_timer(MonoTime now) {
  for (std::size_t i = 0; i < cores_.size(); ++i)
    take_actions(now, i, cores_[i].on_timer(now));
  missing_.prune(now);
  drop_unused_waits(now);
}

void Uplink::wait_for(MonoTime now, const proto::ServiceKey& service) {
  auto it = waits_.find(service);
  if (it != waits_.end()) {
    it->second = now;
    return;
  }
  if (waits_.size() >= config_.max_waits) return;  // a storm of names: asked again
  waits_.emplace(service, now);
  for (auto& core : cores_)
    core.pin(service);
}

void Uplink::end_wait(const proto::ServiceKey& service) {
  if (waits_.erase(service) == 0) return;
  unpin(service);  // the list now cached expires when unused, like any other
}

void Uplink::unpin(const proto::ServiceKey& service) {
  for (auto& core : cores_)
    core.unpin(service);
}

// A list of a waited-for service came: an answer that found it, or the
// upper tier's push of its first registration. What "not found" said is over.
void Uplink::end_waits_found(const proto::Message& message) {
  if (waits_.empty()) return;
  const auto found = [&](const proto::ServiceKey& service) {
    if (!waits_.contains(service)) return;
    missing_.forget(service);
    end_wait(service);
  };
  if (const auto* reply = std::get_if<proto::QueryReply>(&message); reply && reply->found)
    found(reply->service);
  if (const auto* down = std::get_if<proto::DownBeat>(&message))
    for (const auto& update : down->updates)
      if (update.kind != proto::UpdateKind::kGone) found(update.service);
}

// Consumers stopped declaring it: the links stop too, and the upper tier forgets the wait.
void Uplink::drop_unused_waits(MonoTime now) {
  if (now < next_wait_prune_) return;
  next_wait_prune_ = now + Duration{1000};
  for (auto it = waits_.begin(); it != waits_.end();) {
    if (now - it->second < config_.unused_ttl) {
      ++it;
      continue;
    }
    unpin(it->first);
    it = waits_.erase(it);
  }
}

MonoTime Uplink::next_deadline() const {
  MonoTime next = cores_.front().next_deadline();
  for (const auto& core : cores_)
    next = std::min(next, core.next_deadline());
  return next;
}

std::vector<UplinkOutgoing> Uplink::take_outgoing() {
  auto out = std::move(outgoing_);
  outgoing_.clear();
  return out;
}

std::vector<AnsweredWaiter> Uplink::take_answered() {
  auto out = std::move(answered_);
  answered_.clear();
  return out;
}

bool Uplink::reachable(MonoTime now) const {
  return std::any_of(cores_.begin(), cores_.end(),
                     [&](const agent::AgentCore& c) { return c.hub_reachable(now); });
}

// Down: nothing answered for a while (and we have been up long enough to know).
bool Uplink::known_down(MonoTime now) const {
  return now - started_ > config_.query_timeout && !reachable(now);
}

Duration Uplink::ttl() const {
  if (config_.cache_ttl.count() > 0) return config_.cache_ttl;
  Duration lease{0};
  for (const auto& core : cores_)
    if (core.granted_lease().count() > 0 && (lease.count() == 0 || core.granted_lease() < lease))
      lease = core.granted_lease();
  return lease.count() > 0 ? lease / 2 : kTtlBeforeFirstLease;
}

std::vector<proto::UpstreamStatus> Uplink::status(MonoTime now) const {
  std::vector<proto::UpstreamStatus> out;
  for (std::size_t i = 0; i < config_.endpoints.size(); ++i) {
    proto::UpstreamStatus s;
    s.endpoint = config_.endpoints[i];
    const auto& core = config_.mode == UplinkMode::kAll ? cores_.at(i) : cores_.front();
    s.current = config_.mode == UplinkMode::kAll || core.current_hub() == i;
    if (s.current) {
      s.hub_id = core.hub_id();
      s.reachable = core.hub_reachable(now);
      if (auto at = core.last_reply_at()) s.last_reply_ms = (now - *at).count();
      s.lease_ms = static_cast<std::uint32_t>(core.granted_lease().count());
    }
    out.push_back(std::move(s));
  }
  return out;
}

void Uplink::append_counters(std::vector<std::pair<std::string, std::uint64_t>>& out) const {
  out.emplace_back("cross_tier_hits", lookups_.hits);
  out.emplace_back("cross_tier_negative_hits", lookups_.negative_hits);
  out.emplace_back("cross_tier_stale", lookups_.stale);
  out.emplace_back("cross_tier_unavailable", lookups_.unavailable);
  out.emplace_back("cross_tier_misses", lookups_.misses);
}

std::size_t Uplink::cached_entries() const {
  std::size_t n = 0;
  for (const auto& core : cores_)
    n = std::max(n, core.cache_size());
  return n;
}

}  // namespace cascade::hub
