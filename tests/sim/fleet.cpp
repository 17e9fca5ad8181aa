#include "cascade/tests/sim/fleet.hpp"

#include <cassert>

namespace cascade::sim::testing {

WorldConfig standard_config(std::uint64_t seed) {
  WorldConfig c;
  c.seed = seed;
  c.network = NetworkConfig{0.05, Duration{1}, kMaxDelay};
  c.hub.hub_id = "hub-sim";
  c.hub.lease = kLease;
  c.agent.beat_interval = kBeatInterval;
  c.agent.beat_jitter = kBeatJitter;
  c.audit_interval = kTotalsAudit;
  return c;
}

proto::ServiceKey service_key(std::size_t index) {
  return proto::ServiceKey{"svc-" + std::to_string(index), std::string(proto::kDefaultGroup)};
}

Fleet build_fleet(World& world, const FleetShape& shape) {
  Fleet fleet;
  for (std::size_t s = 0; s < shape.services; ++s)
    fleet.services.push_back(service_key(s));
  const auto spread = shape.start_spread.count();
  std::size_t n = 0;
  auto start_time = [&] {
    const auto total = shape.services * shape.instances_per_service + shape.consumers;
    return world.now() +
           Duration{spread * static_cast<std::int64_t>(n++) / static_cast<std::int64_t>(total)};
  };
  for (std::size_t s = 0; s < shape.services; ++s) {
    for (std::size_t i = 0; i < shape.instances_per_service; ++i)
      world.start_at(add_provider(world, fleet, s, std::to_string(i)), start_time());
  }
  for (std::size_t c = 0; c < shape.consumers; ++c) {
    std::vector<proto::ServiceKey> uses;
    for (std::size_t k = 0; k < shape.uses_per_consumer; ++k)
      uses.push_back(fleet.services[(c * 7 + k * 13) % shape.services]);
    const auto agent = world.add_agent(AgentSpec{"consumer-" + std::to_string(c), {}, uses});
    world.start_at(agent, start_time());
    fleet.consumers.push_back(agent);
  }
  return fleet;
}

std::size_t add_provider(World& world, Fleet& fleet, std::size_t service, const std::string& id) {
  proto::Registration reg;
  reg.service = fleet.services.at(service);
  reg.instance.id = "p-" + std::to_string(service) + "-" + id;
  reg.instance.address =
      "10." + std::to_string(service) + ".0.1:" + std::to_string(8000 + fleet.providers.size());
  reg.instance.zone = fleet.providers.size() % 2 == 0 ? "zone-a" : "zone-b";
  reg.instance.metadata["version"] = "1." + id;
  const auto agent = world.add_agent(AgentSpec{"node-" + reg.instance.id, {reg}, {}});
  fleet.providers.push_back(agent);
  return agent;
}

const proto::Registration& provided(const World& world, std::size_t provider) {
  const auto& provides = world.spec(provider).provides;
  assert(provides.size() == 1);
  return provides.front();
}

std::vector<std::string> missing_live_instances(const World& world, const Fleet& fleet) {
  std::vector<std::string> missing;
  for (auto p : fleet.providers) {
    if (!world.running(p)) continue;
    const auto& reg = provided(world, p);
    if (!world.hub_has(reg.service, reg.instance.id))
      missing.push_back(reg.service.name + "/" + reg.instance.id);
  }
  return missing;
}

bool cache_matches_hub(const World& world, std::size_t agent, const proto::ServiceKey& service) {
  const auto cached = world.cached_instances(agent, service);
  return cached && *cached == world.hub_instances(service);
}

bool consumer_matches_hub(const World& world, std::size_t consumer) {
  for (const auto& service : world.spec(consumer).uses)
    if (!cache_matches_hub(world, consumer, service)) return false;
  return true;
}

std::vector<std::string> consumers_out_of_date(const World& world, const Fleet& fleet) {
  std::vector<std::string> stale;
  for (auto c : fleet.consumers) {
    if (!world.running(c)) continue;
    for (const auto& service : world.spec(c).uses)
      if (!cache_matches_hub(world, c, service))
        stale.push_back(world.spec(c).node_id + " " + service.name);
  }
  return stale;
}

std::vector<std::size_t> pick_providers(const Fleet& fleet, std::size_t count) {
  std::vector<std::size_t> picked;
  const std::size_t stride = fleet.providers.size() / count;
  for (std::size_t i = 0; i < count; ++i)
    picked.push_back(fleet.providers[i * stride]);
  return picked;
}

std::vector<std::string> totals_drift(const HubProcessStats& hub, const std::string& name) {
  if (hub.audits == 0) return {name + ": never audited (audit_interval 0?)"};
  if (hub.audit_failures == 0) return {};
  return {name + ": " + std::to_string(hub.audit_failures) + " of " + std::to_string(hub.audits) +
          " audits found drift; first " + hub.first_audit_failure};
}

std::vector<std::string> totals_drift(const World& world) {
  return totals_drift(world.hub_stats(), world.config().hub.hub_id);
}

std::vector<std::string> totals_drift(const TieredWorld& world) {
  std::vector<std::string> out;
  for (std::size_t h = 0; h < world.hub_count(); ++h)
    for (auto& line : totals_drift(world.hub_stats(h), world.hub(h).config().hub_id))
      out.push_back(std::move(line));
  return out;
}

}  // namespace cascade::sim::testing
