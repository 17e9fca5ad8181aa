// The ten-datacenter scenario of cascade_scale_sim_bench (sim/scale_scenario.hpp),
// scaled down to 3,000 agents: the same topology (10 datacenters x 2 L1, 2
// regions x 2 L2, 2 L3) and the same phases (registration wave, steady
// state, 1%/min churn, an L2 restart, a datacenter cut from its region for
// two leases and healed, an L1 restart), with the product's beat and leases
// on a lossy network.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cascade/sim/scale_scenario.hpp"

namespace cascade::sim {
namespace {

ScaleConfig scaled_config(std::uint64_t seed, Partitions partitions) {
  ScaleConfig config;
  config.seed = seed;
  config.partitions = partitions;
  config.shape.agents = 3000;
  config.shape.services = 200;  // 20 per datacenter, one of them used from the others
  config.phases.registration = Duration{10'000};
  config.phases.steady = Duration{5000};
  config.phases.churn = Duration{30'000};
  config.phases.l2_restart = Duration{15'000};
  config.phases.after_heal = Duration{15'000};
  config.phases.l1_restart = Duration{15'000};
  config.phases.audit_interval = Duration{2000};
  return config;
}

// The bench's way by default: hubs and agents in lock step, on two threads.
ScaleReport run_scaled(std::uint64_t seed, Partitions partitions = Partitions::kLockStepThreaded) {
  spdlog::set_level(spdlog::level::err);  // the cores log every expiry and lost upstream
  ScaleScenario scenario(scaled_config(seed, partitions));
  return scenario.run();
}

const PhaseReport& phase(const ScaleReport& report, const std::string& name) {
  const auto it = std::find_if(report.phases.begin(), report.phases.end(),
                               [&](const PhaseReport& p) { return p.name == name; });
  if (it == report.phases.end()) throw std::logic_error("no phase " + name);
  return *it;
}

class SimScaleTest : public ::testing::Test {
 protected:
  static constexpr std::uint64_t kSeed = 7;
  static void SetUpTestSuite() { report_ = new ScaleReport(run_scaled(kSeed)); }
  static void TearDownTestSuite() {
    delete report_;
    report_ = nullptr;
  }
  static const ScaleReport& report() { return *report_; }

 private:
  static inline ScaleReport* report_ = nullptr;
};

TEST_F(SimScaleTest, NoInstanceOutlivesItsBoundAnywhere) {
  EXPECT_EQ(report().zombies, 0u) << ::testing::PrintToString(report().examples);
  EXPECT_EQ(report().zombie_caches, 0u) << ::testing::PrintToString(report().examples);
  EXPECT_GT(report().audits, 10u);
}

TEST_F(SimScaleTest, NoLiveInstanceIsLost) {
  EXPECT_EQ(report().lost_at_l1, 0u);
  EXPECT_EQ(report().lost_above, 0u);
  EXPECT_EQ(report().consumers_off_live, 0u) << ::testing::PrintToString(report().examples);
  EXPECT_EQ(report().providers, 2700u) << "churn replaces, it does not shrink the fleet";
}

TEST_F(SimScaleTest, EveryConsumerSeesEveryChangeWithinItsBound) {
  EXPECT_GT(report().registration_ms, 0u) << "every L3 never held every instance";
  std::size_t changes = 0;
  for (const auto& p : report().phases) {
    changes += p.changes;
    EXPECT_EQ(p.unseen, 0u) << p.name;
    EXPECT_EQ(p.late, 0u) << p.name;
  }
  // 1% of 2,700 providers per minute, each replacement a removal and an
  // addition, from the churn phase to the settle phase (~95 s): ~85 changes.
  EXPECT_GT(changes, 60u);
  // Without a fault, a change reaches every consumer within the zombie bound
  // (a crash's lease included): L1 lease + two pushes up + three pulls down.
  const auto& churn = phase(report(), "churn");
  ASSERT_GT(churn.changes, 0u);
  const double bound_ms = static_cast<double>(ScaleTiming{}.zombie_bound().count());
  EXPECT_LE(*std::max_element(churn.convergence_ms.begin(), churn.convergence_ms.end()), bound_ms);
}

TEST_F(SimScaleTest, EveryTierCarriesTraffic) {
  for (const auto& p : report().phases)
    for (std::size_t t = 0; t < kTiers; ++t)
      EXPECT_GT(p.traffic[t].messages_in, 0u) << p.name << " L" << t + 1;
}

// Two threads in lock step run what one thread runs: the same trace.
TEST_F(SimScaleTest, OneSeedGivesOneTraceOnOneThreadOrTwoAnotherSeedAnother) {
  const auto again = run_scaled(kSeed, Partitions::kLockStep);
  EXPECT_EQ(report().trace_hash, again.trace_hash);
  EXPECT_EQ(report().messages, again.messages);
  EXPECT_EQ(report().bytes, again.bytes);
  EXPECT_EQ(report().zombies + report().lost_at_l1, again.zombies + again.lost_at_l1);
  EXPECT_NE(report().trace_hash, run_scaled(kSeed + 1).trace_hash);
}

// Every event in one queue (how the other simulations run): another run, the same verdicts.
TEST_F(SimScaleTest, TheOneQueueRunPassesTheSameChecks) {
  const auto one_queue = run_scaled(kSeed, Partitions::kOneQueue);
  EXPECT_NE(one_queue.trace_hash, report().trace_hash);
  EXPECT_EQ(one_queue.zombies + one_queue.zombie_caches, 0u)
      << ::testing::PrintToString(one_queue.examples);
  EXPECT_EQ(one_queue.lost_at_l1 + one_queue.lost_above + one_queue.consumers_off_live, 0u)
      << ::testing::PrintToString(one_queue.examples);
  EXPECT_EQ(one_queue.providers, 2700u);
}

}  // namespace
}  // namespace cascade::sim
