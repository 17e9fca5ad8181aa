#include "sim/world.hpp"

#include <cassert>
#include <stdexcept>
#include <utility>

#include "sim/seed.hpp"

namespace cascade::sim {

namespace {

AgentPoolConfig pool_config(const WorldConfig& c) {
  if (c.agent.hub_count != 1) throw std::invalid_argument("a World has exactly one hub");
  return AgentPoolConfig{c.agent, c.use_interval, c.stop_timeout, c.start, c.wall_at_start};
}

}  // namespace

World::World(WorldConfig config)
    : config_(std::move(config)),
      events_(config_.start),
      network_(config_.network, stream_seed(config_.seed, kNetworkStream), events_,
               [this](Address from, Address to, const proto::Message& m) { receive(from, to, m); }),
      agents_(pool_config(config_), config_.seed, events_,
              [this](std::size_t agent, const agent::Outgoing& out) {
                assert(out.hub == 0);
                observer_->on_agent_sent(now(), agent, out.message);
                network_.send(address_of(agent), kHubAddress, out.message);
              }),
      hub_(HubProcessConfig{config_.hub,
                            config_.flush_interval,
                            kHubAddress,
                            {},
                            [this](Address from) { return source_of(from); }},
           events_, network_,
           HubHooks{[this](Address from, const proto::Message& m) {
                      observer_->on_hub_received(now(), from - 1, m);
                    },
                    [this] { observer_->on_hub_tick(now()); },
                    [this] { observer_->on_hub_started(now()); }}) {
  hub_.boot();
}

void World::set_observer(WorldObserver* observer) {
  observer_ = observer != nullptr ? observer : &default_observer_;
}

WorldStats World::stats() const {
  const auto& h = hub_.stats();
  const auto& a = agents_.stats();
  return WorldStats{h.restarts, h.lost_while_down, h.replies_lost_in_crash, a.queries_retried,
                    a.stops_timed_out};
}

std::string World::source_of(Address from) const {
  if (from == kHubAddress || from - 1 >= agents_.size()) return {};
  return agents_.spec(from - 1).source;
}

void World::receive(Address from, Address to, const proto::Message& message) {
  if (to == kHubAddress) {
    hub_.receive(from, message);
    return;
  }
  const std::size_t agent = to - 1;
  if (agents_.deliver(agent, 0, message)) observer_->on_agent_received(now(), agent, message);
}

}  // namespace cascade::sim
