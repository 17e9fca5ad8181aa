#include "cascade/bench/tier_load.hpp"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <random>
#include <set>

#include "cascade/common/random.hpp"
#include "cascade/hub/hub_core.hpp"

namespace cascade::bench {

namespace {

const MonoTime kStart = mono_from_ms(1'000'000);

std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

std::string format(const char* pattern, std::size_t a, std::size_t b = 0) {
  char buf[64];
  std::snprintf(buf, sizeof buf, pattern, a, b);
  return buf;
}

// The provider agents of every datacenter: agent `a` of datacenter `dc`
// provides `slots` instances; a slot's instance is replaced (new id, new
// port) each time its generation moves. Registrations are computed, not
// stored, so a million of them cost four bytes each here.
class ProviderFleet {
 public:
  ProviderFleet(std::size_t dcs, std::size_t agents_per_dc, std::size_t slots, std::size_t services)
      : dcs_(dcs),
        agents_per_dc_(agents_per_dc),
        slots_(slots),
        services_(std::max<std::size_t>(1, services)),
        generation_(dcs * agents_per_dc * slots, 0) {}

  std::size_t providers() const { return dcs_ * agents_per_dc_; }
  std::size_t slots() const { return slots_; }
  std::size_t dc_of(std::size_t provider) const { return provider / agents_per_dc_; }

  static std::string dc_name(std::size_t dc) { return format("dc%02zu", dc); }
  std::string node_id(std::size_t provider) const {
    return format("dc%02zu-node-%07zu", dc_of(provider), provider % agents_per_dc_);
  }
  proto::ServiceKey service(std::size_t dc, std::size_t index) const {
    return proto::ServiceKey{format("dc%02zu-svc-%05zu", dc, index % services_),
                             std::string(proto::kDefaultGroup)};
  }

  proto::Registration registration(std::size_t provider, std::size_t slot) const {
    const std::size_t dc = dc_of(provider);
    const std::size_t g = (provider % agents_per_dc_) * slots_ + slot;
    const auto gen = generation_[provider * slots_ + slot];
    proto::Registration r;
    r.service = service(dc, g);
    r.instance.id = node_id(provider) + "-" + std::to_string(slot);
    if (gen > 0) r.instance.id += "-r" + std::to_string(gen);
    r.instance.address = "10." + std::to_string(dc) + "." + std::to_string((g >> 8) & 255) + "." +
                         std::to_string(g & 255) + ":" + std::to_string(8000 + gen % 1000);
    r.instance.zone = dc_name(dc);
    r.instance.metadata.emplace("version", "1.4.2");
    return r;
  }
  std::vector<proto::Registration> registrations(std::size_t provider) const {
    std::vector<proto::Registration> regs;
    regs.reserve(slots_);
    for (std::size_t i = 0; i < slots_; ++i)
      regs.push_back(registration(provider, i));
    return regs;
  }
  void replace(std::size_t provider, std::size_t slot) { ++generation_[provider * slots_ + slot]; }

