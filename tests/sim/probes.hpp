#pragma once
// Observers that turn the scenario claims into exact checks: when a departed
// instance left the hub, and whether consumers match the hub once it is quiet.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "cascade/sim/world.hpp"
#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {

// The hub issues every service version above all earlier ones (the counter is
// shared by all services, the epoch is the top bits), so the largest version
// names the state of the whole registry as consumers see it.
std::uint64_t hub_state_version(const World& world);

// Records, for watched providers, when their beats and Deregisters reached the
// hub and when their instance left it. An instance can only leave at a tick,
// on a message from its own agent, or at a hub restart: those are the moments
// it is checked, so the recorded times are exact.
class DepartureRecorder final : public WorldObserver {
 public:
  struct Departure {
    std::optional<MonoTime> last_beat_arrival;  // last UpBeat the hub handled
    std::optional<MonoTime> first_deregister_arrival;
    std::optional<MonoTime> deregister_sent;  // when the one that arrived first was sent
    std::optional<MonoTime> gone_at;          // when the instance was last seen to leave
    bool present = true;
  };

  DepartureRecorder(const World& world, const std::vector<std::size_t>& watched);

  const Departure& of(std::size_t agent) const { return departures_.at(agent); }
  const std::map<std::size_t, Departure>& all() const { return departures_; }

  void on_agent_sent(MonoTime now, std::size_t agent, const proto::Message& m) override;
  void on_hub_received(MonoTime now, std::size_t agent, const proto::Message& m) override;
  void on_hub_tick(MonoTime now) override { check_all(now); }
  void on_hub_started(MonoTime now) override { check_all(now); }

 private:
  void check(MonoTime now, std::size_t agent, Departure& d);
  void check_all(MonoTime now);

  const World& world_;
  std::map<std::size_t, Departure> departures_;
  std::map<std::size_t, std::map<std::uint64_t, MonoTime>> deregister_sent_;  // by seq
};

// "Consumers see it on their next beat": the reply to any beat a consumer sent
// after a watched instance left the hub must leave that instance out of the
// consumer's cache (for the services the consumer uses).
class NextBeatProbe final : public WorldObserver {
 public:
  NextBeatProbe(const World& world, const DepartureRecorder& departures);

  std::size_t checks() const { return checks_; }
  const std::vector<std::string>& failures() const { return failures_; }

  void on_agent_sent(MonoTime now, std::size_t agent, const proto::Message& m) override;
  void on_agent_received(MonoTime now, std::size_t agent, const proto::Message& m) override;

 private:
  void check(std::size_t consumer, MonoTime beat_sent);

  const World& world_;
  const DepartureRecorder& departures_;
  std::map<std::size_t, std::map<std::uint64_t, MonoTime>> beat_sent_;  // by seq
  std::size_t checks_ = 0;
  std::vector<std::string> failures_;
};

// The convergence claim, checked at every moment it applies: whenever the
// hub's registry has not changed for `quiet`, every running consumer's cached
// list equals the hub's list, for every service it uses.
class ConvergenceProbe final : public WorldObserver {
 public:
  ConvergenceProbe(World& world, const Fleet& fleet, Duration quiet);

  // Stops checking before `t` (e.g. while consumers are still starting).
  void check_from(MonoTime t) { check_from_ = t; }
  std::size_t checks() const { return checks_; }
  const std::vector<std::string>& failures() const { return failures_; }
  MonoTime last_change() const { return last_change_; }

  void on_hub_received(MonoTime now, std::size_t, const proto::Message&) override { note(now); }
  void on_hub_tick(MonoTime now) override { note(now); }
  void on_hub_started(MonoTime now) override { changed(now); }

 private:
  void note(MonoTime now);
  void changed(MonoTime now);
  void check(MonoTime change);

  World& world_;
  const Fleet& fleet_;
  Duration quiet_;
  MonoTime check_from_{};
  std::uint64_t version_ = 0;
  MonoTime last_change_{};
  std::size_t checks_ = 0;
  std::vector<std::string> failures_;
};

}  // namespace cascade::sim::testing
