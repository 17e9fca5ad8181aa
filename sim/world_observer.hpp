#pragma once
// Hooks into a World for assertions at exact moments, and a fan-out that lets
// several observers watch one World.

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "common/clock.hpp"
#include "common/protocol.hpp"

namespace cascade::sim {

// Every hook runs after the event it names has been processed. Default: nothing.
class WorldObserver {
 public:
  virtual ~WorldObserver() = default;
  // An agent handed a message to the network (which may still lose it).
  virtual void on_agent_sent(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
  // A running (or stopping) agent processed a message delivered to it.
  virtual void on_agent_received(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
  // The hub handled a message from an agent (and queued or sent its reply).
  virtual void on_hub_received(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
  // The hub ran tick() because a lease deadline was due.
  virtual void on_hub_tick(MonoTime) {}
  // A hub (re)started and restored the disk's snapshot.
  virtual void on_hub_started(MonoTime) {}
};

// Forwards every hook to each observer added, in the order added. Not owning.
class ObserverList final : public WorldObserver {
 public:
  ObserverList() = default;
  ObserverList(std::initializer_list<WorldObserver*> observers) : observers_(observers) {}
  void add(WorldObserver* observer) { observers_.push_back(observer); }

  void on_agent_sent(MonoTime t, std::size_t a, const proto::Message& m) override {
    for (auto* o : observers_)
      o->on_agent_sent(t, a, m);
  }
  void on_agent_received(MonoTime t, std::size_t a, const proto::Message& m) override {
    for (auto* o : observers_)
      o->on_agent_received(t, a, m);
  }
  void on_hub_received(MonoTime t, std::size_t a, const proto::Message& m) override {
    for (auto* o : observers_)
      o->on_hub_received(t, a, m);
  }
  void on_hub_tick(MonoTime t) override {
    for (auto* o : observers_)
      o->on_hub_tick(t);
  }
  void on_hub_started(MonoTime t) override {
    for (auto* o : observers_)
      o->on_hub_started(t);
  }

 private:
  std::vector<WorldObserver*> observers_;
};

}  // namespace cascade::sim
