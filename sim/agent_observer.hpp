#pragma once
// The agents' hooks, which World and TieredWorld call alike (both name an
// agent by its index; sim/agent_world.hpp calls them), and the fan-out that
// ObserverList and TieredObserverList build on. Each world's observer
// (sim/world_observer.hpp, sim/tiered_observer.hpp) adds its hubs' hooks.

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::sim {

// Every hook runs after the event it names has been processed. Default: nothing.
class AgentObserver {
 public:
  virtual ~AgentObserver() = default;
  // An agent handed a message to the network (which may still lose it).
  virtual void on_agent_sent(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
  // A running (or stopping) agent processed a message delivered to it.
  virtual void on_agent_received(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
  // The values of a config group the agent follows changed, or first came
  // (AgentActions::config_changed); before on_agent_received of the message
  // that changed them, if a message did.
  virtual void on_agent_config_changed(MonoTime, std::size_t /*agent*/,
                                       const std::string& /*group*/) {}
};

// Forwards every hook to each observer added, in the order added. Not owning.
// `Observer` is a world's observer; this forwards the agents' hooks, and the
// list derived from it forwards the hubs' through each().
template <typename Observer>
class ObserverFanOut : public Observer {
 public:
  ObserverFanOut() = default;
  ObserverFanOut(std::initializer_list<Observer*> observers) : observers_(observers) {}
  void add(Observer* observer) { observers_.push_back(observer); }

  void on_agent_sent(MonoTime t, std::size_t a, const proto::Message& m) override {
    each([&](Observer& o) { o.on_agent_sent(t, a, m); });
  }
  void on_agent_received(MonoTime t, std::size_t a, const proto::Message& m) override {
    each([&](Observer& o) { o.on_agent_received(t, a, m); });
  }
  void on_agent_config_changed(MonoTime t, std::size_t a, const std::string& group) override {
    each([&](Observer& o) { o.on_agent_config_changed(t, a, group); });
  }

 protected:
  // Calls `hook(observer)` for each observer, in the order added.
  template <typename Hook>
  void each(const Hook& hook) {
    for (auto* o : observers_)
      hook(*o);
  }

 private:
  std::vector<Observer*> observers_;
};

}  // namespace cascade::sim
