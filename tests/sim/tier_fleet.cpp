#include "cascade/tests/sim/tier_fleet.hpp"

#include <algorithm>
#include <cassert>

namespace cascade::sim::testing {

namespace {

proto::ServiceKey tier_service(std::size_t dc, std::size_t s) {
  return proto::ServiceKey{"dc" + std::to_string(dc) + "-svc-" + std::to_string(s),
                           std::string(proto::kDefaultGroup)};
}

proto::Registration provider_registration(std::size_t dc, const proto::ServiceKey& service,
                                          std::size_t s, std::size_t n) {
  proto::Registration reg;
  reg.service = service;
  reg.instance.id = "dc" + std::to_string(dc) + "-p-" + std::to_string(n);
  reg.instance.address = "10." + std::to_string(dc) + "." + std::to_string(s) + "." +
                         std::to_string(n % 250) + ":" + std::to_string(8000 + n);
  reg.instance.zone = "dc" + std::to_string(dc);
  reg.instance.metadata["version"] = "1." + std::to_string(n % 7);
  return reg;
}

// Two services of its own datacenter, one of the sibling under the same L2,
// one of a datacenter under the other L2.
std::vector<proto::ServiceKey> consumer_uses(const TierFleet& fleet, std::size_t dc,
                                             std::size_t k) {
  const auto& own = fleet.dcs[dc].services;
  const auto& sibling = fleet.dcs[dc ^ 1].services;
  const auto& far = fleet.dcs[(dc + 2) % kDatacenters].services;
  return {own[k % own.size()], own[(k + 1) % own.size()], sibling[k % sibling.size()],
          far[k % far.size()]};
}

}  // namespace

TieredWorldConfig tier_config(std::uint64_t seed, bool eviction_protection) {
  TieredWorldConfig c;
  c.eviction.enabled = eviction_protection;
  c.seed = seed;
  c.network = NetworkConfig{kTierLoss, Duration{1}, kMaxDelay};
  c.agent.beat_interval = kBeatInterval;
  c.agent.beat_jitter = kBeatJitter;
  c.uplink.beat_interval = kBeatInterval;
  c.uplink.change_delay = kChangeDelay;
  c.flush_interval = kFlushInterval;
  c.audit_interval = kTotalsAudit;
  return c;
}

TierFleet build_tier_fleet(TieredWorld& world, const TierShape& shape) {
  TierFleet fleet;
  fleet.l3 = world.add_hub({"l3", 3, kL3Lease, {}, "global"});
  for (const char* name : {"l2-a", "l2-b"})
    fleet.l2s.push_back(world.add_hub({name, 2, kL2Lease, {fleet.l3}, name}));
  for (std::size_t d = 0; d < kDatacenters; ++d) {
    Datacenter dc;
    const auto name = "dc" + std::to_string(d);
    dc.l2 = fleet.l2s[d / 2];
    dc.l1 = world.add_hub({"l1-" + name, 1, kL1Lease, {dc.l2}, name});
    for (std::size_t s = 0; s < shape.services_per_dc; ++s)
      dc.services.push_back(tier_service(d, s));
    fleet.dcs.push_back(std::move(dc));
  }
  // Datacenters interleaved, so that all of them ramp up together.
  const auto total = static_cast<std::int64_t>(shape.agents_per_dc * kDatacenters);
  const auto providers = shape.agents_per_dc - shape.consumers_per_dc;
  for (std::size_t n = 0; n < shape.agents_per_dc; ++n) {
    for (std::size_t d = 0; d < kDatacenters; ++d) {
      Datacenter& dc = fleet.dcs[d];
      std::size_t agent = 0;
      if (n < providers) {
        const auto s = n % dc.services.size();
        auto reg = provider_registration(d, dc.services[s], s, n);
        agent = world.add_agent(AgentSpec{"node-" + reg.instance.id, {reg}, {}}, {dc.l1});
        dc.providers.push_back(agent);
      } else {
        const auto k = n - providers;
        agent =
            world.add_agent(AgentSpec{"dc" + std::to_string(d) + "-consumer-" + std::to_string(k),
                                      {},
                                      consumer_uses(fleet, d, k)},
                            {dc.l1});
        dc.consumers.push_back(agent);
      }
      fleet.dc_of.push_back(d);
      const auto started = static_cast<std::int64_t>(agent);
      world.start_at(agent, world.now() + Duration{shape.start_spread.count() * started / total});
    }
  }
  return fleet;
}

bool registered(const TieredWorld& world, std::size_t provider) {
  return world.running(provider) && world.agent(provider).last_reply_at().has_value();
}

const proto::Registration& provided(const TieredWorld& world, std::size_t provider) {
  const auto& provides = world.spec(provider).provides;
  assert(provides.size() == 1);
  return provides.front();
}

LiveSets live_sets(const TieredWorld& world, const TierFleet& fleet) {
  LiveSets live;
  for (const auto& dc : fleet.dcs) {
    for (const auto& service : dc.services)
      live[service];
    for (auto p : dc.providers)
      if (world.running(p)) {
        const auto& reg = provided(world, p);
        live[reg.service].push_back(reg.instance);
      }
  }
  for (auto& [service, instances] : live)
    std::sort(instances.begin(), instances.end(),
              [](const proto::Instance& a, const proto::Instance& b) { return a.id < b.id; });
  return live;
}

bool cache_is_live(const TieredWorld& world, std::size_t consumer, const proto::ServiceKey& service,
                   const std::vector<proto::Instance>& live) {
  const auto cached = world.cached_instances(consumer, service);
  if (!cached) return live.empty();
  if (cached->size() != live.size()) return false;
  for (std::size_t i = 0; i < live.size(); ++i) {
    proto::Instance in = (*cached)[i];  // sorted by id, as the live set
    in.tier = 0;
    if (!(in == live[i])) return false;
  }
  return true;
}

std::vector<std::string> missing_same_tier(const TieredWorld& world, const TierFleet& fleet) {
  std::vector<std::string> missing;
  for (std::size_t d = 0; d < fleet.dcs.size(); ++d) {
    const auto& dc = fleet.dcs[d];
    for (auto p : dc.providers) {
      if (!registered(world, p)) continue;
      const auto& reg = provided(world, p);
      if (!world.hub_has(dc.l1, reg.service, reg.instance.id))
        missing.push_back("dc" + std::to_string(d) + "/" + reg.service.name + "/" +
                          reg.instance.id);
    }
  }
  return missing;
}

std::vector<std::string> consumers_off_live(const TieredWorld& world, const TierFleet& fleet) {
  const auto live = live_sets(world, fleet);
  std::vector<std::string> off;
  for (const auto& dc : fleet.dcs)
    for (auto c : dc.consumers) {
      if (!world.running(c)) continue;
      for (const auto& service : world.spec(c).uses)
        if (!cache_is_live(world, c, service, live.at(service)))
          off.push_back(world.spec(c).node_id + " " + service.name);
    }
  return off;
}

std::vector<std::size_t> pick_providers(const TierFleet& fleet, std::size_t dc, std::size_t count,
                                        std::size_t offset) {
  const auto& providers = fleet.dcs.at(dc).providers;
  const std::size_t stride = providers.size() / count;
  assert(offset < stride);
  std::vector<std::size_t> picked;
  for (std::size_t i = 0; i < count; ++i)
    picked.push_back(providers[offset + i * stride]);
  return picked;
}

bool delta_removes(const proto::Message& message, const std::string& id) {
  const auto* beat = std::get_if<proto::UpBeat>(&message);
  if (beat == nullptr || !beat->delta) return false;
  const auto& removed = beat->delta->removed;
  return std::any_of(removed.begin(), removed.end(),
                     [&](const proto::InstanceKey& k) { return k.id == id; });
}

std::vector<std::size_t> chain_of(const TierFleet& fleet, std::size_t dc) {
  return {fleet.dcs.at(dc).l1, fleet.dcs.at(dc).l2, fleet.l3};
}

}  // namespace cascade::sim::testing
