#pragma once
// Hooks into a TieredWorld for assertions at exact moments, and a fan-out
// that lets several observers watch one world. The agents' hooks are
// AgentObserver's (sim/agent_observer.hpp), shared with WorldObserver.

#include <cstddef>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/sim/agent_observer.hpp"
#include "cascade/sim/network.hpp"

namespace cascade::sim {

// Every hook runs after the event it names has been processed. Default: nothing.
// Hubs and agents are named by their TieredWorld indexes; `from` is an address
// (TieredWorld::agent_at / hub_at tell whose).
class TieredObserver : public AgentObserver {
 public:
  // A hub handled a message: a request from an agent or a lower hub, or a reply
  // from its upstream. May crash the hub (TieredWorld::restart_hub).
  virtual void on_hub_received(MonoTime, std::size_t /*hub*/, Address /*from*/,
                               const proto::Message&) {}
  // A hub ran tick() because a lease or uplink deadline was due.
  virtual void on_hub_tick(MonoTime, std::size_t /*hub*/) {}
  // A hub (re)started and restored its disk's snapshot.
  virtual void on_hub_started(MonoTime, std::size_t /*hub*/) {}
};

// Forwards every hook to each observer added, in the order added. Not owning.
class TieredObserverList final : public ObserverFanOut<TieredObserver> {
 public:
  using ObserverFanOut::ObserverFanOut;

  void on_hub_received(MonoTime t, std::size_t h, Address from, const proto::Message& m) override {
    each([&](TieredObserver& o) { o.on_hub_received(t, h, from, m); });
  }
  void on_hub_tick(MonoTime t, std::size_t h) override {
    each([&](TieredObserver& o) { o.on_hub_tick(t, h); });
  }
  void on_hub_started(MonoTime t, std::size_t h) override {
    each([&](TieredObserver& o) { o.on_hub_started(t, h); });
  }
};

}  // namespace cascade::sim
