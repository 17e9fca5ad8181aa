// Scenario (c): once the hub stops changing, every consumer's cached list of
// every service it uses equals the hub's list within two beat intervals and
// the network delay (kConvergenceBound), under 5% loss.

#include "cascade/tests/sim/fleet_fixture.hpp"
#include "cascade/tests/sim/probes.hpp"

namespace cascade::sim::testing {
namespace {

using ::testing::IsEmpty;

constexpr std::size_t kWave = 50;
constexpr Duration kBetweenWaves{12'000};  // > lease + convergence bound: each wave settles

class SimConvergenceTest : public FleetFixture {};

TEST_F(SimConvergenceTest, ConsumersMatchTheHubWithinTwoBeatIntervalsOnceItIsQuiet) {
  ConvergenceProbe convergence(world, fleet, kConvergenceBound);
  world.set_observer(&convergence);
  convergence.check_from(world.now() + kWarmUp);
  warm_up();

  // Wave 1: crashes (instances leave one lease later, spread over an interval).
  const auto crashed = pick_providers(fleet, kWave);
  for (auto p : crashed)
    world.kill(p);
  world.run_for(kBetweenWaves);
  // Wave 2: half of them come back as new incarnations.
  for (std::size_t i = 0; i < crashed.size(); i += 2)
    world.restart(crashed[i]);
  world.run_for(kBetweenWaves);
  // Wave 3: new instances join existing services.
  for (std::size_t i = 0; i < kWave; ++i)
    world.start(add_provider(world, fleet, i % fleet.services.size(), "new-" + std::to_string(i)));
  world.run_for(kBetweenWaves);

  EXPECT_THAT(convergence.failures(), IsEmpty());
  EXPECT_GE(convergence.checks(), 3u) << "every wave must have settled and been checked";
  EXPECT_GE(world.now() - convergence.last_change(), kConvergenceBound);
  EXPECT_THAT(consumers_out_of_date(world, fleet), IsEmpty());
  EXPECT_THAT(missing_live_instances(world, fleet), IsEmpty());
}

}  // namespace
}  // namespace cascade::sim::testing
