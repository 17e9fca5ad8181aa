// Tier scenarios (1) and (2): 3 tiers, 4 datacenters, 5,000 agents on a
// virtual clock, 3% message loss (tests/sim/tier_fleet.hpp has the network
// and the bounds with their derivation).
//  (1) Steady state with churn: a datacenter never lacks one of its live
//      providers, and after every change each consumer, wherever it is, holds
//      the live set of each service it uses within the cross-tier bound.
//  (2) A datacenter's L1 cut from its L2 for 30 s: the datacenter keeps its
//      own services; the L2 drops them exactly one L2 lease after the last
//      beat it got; after the heal everyone converges within the heal bound.

#include "cascade/tests/sim/tier_fixture.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

// ---------------------------------------------------------------- (1)

constexpr std::size_t kWaves = 3;
constexpr std::size_t kWaveSize = 20;
// A provider's own message to its L1 may be lost once (a Deregister is resent
// after 100 ms, a first beat after one reply timeout); then the change crosses.
constexpr Duration kChurnBound = kMaxDelay + kLostRoundTrip + kCrossTierBound;  // 10.15 s
constexpr Duration kBetweenWaves = kChurnBound + kPull;  // every wave settles before the next

class SimTiersSteadyStateTest : public TierFixture {};

TEST_F(SimTiersSteadyStateTest, SameTierIsNeverLostAndEveryConsumerHoldsTheLiveSetWithinTheBound) {
  warm_up();
  // Each wave, 20 providers of one datacenter stop gracefully and those of
  // the wave before come back as new incarnations.
  std::vector<std::size_t> away;
  for (std::size_t w = 0; w < kWaves; ++w) {
    SCOPED_TRACE("wave " + std::to_string(w));
    for (auto p : away)
      world.start(p);
    away = pick_providers(fleet, w % kDatacenters, kWaveSize, w);
    for (auto p : away)
      world.stop(p);
    live_set_changed();
    EXPECT_GT(live.out_of_date(), 0u) << "the wave changed nobody's view";
    const MonoTime wave = world.now();
    run_checking_same_tier(wave + kBetweenWaves);
    EXPECT_THAT(live.out_of_date_pairs(), IsEmpty());
    EXPECT_LE(live.last_settled() - wave, kChurnBound);
    RecordProperty("wave" + std::to_string(w) + "_settled_ms",
                   std::to_string((live.last_settled() - wave).count()));
  }
  EXPECT_EQ(live.breaks(), 0u) << "a consumer's view left the live set while it did not change";
  EXPECT_THAT(same_tier.failures(), IsEmpty());
  for (std::size_t h = 0; h < world.hub_count(); ++h)
    EXPECT_EQ(world.hub(h).counters().nodes_expired, 0u) << world.hub(h).config().hub_id;
  EXPECT_EQ(world.hub(fleet.l3).registry().instance_count(), providers() - kWaveSize);
  EXPECT_GT(world.network().stats().dropped, 0u);
  EXPECT_EQ(world.network().stats().decode_failures, 0u);
}

// ---------------------------------------------------------------- (2)

