#include "cascade/sim/scale_scenario.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <utility>

#include "cascade/sim/change_tracker.hpp"
#include "cascade/sim/seed.hpp"

namespace cascade::sim {

namespace {

inline constexpr std::size_t kExamples = 10;

void example(ScaleReport& report, std::string what) {
  if (report.examples.size() < kExamples) report.examples.push_back(std::move(what));
}

std::string joined(const std::vector<std::string>& ids) {
  std::string out;
  for (const auto& id : ids)
    out += (out.empty() ? "" : " ") + id;
  return out;
}

inline constexpr std::uint64_t kChurnStream = 4;  // the scenario's own draws (sim/seed.hpp)
inline constexpr Duration kChurnStep{1000};       // churn replaces providers once a second
inline constexpr Duration kFlushInterval{20};
inline constexpr Duration kChangeDelay{20};    // UplinkConfig default
inline constexpr Duration kReplyTimeout{500};  // AgentCoreConfig default

std::string numbered(const std::string& prefix, std::size_t n) {
  return prefix + std::to_string(n);
}

// Hubs list the hubs above them in rotated orders, so that their first
// choices (queries) spread over them.
std::vector<std::size_t> rotated(std::vector<std::size_t> hubs, std::size_t by) {
  std::rotate(hubs.begin(), hubs.begin() + static_cast<std::ptrdiff_t>(by % hubs.size()),
              hubs.end());
  return hubs;
}

}  // namespace

Duration ScaleTiming::cross_tier_bound() const {
  const Duration round_trip = 2 * max_delay;
  const Duration pull = beat + beat / 10 + round_trip + kFlushInterval;
  const Duration push = kChangeDelay + max_delay;
  return 2 * (push + kReplyTimeout) + 3 * (pull + kReplyTimeout);
}

// ---------------------------------------------------------------- building

ScaleScenario::ScaleScenario(ScaleConfig config)
    : config_(std::move(config)), rng_(stream_seed(config_.seed, kChurnStream)) {
  const auto& s = config_.shape;
  if (s.datacenters == 0 || s.regions == 0 || s.datacenters % s.regions != 0)
    throw std::invalid_argument("the datacenters must split evenly over the regions");
  if (s.services < s.datacenters || s.agents < s.datacenters * s.consumer_every)
    throw std::invalid_argument("too few services or agents for the datacenters");
  const auto& t = config_.timing;
  TieredWorldConfig c;
  c.seed = config_.seed;
  // Hubs and agents talk over ZeroMQ on TCP: each link keeps its order.
  c.network = NetworkConfig{t.loss, Duration{1}, t.max_delay, /*in_order=*/true};
  c.agent.beat_interval = t.beat;
  c.uplink.beat_interval = t.beat / 2;  // the product's default: half the beat interval
  c.uplink.mode = hub::UplinkMode::kAll;
  c.flush_interval = kFlushInterval;
  c.time_cores = config_.time_cores;
  c.partitions = config_.partitions;
  world_ = std::make_unique<TieredWorld>(c);
  build_topology();
  // A crashed hub comes back, its agents' leases restored with one lease of
  // grace, and its children rejoin within a failover backoff (a third of the
  // upper lease, jittered) and a lost round trip.
  const Duration rejoin = t.l2_lease() / 3 + t.l2_lease() / 15 + kReplyTimeout + 2 * t.max_delay;
  tracker_ = std::make_unique<ChangeTracker>(
      [this] { return world_->now(); },
      [this](std::size_t agent, const proto::ServiceKey& service, const std::string& id) {
        return world_->cache_lists(agent, service, id);
      },
      service_index_, t.zombie_bound(), std::max(t.l1_lease(), rejoin));
  world_->set_observer(tracker_.get());
  world_->set_send_tap(
      [this](Address from, Address to, std::size_t bytes) { count_traffic(from, to, bytes); });
  build_agents();
  initial_providers_ = providers_.size();
}

ScaleScenario::~ScaleScenario() = default;

void ScaleScenario::build_topology() {
  const auto& s = config_.shape;
  const auto& t = config_.timing;
  const auto l1s = static_cast<double>(s.datacenters * s.l1_per_dc);
  const auto l1s_beside_agents =
      static_cast<std::size_t>(std::lround(config_.l1_share_beside_agents * l1s));
  std::size_t l1s_added = 0;
  auto add_hub = [&](std::string id, std::uint32_t tier, Duration lease,
                     std::vector<std::size_t> ups, std::string zone) {
    hub_tier_.push_back(tier);
    const bool beside_agents = tier == 1 && l1s_added++ < l1s_beside_agents;
    return world_->add_hub(
        {std::move(id), tier, lease, std::move(ups), std::move(zone), beside_agents});
  };
  for (std::size_t i = 0; i < s.l3_hubs; ++i)
    l3s_.push_back(add_hub(numbered("l3-", i), 3, t.l3_lease(), {}, "global"));
  l2_of_region_.resize(s.regions);
  for (std::size_t r = 0; r < s.regions; ++r)
    for (std::size_t i = 0; i < s.l2_per_region; ++i)
      l2_of_region_[r].push_back(add_hub("l2-r" + std::to_string(r) + "-" + std::to_string(i), 2,
                                         t.l2_lease(), rotated(l3s_, i), numbered("region", r)));
  const std::size_t dcs_per_region = s.datacenters / s.regions;
  l1_of_dc_.resize(s.datacenters);
  for (std::size_t d = 0; d < s.datacenters; ++d)
    for (std::size_t i = 0; i < s.l1_per_dc; ++i)
      l1_of_dc_[d].push_back(add_hub("l1-dc" + std::to_string(d) + "-" + std::to_string(i), 1,
                                     t.l1_lease(), rotated(l2_of_region_[d / dcs_per_region], i),
                                     numbered("dc", d)));

  for (std::size_t k = 0; k < s.services; ++k) {
    services_.push_back({"dc" + std::to_string(k % s.datacenters) + "-svc-" + std::to_string(k),
                         std::string(proto::kDefaultGroup)});
    service_index_.emplace(services_.back().name, static_cast<std::uint32_t>(k));
  }
}

void ScaleScenario::build_agents() {
  const auto& s = config_.shape;
  const auto& t = config_.timing;
  // Service k belongs to datacenter k % datacenters; of each datacenter's own
  // list, every cross_stride-th is used from other datacenters.
  const std::size_t per_dc = s.services / s.datacenters;
  const auto cross_stride =
      static_cast<std::size_t>(std::max(1.0, std::round(1 / s.cross_dc_share)));
  const std::size_t cross_per_dc = std::max<std::size_t>(1, per_dc / cross_stride);
  auto own_service = [&](std::size_t d, std::size_t j) { return (j % per_dc) * s.datacenters + d; };
  auto cross_service = [&](std::size_t d, std::size_t j) {
    return own_service(d, (j % cross_per_dc) * cross_stride);
  };

  // Datacenters interleaved, so that they all ramp up together within one interval.
  std::vector<std::size_t> made_in_dc(s.datacenters, 0);
  for (std::size_t n = 0; n < s.agents; ++n) {
    const std::size_t d = n % s.datacenters;
    const std::size_t k = made_in_dc[d]++;
    const auto spread = static_cast<std::size_t>(t.beat.count()) * n / s.agents;
    if (k % s.consumer_every != s.consumer_every - 1) {
      add_provider(d, own_service(d, k), spread);
      continue;
    }
    const std::size_t c = k / s.consumer_every;
    AgentSpec spec{"dc" + std::to_string(d) + "-consumer-" + std::to_string(c), {}, {}};
    for (std::size_t u = 0; u < s.own_uses; ++u)
      spec.uses.push_back(services_[own_service(d, c + u * (per_dc / s.own_uses + 1))]);
    if (c % s.cross_user_every == 0 && s.datacenters > 1) {
      const std::size_t other = (d + 1 + c % (s.datacenters - 1)) % s.datacenters;
      spec.uses.push_back(services_[cross_service(other, c / s.cross_user_every)]);
    }
    const auto uses = spec.uses;
    const auto agent = world_->add_agent(std::move(spec), l1_of_dc_[d]);
    dc_of_agent_.push_back(d);
    tracker_->add_consumer(agent, uses);
    world_->start_at(agent, world_->now() + Duration{static_cast<std::int64_t>(spread)});
  }
}

void ScaleScenario::add_provider(std::size_t dc, std::size_t service, std::size_t start_in_ms) {
  const std::size_t n = next_instance_++;
  proto::Registration reg;
  reg.service = services_[service];
  reg.instance.id = "dc" + std::to_string(dc) + "-i-" + std::to_string(n);
  reg.instance.address = "10." + std::to_string(dc) + "." + std::to_string(n / 250 % 250) + "." +
                         std::to_string(n % 250) + ":" + std::to_string(8000 + n % 1000);
  reg.instance.zone = numbered("dc", dc);
  reg.instance.metadata["version"] = "1." + std::to_string(n % 7);
  const auto agent =
      world_->add_agent(AgentSpec{"node-" + reg.instance.id, {reg}, {}}, l1_of_dc_[dc]);
  dc_of_agent_.push_back(dc);
  providers_.push_back(agent);
  world_->start_at(agent, world_->now() + Duration{static_cast<std::int64_t>(start_in_ms)});
}

// ---------------------------------------------------------------- phases

ScaleReport ScaleScenario::run(const std::function<void(const PhaseReport&)>& on_phase) {
  ScaleReport report;
  const auto& p = config_.phases;
  const auto& s = config_.shape;
  const Duration cut =
      p.cut_leases_x2.count() > 0 ? p.cut_leases_x2 : 2 * config_.timing.l2_lease();
  const std::size_t dcs_per_region = s.datacenters / s.regions;
  // The faults fall on different places: an L2 of the first region, a
  // datacenter of the last region, an L1 of the first datacenter.
  const std::size_t cut_dc = s.datacenters - 1;
  const auto& cut_l2s = l2_of_region_[cut_dc / dcs_per_region];
  auto crash = [this](std::size_t hub, Duration downtime) {
    world_->restart_hub(hub, HubCrash::kLosingUnflushedBatch, downtime);
    tracker_->fault(world_->now(), world_->now() + downtime);
  };
  auto cut_links = [&](bool on) {
    for (auto l1 : l1_of_dc_[cut_dc])
      for (auto l2 : cut_l2s)
        on ? world_->cut(l1, l2) : world_->heal(l1, l2);
  };

  run_phase(
      "registration", p.registration, [] {}, report, on_phase);
  run_phase(
      "steady", p.steady, [] {}, report, on_phase);
  run_phase(
      "churn", p.churn, [this] { start_churn(); }, report, on_phase);
  run_phase(
      "l2-restart", p.l2_restart, [&] { crash(l2_of_region_.front().front(), p.l2_downtime); },
      report, on_phase);
  run_phase(
      "dc-cut", cut + p.after_heal,
      [&] {
        cut_links(true);
        tracker_->fault(world_->now(), world_->now() + cut);
        world_->at(world_->now() + cut, [&cut_links] { cut_links(false); });
      },
      report, on_phase);
  run_phase(
      "l1-restart", p.l1_restart, [&] { crash(l1_of_dc_.front().front(), p.l1_downtime); }, report,
      on_phase);
  run_phase(
      "settle", config_.timing.zombie_bound(), [this] { churning_ = false; }, report, on_phase);
  final_checks(report);
  return report;
}

void ScaleScenario::run_phase(const std::string& name, Duration length,
                              const std::function<void()>& begin, ScaleReport& report,
                              const std::function<void(const PhaseReport&)>& on_phase) {
  const std::size_t index = report.phases.size();
  const auto traffic_before = traffic();
  const auto hub_time_before = hub_time();
  const auto agent_time_before = world_->agent_stats().core_time;
  const auto balance_before = world_->lock_step_balance();
  phase_ = index;
  begin();
  const MonoTime end = world_->now() + length;
  MonoTime next_audit = world_->now() + config_.phases.audit_interval;
  while (world_->now() < end) {
    // Second by second until every L3 holds every instance (the registration wave).
    const Duration step =
        report.registration_ms == 0 ? Duration{1000} : config_.phases.audit_interval;
    world_->run_until(std::min({end, next_audit, world_->now() + step}));
    note_registration(report);
    if (world_->now() >= next_audit) {
      audit(report);
      next_audit = world_->now() + config_.phases.audit_interval;
    }
  }
  audit(report);

  PhaseReport phase;
  phase.name = name;
  phase.length = length;
  const auto hub_time_after = hub_time();
  const auto traffic_after = traffic();
  for (std::size_t t = 0; t < kTiers; ++t) {
    phase.traffic[t] = minus(traffic_after[t], traffic_before[t]);
    phase.hub_time[t] = minus(hub_time_after[t], hub_time_before[t]);
  }
  phase.agent_time = minus(world_->agent_stats().core_time, agent_time_before);
  const auto balance_after = world_->lock_step_balance();
  phase.threads = {balance_after.windows - balance_before.windows,
                   balance_after.first_waited - balance_before.first_waited,
                   balance_after.first_wait - balance_before.first_wait,
                   balance_after.second_wait - balance_before.second_wait};
  report.phases.push_back(std::move(phase));
  if (on_phase) on_phase(report.phases.back());
}

// The registration wave is over when every L3 holds every provider's instance.
void ScaleScenario::note_registration(ScaleReport& report) const {
  if (report.registration_ms != 0) return;
  for (auto l3 : l3s_)
    if (!world_->hub_up(l3) || world_->hub(l3).registry().instance_count() < providers_.size())
      return;
  report.registration_ms =
      static_cast<std::size_t>((world_->now() - world_->config().start).count());
}

std::array<CoreTime, kTiers> ScaleScenario::hub_time() const {
  std::array<CoreTime, kTiers> out{};
  for (std::size_t h = 0; h < world_->hub_count(); ++h) {
    const CoreTime& t = world_->hub_stats(h).core_time;
    out[hub_tier_[h] - 1].calls += t.calls;
    out[hub_tier_[h] - 1].ns += t.ns;
  }
  return out;
}

// ---------------------------------------------------------------- churn

void ScaleScenario::start_churn() {
  churning_ = true;
  world_->at(world_->now() + kChurnStep, [this] { churn_step(); });
}

// Replaces churn_per_minute of the providers per minute, a share each second
// (the fraction carried over), victims drawn uniformly among the running ones.
void ScaleScenario::churn_step() {
  if (!churning_) return;
  const double per_step = config_.phases.churn_per_minute *
                          static_cast<double>(initial_providers_) *
                          static_cast<double>(kChurnStep.count()) / 60'000.0;
  churn_carry_ += per_step;
  for (; churn_carry_ >= 1; churn_carry_ -= 1) {
    for (int tries = 0; tries < 16; ++tries) {
      const auto victim = providers_[static_cast<std::size_t>(
          rng_.uniform(0, static_cast<std::int64_t>(providers_.size()) - 1))];
      if (!world_->running(victim)) continue;
      replace_provider(victim);
      break;
    }
  }
  world_->at(world_->now() + kChurnStep, [this] { churn_step(); });
}

// Crashes or stops the victim (alternately) and starts a new provider of the
// same service in its datacenter, with a new instance.
void ScaleScenario::replace_provider(std::size_t victim) {
  const auto& reg = world_->spec(victim).provides.front();
  const auto service = service_index_.at(reg.service.name);
  tracker_->note_change(service, reg.instance.id, /*added=*/false, phase_);
  stop_next_ ? world_->stop(victim) : world_->kill(victim);
  stop_next_ = !stop_next_;
  add_provider(dc_of_agent_[victim], service, 0);
  tracker_->note_change(service, world_->spec(providers_.back()).provides.front().instance.id,
                        /*added=*/true, phase_);
}

// ---------------------------------------------------------------- checks

bool ScaleScenario::held_by_l1(std::size_t provider) const {
  const auto& reg = world_->spec(provider).provides.front();
  for (auto l1 : l1_of_dc_[dc_of_agent_[provider]])
    if (world_->hub_up(l1) && world_->hub_has(l1, reg.service, reg.instance.id)) return true;
  return false;
}

bool ScaleScenario::dc_up(std::size_t dc) const {
  return std::all_of(l1_of_dc_[dc].begin(), l1_of_dc_[dc].end(),
                     [this](std::size_t l1) { return world_->hub_up(l1); });
}

// Every registered live provider is held by an L1 of its datacenter (unless
// one of them is down: its agents may still be failing over); no removed
// instance is held by any hub past its deadline.
void ScaleScenario::audit(ScaleReport& report) {
  ++report.audits;
  for (auto p : providers_) {
    if (!world_->running(p) || !world_->agent(p).last_reply_at()) continue;
    if (!dc_up(dc_of_agent_[p]) || held_by_l1(p)) continue;
    if (lost_.insert(p).second) ++report.lost_at_l1;
  }
  auto& removed = tracker_->removed();
  std::erase_if(removed, [&](const ChangeTracker::Removed& r) {
    if (world_->now() < tracker_->deadline(r.at)) return false;
    const auto& key = services_[r.service];
    for (std::size_t h = 0; h < world_->hub_count(); ++h)
      if (world_->hub_up(h) && world_->hub_has(h, key, r.instance_id)) {
        ++report.zombies;
        example(report, "zombie " + r.instance_id + " at hub " + std::to_string(h) +
                            ", removed at " + std::to_string(to_ms(r.at)) + " ms, now " +
                            std::to_string(to_ms(world_->now())));
        return true;  // counted once
      }
    return true;
  });
}

// At the end: every live instance at every hub above its L1, every consumer
// holding the live set of each service it uses, every change judged.
void ScaleScenario::final_checks(ScaleReport& report) {
  const auto& s = config_.shape;
  std::vector<std::vector<std::string>> live(services_.size());
  for (auto p : providers_) {
    if (!world_->running(p)) continue;
    const auto& reg = world_->spec(p).provides.front();
    live[service_index_.at(reg.service.name)].push_back(reg.instance.id);
    const std::size_t region = dc_of_agent_[p] / (s.datacenters / s.regions);
    std::vector<std::size_t> above = l2_of_region_[region];
    above.insert(above.end(), l3s_.begin(), l3s_.end());
    for (auto h : above)
      if (world_->hub_up(h) && !world_->hub_has(h, reg.service, reg.instance.id))
        ++report.lost_above;
  }
  for (auto& ids : live)
    std::sort(ids.begin(), ids.end());
  for (std::uint32_t k = 0; k < services_.size(); ++k)
    for (auto c : tracker_->consumers_of(k)) {
      std::vector<std::string> ids;
      if (const auto cached = world_->cached_instances(c, services_[k]))
        for (const auto& in : *cached)
          ids.push_back(in.id);
      std::sort(ids.begin(), ids.end());
      if (ids == live[k]) continue;
      ++report.consumers_off_live;
      example(report, world_->spec(c).node_id + " " + services_[k].name + " holds [" + joined(ids) +
                          "], live [" + joined(live[k]) + "]");
    }
  judge_changes(report);
  report.providers = static_cast<std::size_t>(std::count_if(
      providers_.begin(), providers_.end(), [this](std::size_t p) { return world_->running(p); }));
  report.consumers = world_->agent_count() - providers_.size();
  report.hubs = world_->hub_count();
  report.trace_hash = world_->trace_hash();
  const NetworkStats network = world_->network_stats();
  report.messages = network.sent;
  report.bytes = network.bytes;
}

// Each change's time until every consumer held it, in the phase it was made;
// a removal some consumer still had not seen at its deadline is a zombie in
// that consumer's cache.
void ScaleScenario::judge_changes(ScaleReport& report) const {
  for (const auto& change : tracker_->changes()) {
    PhaseReport& phase = report.phases.at(change.phase);
    ++phase.changes;
    const MonoTime due = tracker_->deadline(change.at);
    report.max_deadline = std::max(report.max_deadline, due - change.at);
    if (change.undone) {
      ++phase.undone;
      continue;
    }
    if (!change.seen_by_all) {
      ++phase.unseen;
      if (!change.added && world_->now() >= due) ++report.zombie_caches;
      continue;
    }
    phase.convergence_ms.push_back(static_cast<double>((*change.seen_by_all - change.at).count()));
    if (*change.seen_by_all > due) {
      ++phase.late;
      if (!change.added) ++report.zombie_caches;
    }
  }
}

// ---------------------------------------------------------------- traffic

// A message counts for the tier of the hub on its upper end: into it from an
// agent or a lower hub, or out of it down to one.
void ScaleScenario::count_traffic(Address from, Address to, std::size_t bytes) {
  const auto sender = world_->hub_at(from);
  const auto receiver = world_->hub_at(to);
  const std::uint32_t from_tier = sender ? hub_tier_[*sender] : 0;
  const std::uint32_t to_tier = receiver ? hub_tier_[*receiver] : 0;
  // One array per partition: in threaded lock step each side counts on its own thread.
  Traffic& counts =
      world_->in_hub_partition(from) ? sent_in_hub_partition_ : sent_in_agent_partition_;
  if (to_tier > from_tier) {
    auto& t = counts[to_tier - 1];
    ++t.messages_in;
    t.bytes_in += bytes;
  } else if (from_tier > to_tier) {
    auto& t = counts[from_tier - 1];
    ++t.messages_out;
    t.bytes_out += bytes;
  }
}

ScaleScenario::Traffic ScaleScenario::traffic() const {
  Traffic sum{};
  for (std::size_t t = 0; t < kTiers; ++t)
    sum[t] = plus(sent_in_agent_partition_[t], sent_in_hub_partition_[t]);
  return sum;
}

TierTraffic plus(const TierTraffic& a, const TierTraffic& b) {
  return {a.messages_in + b.messages_in, a.messages_out + b.messages_out, a.bytes_in + b.bytes_in,
          a.bytes_out + b.bytes_out};
}

TierTraffic minus(const TierTraffic& a, const TierTraffic& b) {
  return {a.messages_in - b.messages_in, a.messages_out - b.messages_out, a.bytes_in - b.bytes_in,
          a.bytes_out - b.bytes_out};
}

CoreTime minus(const CoreTime& a, const CoreTime& b) {
  return {a.calls - b.calls, a.ns - b.ns};
}

}  // namespace cascade::sim
