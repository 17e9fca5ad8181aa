#include "cascade/sim/tiered_world.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace cascade::sim {

namespace {

// Hubs live far above any agent address, so one number names one process.
constexpr Address kFirstHubAddress = Address{1} << 31;

}  // namespace

TieredWorld::TieredWorld(TieredWorldConfig config)
    : AgentWorld(config), config_(std::move(config)), between_windows_(config_.start) {
  agents_.time_cores(config_.time_cores);
  if (config_.partitions != Partitions::kOneQueue) partition();
}

TieredWorld::~TieredWorld() = default;

// ---------------------------------------------------------------- lock step

void TieredWorld::partition() {
  if (config_.network.min_delay < Network::kMinCrossingDelay)
    throw std::invalid_argument("lock step needs every message delayed by at least 1 ms");
  hub_events_ = std::make_unique<EventQueue>(config_.start);
  hub_network_ = std::make_unique<Network>(
      config_.network, stream_seed(config_.seed, kHubNetworkStream), *hub_events_,
      [this](Address from, Address to, const proto::Message& m) { receive(from, to, m); });
  network_.set_remote([this](Address to) { return in_hub_partition(to); });
  hub_network_->set_remote([this](Address to) { return !in_hub_partition(to); });
  lock_step_ = std::make_unique<LockStep>([this](MonoTime t) { events_.run_until(t); },
                                          [this](MonoTime t) { hub_events_->run_until(t); },
                                          config_.partitions == Partitions::kLockStepThreaded);
}

// Window by window: both partitions run the millisecond, then at()'s events
// due in it, then what crossed enters the other's queue (arriving in a later
// millisecond). The first window is the current millisecond again, for what
// was scheduled into it between two calls.
void TieredWorld::run_until(MonoTime until) {
  if (!lock_step_) {
    AgentWorld::run_until(until);
    return;
  }
  for (MonoTime t = std::min(now(), until);; t += Duration{1}) {
    lock_step_->run(t);
    between_windows_.run_until(t);
    hand_over();
    if (t >= until) return;
  }
}

void TieredWorld::at(MonoTime when, EventQueue::Action probe) {
  if (lock_step_)
    between_windows_.at(when, std::move(probe));
  else
    AgentWorld::at(when, std::move(probe));
}

void TieredWorld::hand_over() {
  for (auto& crossing : network_.outbox())
    hub_network_->accept(crossing);
  network_.clear_outbox();
  for (auto& crossing : hub_network_->outbox())
    network_.accept(crossing);
  hub_network_->clear_outbox();
}

void TieredWorld::set_send_tap(const Network::SendTap& tap) {
  network_.set_send_tap(tap);
  if (hub_network_) hub_network_->set_send_tap(tap);
}

std::uint64_t TieredWorld::trace_hash() const {
  if (!hub_network_) return network_.trace_hash();
  return mix(network_.trace_hash() ^ mix(hub_network_->trace_hash()));
}

NetworkStats TieredWorld::network_stats() const {
  NetworkStats sum = network_.stats();
  if (hub_network_) sum += hub_network_->stats();
  return sum;
}

bool TieredWorld::in_hub_partition(Address address) const {
  const auto hub = hub_at(address);
  return hub && in_hub_partition_[*hub];
}

// ---------------------------------------------------------------- hubs

Address TieredWorld::hub_address(std::size_t hub) {
  return kFirstHubAddress + static_cast<Address>(hub);
}

std::optional<std::size_t> TieredWorld::hub_at(Address address) const {
  if (address < kFirstHubAddress || address - kFirstHubAddress >= hubs_.size()) return std::nullopt;
  return address - kFirstHubAddress;
}