constexpr Duration kPartition{30'000};
constexpr std::size_t kWatched = 50;

// The lease path: with eviction protection off, L2 drops a tier it cannot
// hear one lease after its last beat (with protection on, the next test).
class SimTiersPartitionTest : public TierFixture {
 protected:
  SimTiersPartitionTest() : TierFixture(/*seed=*/1, /*eviction_protection=*/false) {}
};

TEST_F(SimTiersPartitionTest, ADatacenterCutFromItsL2KeepsItsServicesAndRejoinsWithinTheHealBound) {
  const std::size_t d = 0;
  const Datacenter& dc = fleet.dcs[d];
  const auto watched = pick_providers(fleet, d, kWatched);
  TierDepartures departures(world, fleet, watched);
  observers.add(&departures);
  warm_up();

  const MonoTime cut = world.now();
  world.cut(dc.l1, dc.l2);
  run_checking_same_tier(cut + kPartition);
  // Nothing changed below: the datacenter's consumers keep the live set of
  // everything they use, their own services fresh, the others' from the
  // L1's cache (stale, still served).
  for (auto c : dc.consumers)
    EXPECT_EQ(live.breaks_of(c), 0u) << world.spec(c).node_id;
  const auto last_beat = beats.last(dc.l2, TieredWorld::hub_address(dc.l1));
  ASSERT_TRUE(last_beat.has_value());
  EXPECT_LE(*last_beat, cut + kMaxDelay) << "a beat reached L2 through the cut";
  for (auto p : watched) {
    SCOPED_TRACE(world.spec(p).node_id);
    const auto& gone = departures.of(p).gone_at;
    EXPECT_FALSE(gone.contains(dc.l1)) << "lost from its own L1";
    ASSERT_TRUE(gone.contains(dc.l2)) << "L2 kept a tier it cannot hear past its lease";
    EXPECT_EQ(gone.at(dc.l2), *last_beat + kL2Lease) << "one L2 lease after the last beat";
    ASSERT_TRUE(gone.contains(fleet.l3));
    EXPECT_LE(gone.at(fleet.l3) - gone.at(dc.l2), kPush + kLostRoundTrip);
  }
  EXPECT_EQ(world.hub(dc.l2).counters().nodes_expired, 1u) << "only the cut-off L1 expired";

  const MonoTime heal = world.now();
  const auto sets_before = world.hub(dc.l2).counters().full_sets_received;
  world.heal(dc.l1, dc.l2);
  run_checking_same_tier(heal + kHealBound + kPull);
  EXPECT_THAT(live.out_of_date_pairs(), IsEmpty());
  EXPECT_LE(live.last_settled() - heal, kHealBound);
  RecordProperty("heal_settled_ms", std::to_string((live.last_settled() - heal).count()));
  EXPECT_GT(world.hub(dc.l2).counters().full_sets_received, sets_before)
      << "L2 had dropped the tier: the L1 must have sent its whole set";
  for (auto p : watched) {
    SCOPED_TRACE(world.spec(p).node_id);
    const auto& departure = departures.of(p);
    EXPECT_TRUE(departure.present.contains(dc.l2));
    EXPECT_TRUE(departure.present.contains(fleet.l3));
    EXPECT_EQ(departure.returns, 2u) << "back once at L2 and once at L3";
  }
  EXPECT_THAT(same_tier.failures(), IsEmpty());
  for (auto h : {fleet.l3, fleet.dcs[0].l1, fleet.dcs[1].l1, fleet.dcs[2].l1, fleet.dcs[3].l1})
    EXPECT_EQ(world.hub(h).counters().nodes_expired, 0u) << world.hub(h).config().hub_id;
}

// With eviction protection (the default), a datacenter cut from its L2 is a
// partition of one source: L2 keeps the tier's instances, served
// unconfirmed, and confirms them again when the L1 beats, with no resend.
class SimTiersProtectedPartitionTest : public TierFixture {};

TEST_F(SimTiersProtectedPartitionTest, ADatacenterCutFromItsL2IsKeptUnconfirmedAndConfirmedOnHeal) {
  const Datacenter& dc = fleet.dcs[0];
  const auto watched = pick_providers(fleet, 0, kWatched);
  warm_up();
  const auto health_at_l2 = [&](std::size_t p) {
    const auto& reg = world.spec(p).provides.front();
    const auto* svc = world.hub(dc.l2).registry().find(reg.service);
    if (svc == nullptr || !svc->instances.contains(reg.instance.id))
      return std::optional<proto::Health>{};
    return std::optional<proto::Health>{svc->instances.at(reg.instance.id).health()};
  };

  const MonoTime cut = world.now();
  world.cut(dc.l1, dc.l2);
  run_checking_same_tier(cut + kPartition);
  EXPECT_EQ(world.hub(dc.l2).counters().nodes_expired, 0u) << "the cut-off L1 is held, not expired";
  EXPECT_GE(world.hub(dc.l2).counters().expiries_held, 1u);
  for (auto p : watched) {
    SCOPED_TRACE(world.spec(p).node_id);
    EXPECT_EQ(health_at_l2(p), proto::Health::kUnconfirmed);
  }

  const MonoTime heal = world.now();
  const auto sets_before = world.hub(dc.l2).counters().full_sets_received;
  world.heal(dc.l1, dc.l2);
  run_checking_same_tier(heal + kHealBound + kPull);
  for (auto p : watched) {
    SCOPED_TRACE(world.spec(p).node_id);
    EXPECT_EQ(health_at_l2(p), proto::Health::kOk) << "confirmed by the L1's first beat";
  }
  EXPECT_EQ(world.hub(dc.l2).counters().full_sets_received, sets_before)
      << "L2 kept the tier: its digest still matches, nothing is resent";
  EXPECT_THAT(live.out_of_date_pairs(), IsEmpty());
  EXPECT_THAT(same_tier.failures(), IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
