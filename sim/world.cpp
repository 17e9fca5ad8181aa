#include "cascade/sim/world.hpp"

#include <cassert>
#include <stdexcept>
#include <utility>

namespace cascade::sim {

namespace {

const WorldConfig& with_one_hub(const WorldConfig& c) {
  if (c.agent.hub_count != 1) throw std::invalid_argument("a World has exactly one hub");
  return c;
}

}  // namespace

World::World(WorldConfig config)
    : AgentWorld(with_one_hub(config)),
      config_(std::move(config)),
      hub_(HubProcessConfig{config_.hub,
                            config_.flush_interval,
                            kHubAddress,
                            {},
                            [this](Address from) { return source_of(from); },
                            config_.audit_interval},
           events_, network_,
           HubHooks{[this](Address from, const proto::Message& m) {
                      observer_->on_hub_received(now(), from - 1, m);
                    },
                    [this] { observer_->on_hub_tick(now()); },
                    [this] { observer_->on_hub_started(now()); }}) {
  hub_.boot();
}

WorldStats World::stats() const {
  const auto& h = hub_.stats();
  const auto& a = agents_.stats();
  return WorldStats{h.restarts, h.lost_while_down, h.replies_lost_in_crash, a.queries_retried,
                    a.stops_timed_out};
}

Address World::hub_address_for(std::size_t, [[maybe_unused]] std::size_t place) const {
  assert(place == 0);
  return kHubAddress;
}

void World::receive(Address from, Address to, const proto::Message& message) {
  if (to == kHubAddress) {
    hub_.receive(from, message);
    return;
  }
  deliver_to_agent(to - 1, 0, message);
}

}  // namespace cascade::sim
