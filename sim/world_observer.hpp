#pragma once
// Hooks into a World for assertions at exact moments, and a fan-out that lets
// several observers watch one World. The agents' hooks are AgentObserver's
// (sim/agent_observer.hpp), shared with TieredObserver.

#include <cstddef>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/sim/agent_observer.hpp"

namespace cascade::sim {

// Every hook runs after the event it names has been processed. Default: nothing.
class WorldObserver : public AgentObserver {
 public:
  // The hub handled a message from an agent (and queued or sent its reply).
  virtual void on_hub_received(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
  // The hub ran tick() because a lease deadline was due.
  virtual void on_hub_tick(MonoTime) {}
  // A hub (re)started and restored the disk's snapshot.
  virtual void on_hub_started(MonoTime) {}
};

// Forwards every hook to each observer added, in the order added. Not owning.
class ObserverList final : public ObserverFanOut<WorldObserver> {
 public:
  using ObserverFanOut::ObserverFanOut;

  void on_hub_received(MonoTime t, std::size_t a, const proto::Message& m) override {
    each([&](WorldObserver& o) { o.on_hub_received(t, a, m); });
  }
  void on_hub_tick(MonoTime t) override {
    each([&](WorldObserver& o) { o.on_hub_tick(t); });
  }
  void on_hub_started(MonoTime t) override {
    each([&](WorldObserver& o) { o.on_hub_started(t); });
  }
};

}  // namespace cascade::sim
