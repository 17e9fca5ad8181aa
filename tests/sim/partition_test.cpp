// Eviction protection on a virtual clock (hub/eviction_guard.hpp): a rack of
// agents, all behind one proxy (one source for the hub), loses its link to
// the hub for longer than the lease, then heals.
//  With protection: no mass eviction. The rack's first losses expire (until
//  then they cannot be told from deaths), the rest are held and stay listed
//  as unconfirmed; consumers keep picking confirmed instances; after the heal
//  every agent is confirmed again and nothing was lost.
//  Without protection: the whole rack expires.
//
// The tier: 100 agents in 4 racks of 25, 1% loss, 1..20 ms one way. Agent i
// provides one instance of service i % 4 (25 instances each) and calls
// service (i + 1) % 4 four times a second. Rack 0 is cut from the hub (both
// ways) for 20 s; its providers stay reachable by their callers: only the
// hub link is down.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cascade/sim/call_load.hpp"
#include "cascade/sim/world.hpp"
#include "cascade/tests/sim/fleet.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

constexpr std::size_t kRacks = 4;
constexpr std::size_t kRackSize = 25;
constexpr std::size_t kAgents = kRacks * kRackSize;
constexpr std::size_t kServices = 4;
constexpr std::size_t kCutRack = 0;
constexpr double kLoss = 0.01;
constexpr Duration kLanDelay{20};
constexpr Duration kCallPeriod{250};
constexpr Duration kReplyTimeout{500};  // AgentCoreConfig::reply_timeout
constexpr Duration kFlush{20};          // WorldConfig::flush_interval: a durable reply waits
constexpr Duration kWarmUp{12'000};
constexpr Duration kCut{20'000};  // > kLease, < the guard's 60 s window
static_assert(kCut > kLease + kLongestBeatInterval);

// ---- What the guard lets expire (EvictionGuardConfig defaults).
// A source is partitioned once its losses (expired within the window, held,
// and the one asked about) reach half of its nodes: the 13th loss of the
// 25-agent rack (12 + 1 >= 0.5 * 25), so at most the first 12 expire and the
// 13th and every later one is held. The per-service cap (5 of a 25-instance
// service per minute) may hold one of the first 12 instead; the registry cap
// (20 of 100) never binds here.
constexpr std::size_t kMaxExpired = 12;
static_assert(kMaxExpired + 1 >= kRackSize / 2.0 && kMaxExpired < kRackSize / 2.0);

// ---- Bounds.
// A consumer learns a registry change on its next beat (one jittered
// interval), one lost round trip costing a reply timeout; health changes
// (unconfirmed, confirmed again) are pushed at once besides.
constexpr Duration kPull = kLongestBeatInterval + kReplyTimeout + 2 * kLanDelay;  // 2.74 s
// The rack's last beats arrive within a network delay after the cut; the hub
// decides on each one lease later (it ticks at the deadline). Once consumers
// have pulled, none picks a rack-0 instance: the expired are gone, the held
// are unconfirmed.
constexpr Duration kSettled = kLanDelay + kLease + kPull;  // 8.76 s
// After the heal: the cut agents had failed over (to the same hub) and wait a
// backoff capped at a third of the lease +20% (2.4 s) before their next beat,
// longer than a beat interval; a lost one goes again one reply timeout later.
// The hub answers; an expired agent is asked for its set, sends it at once
// and gets the durable reply after the next flush. Then consumers pull.
constexpr Duration kRejoin =
    kLease / 3 + kLease / 15 + kReplyTimeout + 4 * kLanDelay + kFlush;  // 3.0 s
constexpr Duration kHealBound = kRejoin + kPull;                        // 5.74 s

proto::ServiceKey rack_service(std::size_t s) {
  return {"svc-" + std::to_string(s), std::string(proto::kDefaultGroup)};
}
std::size_t rack_of(std::size_t agent) {
  return agent / kRackSize;
}

struct PartitionRun {
  std::size_t warm_instances = 0;
  // At the end of the cut.
  std::size_t rack_expired = 0;      // rack-0 instances gone from the hub
  std::size_t rack_unconfirmed = 0;  // rack-0 instances listed, unconfirmed
  std::size_t rack_other = 0;        // rack-0 instances listed otherwise (should not be)
  std::size_t others_not_ok = 0;     // instances of the connected racks not listed as OK
  std::uint64_t nodes_expired_in_cut = 0;
  std::vector<std::string> consumers_off_hub_in_cut;  // connected consumers' caches
  std::uint64_t unconfirmed_picks = 0;  // a connected consumer picked an unconfirmed instance
  std::uint64_t rack_picks_after_settled = 0;
  std::uint64_t no_candidate = 0;
  // After the heal.
  std::optional<Duration> healed_after;  // everything listed OK and every cache matching
  std::size_t instances_after = 0;
  std::size_t unconfirmed_after = 0;
  std::uint64_t nodes_expired_after_cut = 0;
  std::vector<std::string> consumers_off_hub_after;
};

std::vector<std::string> consumers_off_hub(const World& world, bool connected_only) {
  std::vector<std::string> off;
  for (std::size_t a = 0; a < kAgents; ++a) {
    if (connected_only && rack_of(a) == kCutRack) continue;
    if (!cache_matches_hub(world, a, world.spec(a).uses.front()))
      off.push_back(world.spec(a).node_id);
  }
  return off;
}

// Every instance listed and confirmed, every cache as the hub's list.
bool all_back(const World& world) {
  if (world.hub().registry().instance_count() != kAgents) return false;
  for (std::size_t s = 0; s < kServices; ++s) {
    const auto* svc = world.hub().registry().find(rack_service(s));
    if (svc == nullptr || svc->unconfirmed != 0) return false;
  }
  return consumers_off_hub(world, false).empty();
}

PartitionRun run_partition(bool protection, std::uint64_t seed) {
  spdlog::set_level(spdlog::level::err);  // every expiry and hold is logged
  WorldConfig config = standard_config(seed);
  config.network = NetworkConfig{kLoss, Duration{1}, kLanDelay};
  config.hub.eviction.enabled = protection;
  World world(config);
  for (std::size_t a = 0; a < kAgents; ++a) {
    proto::Registration reg;
    reg.service = rack_service(a % kServices);
    reg.instance.id = "p-" + std::to_string(a);
    reg.instance.address =
        "10." + std::to_string(rack_of(a)) + ".0." + std::to_string(a % kRackSize + 1) + ":9000";
    const std::string rack = "rack-" + std::to_string(rack_of(a));
    world.add_agent(
        AgentSpec{"node-" + std::to_string(a), {reg}, {rack_service((a + 1) % kServices)}, rack});
    world.start_at(a, world.now() + Duration{static_cast<std::int64_t>(a) * 20});
  }
  PartitionRun run;
  world.run_for(kWarmUp);
  run.warm_instances = world.hub().registry().instance_count();

  // The connected racks call the service each uses.
  std::optional<MonoTime> cut;
  std::optional<MonoTime> heal;
  const auto on_call = [&](const Call& call) {
    if (!cut || heal) return;
    if (call.picked.health == proto::Health::kUnconfirmed) ++run.unconfirmed_picks;
    if (rack_of(call.consumer) != kCutRack && call.at >= *cut + kSettled &&
        call.picked.address.starts_with("10." + std::to_string(kCutRack) + "."))
      ++run.rack_picks_after_settled;
  };
  std::vector<std::unique_ptr<CallLoad<World>>> loads;
  for (std::size_t s = 0; s < kServices; ++s) {
    std::vector<std::size_t> callers;
    for (std::size_t a = 0; a < kAgents; ++a)
      if (rack_of(a) != kCutRack && (a + 1) % kServices == s) callers.push_back(a);
    loads.push_back(std::make_unique<CallLoad<World>>(world, rack_service(s), callers, kCallPeriod,
                                                      CallLoad<World>::Fails{}, on_call));
    loads.back()->start();
  }
  world.run_for(Duration{2000});

  const auto expired_before = world.hub().counters().nodes_expired;
  cut = world.now();
  for (std::size_t a = 0; a < kAgents; ++a)
    if (rack_of(a) == kCutRack) world.network().cut_both_ways(World::address_of(a), kHubAddress);
  world.run_for(kCut);

  run.nodes_expired_in_cut = world.hub().counters().nodes_expired - expired_before;
  for (std::size_t a = 0; a < kAgents; ++a) {
    const auto& reg = world.spec(a).provides.front();
    const auto* svc = world.hub().registry().find(reg.service);
    const bool listed = svc != nullptr && svc->instances.contains(reg.instance.id);
    const auto health = listed ? svc->instances.at(reg.instance.id).health() : proto::Health::kOk;
    if (rack_of(a) != kCutRack) {
      if (!listed || health != proto::Health::kOk) ++run.others_not_ok;
    } else if (!listed) {
      ++run.rack_expired;
    } else if (health == proto::Health::kUnconfirmed) {
      ++run.rack_unconfirmed;
    } else {
      ++run.rack_other;
    }
  }
  run.consumers_off_hub_in_cut = consumers_off_hub(world, true);
  for (const auto& load : loads)
    run.no_candidate += load->stats().no_candidate;

  heal = world.now();
  const auto expired_at_heal = world.hub().counters().nodes_expired;
  world.network().heal_all();
  // Checked every 50 ms: when everything was back.
  while (world.now() < *heal + kHealBound + kPull) {
    world.run_for(Duration{50});
    if (!run.healed_after && all_back(world)) run.healed_after = world.now() - *heal;
  }
  run.instances_after = world.hub().registry().instance_count();
  for (std::size_t s = 0; s < kServices; ++s)
    if (const auto* svc = world.hub().registry().find(rack_service(s)))
      run.unconfirmed_after += svc->unconfirmed;
  run.nodes_expired_after_cut = world.hub().counters().nodes_expired - expired_at_heal;
  run.consumers_off_hub_after = consumers_off_hub(world, false);
  EXPECT_THAT(totals_drift(world), IsEmpty());
  return run;
}

TEST(SimPartitionTest, ARackCutFromTheHubPastItsLeaseIsHeldUnconfirmedNotEvicted) {
  const PartitionRun run = run_partition(/*protection=*/true, 1);
  ASSERT_EQ(run.warm_instances, kAgents);

  // No mass eviction: at most the guard's share of the rack expired, the
  // rest stayed listed as unconfirmed; nothing else changed.
  EXPECT_LE(run.rack_expired, kMaxExpired);
  EXPECT_EQ(run.rack_expired + run.rack_unconfirmed, kRackSize);
  EXPECT_EQ(run.rack_other, 0u);
  EXPECT_EQ(run.nodes_expired_in_cut, run.rack_expired);
  EXPECT_EQ(run.others_not_ok, 0u);
  // The connected consumers saw it and kept to confirmed instances.
  EXPECT_THAT(run.consumers_off_hub_in_cut, IsEmpty());
  EXPECT_EQ(run.unconfirmed_picks, 0u);
  EXPECT_EQ(run.rack_picks_after_settled, 0u);
  EXPECT_EQ(run.no_candidate, 0u);

  // After the heal everything is back and confirmed; no held agent expired.
  ASSERT_TRUE(run.healed_after.has_value())
      << "not back within " << (kHealBound + kPull).count() << " ms";
  EXPECT_LE(*run.healed_after, kHealBound);
  EXPECT_EQ(run.instances_after, kAgents);
  EXPECT_EQ(run.unconfirmed_after, 0u);
  EXPECT_EQ(run.nodes_expired_after_cut, 0u);
  EXPECT_THAT(run.consumers_off_hub_after, IsEmpty());

  RecordProperty("rack_expired", std::to_string(run.rack_expired));
  RecordProperty("rack_held_unconfirmed", std::to_string(run.rack_unconfirmed));
  RecordProperty("healed_after_ms", std::to_string(run.healed_after->count()));
}

TEST(SimPartitionTest, WithoutProtectionTheWholeRackExpires) {
  const PartitionRun run = run_partition(/*protection=*/false, 1);
  ASSERT_EQ(run.warm_instances, kAgents);
  EXPECT_EQ(run.rack_expired, kRackSize);
  EXPECT_EQ(run.rack_unconfirmed, 0u);
  EXPECT_EQ(run.nodes_expired_in_cut, kRackSize);
  EXPECT_EQ(run.others_not_ok, 0u);
  // It comes back all the same, by registering again.
  ASSERT_TRUE(run.healed_after.has_value());
  EXPECT_EQ(run.instances_after, kAgents);
  RecordProperty("rack_expired", std::to_string(run.rack_expired));
  RecordProperty("healed_after_ms", std::to_string(run.healed_after->count()));
}

}  // namespace
}  // namespace cascade::sim::testing
