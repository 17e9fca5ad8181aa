#pragma once
// Hooks into a TieredWorld for assertions at exact moments, and a fan-out
// that lets several observers watch one world.

#include <cstddef>
#include <initializer_list>
#include <vector>

#include "common/clock.hpp"
#include "common/protocol.hpp"
#include "sim/network.hpp"

namespace cascade::sim {

// Every hook runs after the event it names has been processed. Default: nothing.
// Hubs and agents are named by their TieredWorld indexes; `from` is an address
// (TieredWorld::agent_at / hub_at tell whose).
class TieredObserver {
 public:
  virtual ~TieredObserver() = default;
  // An agent handed a message to the network (which may still lose it).
  virtual void on_agent_sent(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
  // A running (or stopping) agent processed a message delivered to it.
  virtual void on_agent_received(MonoTime, std::size_t /*agent*/, const proto::Message&) {}
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
class TieredObserverList final : public TieredObserver {
 public:
  TieredObserverList() = default;
  TieredObserverList(std::initializer_list<TieredObserver*> observers) : observers_(observers) {}
  void add(TieredObserver* observer) { observers_.push_back(observer); }

  void on_agent_sent(MonoTime t, std::size_t a, const proto::Message& m) override {
    for (auto* o : observers_)
      o->on_agent_sent(t, a, m);
  }
  void on_agent_received(MonoTime t, std::size_t a, const proto::Message& m) override {
    for (auto* o : observers_)
      o->on_agent_received(t, a, m);
  }
  void on_hub_received(MonoTime t, std::size_t h, Address from, const proto::Message& m) override {
    for (auto* o : observers_)
      o->on_hub_received(t, h, from, m);
  }
  void on_hub_tick(MonoTime t, std::size_t h) override {
    for (auto* o : observers_)
      o->on_hub_tick(t, h);
  }
  void on_hub_started(MonoTime t, std::size_t h) override {
    for (auto* o : observers_)
      o->on_hub_started(t, h);
  }

 private:
  std::vector<TieredObserver*> observers_;
};

}  // namespace cascade::sim