 private:
  std::size_t dcs_;
  std::size_t agents_per_dc_;
  std::size_t slots_;
  std::size_t services_;
  std::vector<std::uint32_t> generation_;
};

agent::AgentCoreConfig agent_config(const std::string& node_id, Duration beat) {
  agent::AgentCoreConfig c;
  c.node_id = node_id;
  c.epoch = 1;
  c.hub_count = 1;
  c.beat_interval = beat;
  return c;
}

// Whether `hub` holds exactly the instances of the providers in [from, to),
// with their current addresses, and nothing else; the first difference goes
// to `problem`.
bool holds_fleet(const hub::HubCore& hub, const ProviderFleet& fleet, std::size_t from,
                 std::size_t to, std::string& problem) {
  std::size_t expected = 0;
  for (std::size_t p = from; p < to; ++p) {
    for (std::size_t i = 0; i < fleet.slots(); ++i) {
      const auto reg = fleet.registration(p, i);
      ++expected;
      const auto* svc = hub.registry().find(reg.service);
      if (svc == nullptr || !svc->instances.contains(reg.instance.id)) {
        problem = hub.config().hub_id + " lacks " + reg.service.name + "/" + reg.instance.id;
        return false;
      }
      if (svc->instances.at(reg.instance.id).address() != reg.instance.address) {
        problem = hub.config().hub_id + " holds an old address for " + reg.instance.id;
        return false;
      }
    }
  }
  if (hub.registry().instance_count() != expected) {
    problem = hub.config().hub_id + " holds " + std::to_string(hub.registry().instance_count()) +
              " instances, expected " + std::to_string(expected);
    return false;
  }
  return true;
}

std::set<std::string> ids_of(const std::vector<proto::Instance>& instances) {
  std::set<std::string> ids;
  for (const auto& in : instances)
    ids.insert(in.id);
  return ids;
}

LoadPhase phase_of(const VirtualDeployment& d, std::size_t hub, Duration length, Duration beat,
                   std::uint64_t changes) {
  LoadPhase p;
  p.seconds = std::chrono::duration<double>(length).count();
  p.traffic = d.traffic(hub);
  p.changes = changes;
  const auto whole = static_cast<std::size_t>(length / beat);
  auto windows = p.traffic.per_window;
  windows.resize(std::max(whole, windows.size()), 0);
  windows.resize(whole);
  if (!windows.empty()) {
    p.min_per_interval = *std::min_element(windows.begin(), windows.end());
    p.max_per_interval = *std::max_element(windows.begin(), windows.end());
  }
  return p;
}

// Replaces instances at random (a Poisson process of `rate_per_ms`) until `end`.
std::uint64_t churn(VirtualDeployment& d, ProviderFleet& fleet,
                    const std::vector<std::size_t>& agent_of, double rate_per_ms, MonoTime end,
                    std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::exponential_distribution<double> gap(rate_per_ms > 0 ? rate_per_ms : 1.0);
  std::uniform_int_distribution<std::size_t> pick_provider(0, fleet.providers() - 1);
  std::uniform_int_distribution<std::size_t> pick_slot(0, fleet.slots() - 1);
  std::uint64_t changes = 0;
  double t = static_cast<double>(to_ms(d.now()));
  while (rate_per_ms > 0) {
    t += gap(rng);
    const auto at = mono_from_ms(static_cast<std::int64_t>(t));
    if (at >= end) break;
    d.run_until(at);
    const auto p = pick_provider(rng);
    const auto slot = pick_slot(rng);
    const auto old = fleet.registration(p, slot);
    fleet.replace(p, slot);
    d.remove_registration(agent_of[p], {old.service, old.instance.id});
    d.add_registration(agent_of[p], fleet.registration(p, slot));
    ++changes;
  }
  d.run_until(end);
  return changes;
}

void check_phase(const LoadPhase& phase, const std::string& name, bool changes_expected,
                 std::vector<std::string>& problems);

// Warm-up: runs interval by interval until `receiver` holds every instance,
// an interval passes with no set travelling to it, and `also` holds; records
// the warm-up phase. False when that never happened within the limit.
bool warm_up(VirtualDeployment& d, std::size_t receiver, const LoadConfig& c, LoadResult& result,
             const std::function<bool()>& also) {
  bool converged = false;
  d.reset_traffic();
  std::uint64_t sets_seen = 0;
  for (std::size_t n = 0; n < c.max_warmup_intervals && !converged; ++n) {
    d.run_until(d.now() + c.beat);
    const bool quiet = d.traffic(receiver).carrying_sets == sets_seen;
    sets_seen = d.traffic(receiver).carrying_sets;
    converged = quiet && d.hub(receiver).registry().instance_count() == result.instances && also();
  }
  result.warmup_seconds = std::chrono::duration<double>(d.now() - kStart).count();
  result.warmup = phase_of(d, receiver, d.now() - kStart, c.beat, 0);
  return converged;
}

// The churn phase: instances replaced at the configured rate, as `receiver` sees it.
void run_churn(VirtualDeployment& d, ProviderFleet& fleet, const std::vector<std::size_t>& agent_of,
               const LoadConfig& c, std::size_t receiver, const std::string& name,
               LoadResult& result) {
  d.reset_traffic(c.beat);
  const auto churn_start = std::chrono::steady_clock::now();
  const double rate = static_cast<double>(result.instances) * c.churn_per_minute / 60'000.0;
  const auto changes =
      churn(d, fleet, agent_of, rate, d.now() + c.churn, mix64(c.seed ^ 0x5eedULL));
  result.churn_wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - churn_start).count();
  result.churn = phase_of(d, receiver, c.churn, c.beat, changes);
  check_phase(result.churn, name, true, result.problems);
}

void check_phase(const LoadPhase& phase, const std::string& name, bool changes_expected,
                 std::vector<std::string>& problems) {
  const auto& t = phase.traffic;
  if (t.errors != 0) problems.push_back(name + ": " + std::to_string(t.errors) + " error replies");
  if (t.send_full != 0)
    problems.push_back(name + ": " + std::to_string(t.send_full) +
                       " replies asked for a whole set (a digest went out of step)");
  if (!changes_expected && t.carrying_sets != 0)
    problems.push_back(name + ": " + std::to_string(t.carrying_sets) +
                       " beats carried registrations in steady state");
  if (t.messages() == 0) problems.push_back(name + ": nothing received");
}

}  // namespace