hub::HubCoreConfig TieredWorld::core_config(const TierHubSpec& spec) const {
  hub::HubCoreConfig core;
  core.hub_id = spec.id;
  core.tier = spec.tier;
  core.lease = spec.lease;
  core.min_local_up = config_.min_local_up;
  core.zone = spec.zone;
  core.eviction = config_.eviction;
  if (!spec.upstreams.empty()) {
    hub::UplinkConfig uplink = config_.uplink;
    uplink.endpoints.clear();
    for (auto up : spec.upstreams)
      uplink.endpoints.push_back(process(up).config().core.hub_id);
    core.uplink = std::move(uplink);
  }
  return core;
}

std::size_t TieredWorld::add_hub(TierHubSpec spec) {
  const std::size_t index = hubs_.size();
  for (auto up : spec.upstreams)
    if (up >= index) throw std::invalid_argument("hub " + spec.id + ": add its upstreams first");
  // An agent's requests come through its AgentSpec::source; a lower-tier hub
  // is its own source (hub/eviction_guard.hpp).
  HubProcessConfig config{core_config(spec),
                          config_.flush_interval,
                          hub_address(index),
                          {},
                          [this](Address from) { return source_of(from); },
                          config_.audit_interval,
                          config_.time_cores};
  for (auto up : spec.upstreams)
    config.upstreams.push_back(hub_address(up));
  // The hub's own clock: in threaded lock step the other partition's moves meanwhile.
  const bool in_hubs = hub_events_ && !spec.beside_agents;
  EventQueue& events = in_hubs ? *hub_events_ : events_;
  HubHooks hooks{[this, index, &events](Address from, const proto::Message& m) {
                   observer_->on_hub_received(events.now(), index, from, m);
                 },
                 [this, index, &events] { observer_->on_hub_tick(events.now(), index); },
                 [this, index, &events] { observer_->on_hub_started(events.now(), index); }};
  in_hub_partition_.push_back(in_hubs);
  hubs_.push_back(std::make_unique<HubProcess>(
      std::move(config), events, in_hubs ? *hub_network_ : network_, std::move(hooks)));
  hubs_.back()->boot();
  return index;
}

// Each side's network drops what its own hubs send across the cut.
void TieredWorld::cut(std::size_t hub_a, std::size_t hub_b) {
  network_.cut_both_ways(hub_address(hub_a), hub_address(hub_b));
  if (hub_network_) hub_network_->cut_both_ways(hub_address(hub_a), hub_address(hub_b));
}

void TieredWorld::heal(std::size_t hub_a, std::size_t hub_b) {
  network_.heal_both_ways(hub_address(hub_a), hub_address(hub_b));
  if (hub_network_) hub_network_->heal_both_ways(hub_address(hub_a), hub_address(hub_b));
}

// ---------------------------------------------------------------- agents

std::size_t TieredWorld::add_agent(AgentSpec spec, std::vector<std::size_t> hubs) {
  if (hubs.empty()) throw std::invalid_argument("agent " + spec.node_id + " needs a hub");
  for (auto h : hubs)
    if (h >= hubs_.size()) throw std::invalid_argument("agent " + spec.node_id + ": no such hub");
  AgentHubs list(hubs);  // throws before the agent is added
  const auto agent = agents_.add(std::move(spec), hubs.size());
  agent_hubs_.push_back(list);
  return agent;
}

Address TieredWorld::hub_address_for(std::size_t agent, std::size_t place) const {
  return hub_address(agent_hubs_[agent].at(place));
}

// ---------------------------------------------------------------- network

void TieredWorld::receive(Address from, Address to, const proto::Message& message) {
  if (const auto hub = hub_at(to)) {
    process(*hub).receive(from, message);
    return;
  }
  const auto agent = agent_at(to);
  const auto sender = hub_at(from);
  if (!agent || !sender) throw std::logic_error("a message to or from an unknown address");
  // The agent names its hubs by their place in its own list.
  const auto place = agent_hubs_[*agent].place_of(*sender);
  if (!place) throw std::logic_error("an agent got a message from a hub not its own");
  deliver_to_agent(*agent, *place, message);
}

}  // namespace cascade::sim
