#pragma once
// Observers that turn the tier scenarios' claims into exact checks: whether
// each consumer holds the live set of each service it uses at every moment
// its cache can change, when watched instances left each hub, and whether a
// datacenter's L1 ever lacks one of its live providers.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "cascade/sim/tiered_world.hpp"
#include "cascade/tests/sim/tier_fleet.hpp"

namespace cascade::sim::testing {

// Follows, for every (consumer, used service), whether the cached list is the
// live set. A cache changes only when the consumer takes a DownBeat's update
// or a QueryReply for that service, so those are the moments checked; the
// live set changes only when the test kills, stops or starts providers, and
// it calls refresh() then.
class LiveViewProbe final : public TieredObserver {
 public:
  LiveViewProbe(const TieredWorld& world, const TierFleet& fleet);

  // The live set may have changed: recompute it and re-check every pair. The
  // probe checks nothing before the first call (e.g. during the warm-up).
  void refresh(MonoTime now);

  std::size_t out_of_date() const { return off_.size(); }
  std::vector<std::string> out_of_date_pairs() const;
  // When the last pair came to hold the live set (the start if none ever differed).
  MonoTime last_settled() const { return last_settled_; }
  // Times a pair that held the live set stopped holding it on a message (a
  // regression: the live set itself did not change), in all and per consumer.
  std::uint64_t breaks() const { return breaks_; }
  std::uint64_t breaks_of(std::size_t consumer) const;

  void on_agent_received(MonoTime now, std::size_t agent, const proto::Message& m) override;

 private:
  using Pair = std::pair<std::size_t, proto::ServiceKey>;
  void check(MonoTime now, std::size_t consumer, const proto::ServiceKey& service);

  const TieredWorld& world_;
  const TierFleet& fleet_;
  LiveSets live_;
  std::set<Pair> off_;  // pairs that do not hold the live set now
  bool armed_ = false;
  MonoTime last_settled_;
  std::uint64_t breaks_ = 0;
  std::map<std::size_t, std::uint64_t> breaks_by_consumer_;
};

// Records, for watched providers, when their instance left each hub of its
// datacenter's chain (L1, L2, L3), whether it ever came back there, and when
// the first of their Deregisters to reach their L1 was sent and arrived. An instance leaves a hub
// only at a tick, at a restart, or on a message from a child (the agent itself, or a lower hub's
// uplink): those are the moments checked, so the recorded times are exact.
class TierDepartures final : public TieredObserver {
 public:
  struct Departure {
    std::optional<MonoTime> first_deregister_arrival;  // at its L1
    std::optional<MonoTime> deregister_sent;           // when that one was sent
    std::map<std::size_t, MonoTime> gone_at;           // by hub: when it was last seen to leave
    std::set<std::size_t> present;                     // hubs that held it when last checked
    std::uint64_t returns = 0;                         // times it reappeared at a hub it had left
  };

  TierDepartures(const TieredWorld& world, const TierFleet& fleet,
                 const std::vector<std::size_t>& watched);

  const Departure& of(std::size_t agent) const { return departures_.at(agent); }

  void on_agent_sent(MonoTime now, std::size_t agent, const proto::Message& m) override;
  void on_hub_received(MonoTime now, std::size_t hub, Address from,
                       const proto::Message& m) override;
  void on_hub_tick(MonoTime now, std::size_t hub) override { check_hub(now, hub); }
  void on_hub_started(MonoTime now, std::size_t hub) override { check_hub(now, hub); }

 private:
  void check(MonoTime now, std::size_t hub, std::size_t agent, Departure& d);
  void check_hub(MonoTime now, std::size_t hub);

  const TieredWorld& world_;
  std::map<std::size_t, Departure> departures_;
  std::map<std::size_t, std::vector<std::size_t>> by_hub_;  // hub -> watched agents it holds
  std::map<std::size_t, std::map<std::uint64_t, MonoTime>> deregister_sent_;  // by agent, seq
};

// The same-tier claim at every moment it could break: a datacenter's L1
// drops an instance only when a lease expires in a tick, when its own agent
// deregisters, or when it restarts, so after every tick that expired a lease
// and at every start, every running provider of the datacenter must be
// registered there.
class SameTierWatch final : public TieredObserver {
 public:
  SameTierWatch(const TieredWorld& world, const TierFleet& fleet);

  // Checks nothing before this call (providers still starting are not yet registered).
  void arm() { armed_ = true; }
  std::size_t checks() const { return checks_; }
  const std::vector<std::string>& failures() const { return failures_; }

  void on_hub_tick(MonoTime now, std::size_t hub) override;
  void on_hub_started(MonoTime now, std::size_t hub) override { check(now, hub); }

 private:
  void check(MonoTime now, std::size_t hub);

  const TieredWorld& world_;
  const TierFleet& fleet_;
  bool armed_ = false;
  std::map<std::size_t, std::uint64_t> expired_seen_;  // by hub: nodes_expired at the last tick
  std::size_t checks_ = 0;
  std::vector<std::string> failures_;
};

// Last arrival of an UpBeat at a hub from a sender (an agent or a lower hub).
class BeatArrivals final : public TieredObserver {
 public:
  std::optional<MonoTime> last(std::size_t hub, Address from) const;
  void on_hub_received(MonoTime now, std::size_t hub, Address from,
                       const proto::Message& m) override;

 private:
  static std::uint64_t key(std::size_t hub, Address from) {
    return std::uint64_t{hub} << 32 | from;
  }
  std::unordered_map<std::uint64_t, MonoTime> last_;  // by key(hub, from)
};

}  // namespace cascade::sim::testing