double LoadPhase::per_second() const {
  return seconds > 0 ? static_cast<double>(traffic.messages()) / seconds : 0;
}

double LoadPhase::bytes_in_per_second() const {
  return seconds > 0 ? static_cast<double>(traffic.bytes_in) / seconds : 0;
}

double LoadPhase::bytes_out_per_second() const {
  return seconds > 0 ? static_cast<double>(traffic.bytes_out) / seconds : 0;
}

double LoadPhase::per_interval(Duration beat) const {
  return per_second() * std::chrono::duration<double>(beat).count();
}

LoadResult run_tiered_load(const LoadConfig& c) {
  const auto wall_start = std::chrono::steady_clock::now();
  LoadResult result;
  result.tiered = true;
  result.hubs = c.l1_hubs;
  ProviderFleet fleet(c.l1_hubs, c.agents_per_hub, c.instances_per_agent, c.services_per_hub);
  result.agents = fleet.providers();
  result.instances = fleet.providers() * fleet.slots();

  VirtualDeployment d(kStart);
  hub::HubCoreConfig l2_config;
  l2_config.hub_id = "l2";
  l2_config.tier = 2;
  l2_config.lease = c.lease;
  const auto l2 = d.add_hub(l2_config, std::nullopt);
  d.time_hub(l2);
  std::vector<std::size_t> l1(c.l1_hubs);
  for (std::size_t h = 0; h < c.l1_hubs; ++h) {
    hub::HubCoreConfig config;
    config.hub_id = ProviderFleet::dc_name(h);
    config.zone = config.hub_id;
    config.tier = 1;
    config.lease = c.lease;
    config.max_registrations_per_node =
        std::max(config.max_registrations_per_node, c.instances_per_agent);
    hub::UplinkConfig up;
    up.endpoints = {"l2"};
    up.beat_interval = c.beat;
    config.uplink = up;
    l1[h] = d.add_hub(config, l2);
  }

  Rng phases(c.seed);
  std::vector<std::size_t> agent_of(fleet.providers());
  for (std::size_t p = 0; p < fleet.providers(); ++p)
    agent_of[p] = d.add_agent(l1[fleet.dc_of(p)], agent_config(fleet.node_id(p), c.beat),
                              fleet.registrations(p), {}, mix64(c.seed ^ p),
                              kStart + Duration{phases.uniform(0, c.beat.count())});
  // Consumers of other datacenters' services: their uses ride on the uplinks.
  std::vector<std::pair<std::size_t, std::vector<proto::ServiceKey>>> consumers;
  if ((c.l1_hubs > 1 && c.cross_tier_uses > 0) || c.missing_uses > 0) {
    for (std::size_t h = 0; h < c.l1_hubs; ++h) {
      std::vector<proto::ServiceKey> pinned;
      for (std::size_t j = 0; c.l1_hubs > 1 && j < c.cross_tier_uses; ++j)
        pinned.push_back(fleet.service((h + 1 + j % (c.l1_hubs - 1)) % c.l1_hubs, j * 7919));
      for (std::size_t j = 0; j < c.missing_uses; ++j)
        pinned.push_back({format("nowhere-%04zu", j), std::string(proto::kDefaultGroup)});
      const auto agent = d.add_agent(
          l1[h], agent_config(ProviderFleet::dc_name(h) + "-consumer", c.beat), {}, pinned,
          mix64(c.seed ^ (0xc0ffeeULL + h)), kStart + Duration{phases.uniform(0, c.beat.count())});
      consumers.emplace_back(agent, std::move(pinned));
    }
  }
  // Every pinned list at each consumer is the L2's list of that service.
  auto consumers_agree = [&](std::string& problem) {
    for (const auto& [agent, pinned] : consumers) {
      for (const auto& key : pinned) {
        const auto* svc = d.hub(l2).registry().find(key);
        std::set<std::string> want;
        if (svc != nullptr)
          for (const hub::InstanceSlot& slot : svc->instances)
            want.emplace(slot.id());
        const auto have = d.agent(agent).peek(d.now(), 0, key);
        const bool same = have ? ids_of(have->instances) == want : want.empty();
        if (!same) {
          problem = "consumer " + std::to_string(agent) + " holds a different list of " + key.name;
          return false;
        }
      }
    }
    return true;
  };
  auto everything_held = [&](std::string& problem) {
    if (!holds_fleet(d.hub(l2), fleet, 0, fleet.providers(), problem)) return false;
    for (std::size_t h = 0; h < c.l1_hubs; ++h)
      if (!holds_fleet(d.hub(l1[h]), fleet, h * c.agents_per_hub, (h + 1) * c.agents_per_hub,
                       problem))
        return false;
    return consumers_agree(problem);
  };

  // Warm-up: until the L2 holds every instance, every consumer holds its
  // lists and an interval passes with no set travelling; then the contents
  // are compared instance by instance.
  std::string problem;
  const bool converged = warm_up(d, l2, c, result, [&] {
    for (std::size_t h = 0; h < c.l1_hubs; ++h)
      if (d.hub(l1[h]).registry().instance_count() != c.agents_per_hub * fleet.slots())
        return false;
    return consumers_agree(problem);
  });
  if (!converged || !everything_held(problem)) {
    result.problems.push_back("warm-up did not converge within " +
                              std::to_string(c.max_warmup_intervals) + " intervals: " + problem);
    return result;
  }
  const auto full_sets_asked = d.hub(l2).counters().full_sets_requested;

  d.reset_traffic(c.beat);
  d.run_until(d.now() + c.steady);
  result.steady = phase_of(d, l2, c.steady, c.beat, 0);
  for (std::size_t h = 0; h < c.l1_hubs; ++h)
    result.agent_beats_at_l1 += d.traffic(l1[h]).from_agents;
  std::uint64_t agent_bytes = 0;
  for (std::size_t h = 0; h < c.l1_hubs; ++h)
    agent_bytes += d.traffic(l1[h]).bytes_in;
  if (result.agent_beats_at_l1 > 0)
    result.agent_beat_bytes =
        static_cast<double>(agent_bytes) / static_cast<double>(result.agent_beats_at_l1);
  check_phase(result.steady, "tiered steady", false, result.problems);

  run_churn(d, fleet, agent_of, c, l2, "tiered churn", result);

  // Drain: every change reaches L2 and the consumers; then compare contents.
  d.reset_traffic();
  d.run_until(d.now() + 3 * c.beat);
  if (!everything_held(problem)) result.problems.push_back("after churn: " + problem);
  if (d.hub(l2).counters().full_sets_requested != full_sets_asked)
    result.problems.push_back("L2 asked an L1 for its whole set after warm-up");
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

LoadResult run_flat_load(const LoadConfig& c) {
  const auto wall_start = std::chrono::steady_clock::now();
  LoadResult result;
  result.tiered = false;
  result.hubs = 1;
  ProviderFleet fleet(1, c.flat_agents, 1, std::max<std::size_t>(1, c.flat_agents / 100));
  result.agents = fleet.providers();
  result.instances = fleet.providers();

  VirtualDeployment d(kStart);
  hub::HubCoreConfig config;
  config.hub_id = "flat";
  config.lease = c.lease;
  const auto registry = d.add_hub(config, std::nullopt);
  Rng phases(c.seed);
  std::vector<std::size_t> agent_of(fleet.providers());
  for (std::size_t p = 0; p < fleet.providers(); ++p)
    agent_of[p] =
        d.add_agent(registry, agent_config(fleet.node_id(p), c.beat), fleet.registrations(p), {},
                    mix64(c.seed ^ p), kStart + Duration{phases.uniform(0, c.beat.count())});

  std::string problem;
  const bool converged = warm_up(d, registry, c, result, [] { return true; });
  if (!converged || !holds_fleet(d.hub(registry), fleet, 0, fleet.providers(), problem)) {
    result.problems.push_back("flat warm-up did not converge: " + problem);
    return result;
  }

  d.reset_traffic(c.beat);
  d.run_until(d.now() + c.steady);
  result.steady = phase_of(d, registry, c.steady, c.beat, 0);
  if (result.steady.traffic.from_agents > 0)
    result.agent_beat_bytes = static_cast<double>(result.steady.traffic.bytes_in) /
                              static_cast<double>(result.steady.traffic.from_agents);
  check_phase(result.steady, "flat steady", false, result.problems);

  run_churn(d, fleet, agent_of, c, registry, "flat churn", result);

  d.reset_traffic();
  d.run_until(d.now() + c.beat);
  if (!holds_fleet(d.hub(registry), fleet, 0, fleet.providers(), problem))
    result.problems.push_back("flat after churn: " + problem);
  result.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - wall_start).count();
  return result;
}

}  // namespace cascade::bench
