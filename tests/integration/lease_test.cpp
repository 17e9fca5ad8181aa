// How a provider leaves: killed (its lease runs out, after one lease and not
// much earlier) or stopped with SIGTERM (deregistered at once, acknowledged).

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"

namespace cascade::integration {
namespace {

class IntegrationLeases : public ClusterTest {};

// Room for scheduling on a loaded machine: process wake-ups, the probe's
// polling and the hub's own poll loop.
constexpr Millis kSchedulingMargin{200};

std::uint64_t counter_or_zero(const std::optional<proto::StatusReply>& status,
                              const std::string& name) {
  return status ? counter(*status, name).value_or(0) : 0;
}

TEST_F(IntegrationLeases, KilledProviderExpiresAfterOneLease) {
  const auto hub = start_hub();
  HubProbe probe(hub.endpoint);
  auto& provider = start_provider(hub.endpoint, "provider", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_listed(probe, "orders", "10.0.0.1:8080"));

  // Kill it right after the hub counted one of its beats, so the lease that
  // runs out started (within a few ms) when the provider died.
  const auto beats_before = counter_or_zero(probe.status(kPatience), "beats");
  ASSERT_TRUE(poll_until([&] { return counter_or_zero(probe.status(1s), "beats") > beats_before; },
                         kPatience, Millis{2}));
  const auto killed_at = SteadyClock::now();
  provider.signal(SIGKILL);
  ASSERT_TRUE(provider.wait_for(kPatience));

  const bool gone = poll_until(
      [&] {
        const auto r = probe.query("orders", 1s);
        return r && !has_address(*r, "10.0.0.1:8080");
      },
      kPatience, Millis{5});
  const auto took = elapsed_since(killed_at);
  ASSERT_TRUE(gone) << "still registered " << took.count() << " ms after kill -9";
  EXPECT_GE(took, kLease - Millis{100})
      << "expired before its lease of " << kLease.count() << " ms ran out";
  EXPECT_LE(took, kLease + kBeat + kSchedulingMargin)
      << "expired later than one lease (" << kLease.count() << " ms) and a beat";

  const auto status = probe.status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_EQ(counter(*status, "nodes_expired"), 1u);
  EXPECT_EQ(counter(*status, "instances_expired"), 1u);
  EXPECT_EQ(counter(*status, "deregistrations"), 0u);
  EXPECT_EQ(status->nodes, 0u);
}

TEST_F(IntegrationLeases, TerminatedProviderIsDeregisteredAtOnceAndExitsZero) {
  // A long lease: whatever removes the provider within a second, it is not expiry.
  HubOptions options;
  options.lease = Millis{5000};
  const auto hub = start_hub(options);
  HubProbe probe(hub.endpoint);
  auto& provider =
      start_agent("provider", {"--hub", hub.endpoint, "--id", "provider", "--register",
                               "orders=10.0.0.1:8080", "--register", "billing=10.0.0.1:9090"});
  ASSERT_TRUE(poll_until(
      [&] {
        const auto s = probe.status(1s);
        return s && s->instances == 2;
      },
      kPatience));

  const auto terminated_at = SteadyClock::now();
  provider.signal(SIGTERM);
  const bool gone = poll_until(
      [&] {
        const auto s = probe.status(1s);
        return s && s->instances == 0;
      },
      kPatience, Millis{5});
  const auto took = elapsed_since(terminated_at);
  ASSERT_TRUE(gone) << "still registered " << took.count() << " ms after SIGTERM";
  EXPECT_LT(took, Millis{1000}) << "deregistration should be immediate, not wait for the lease";

  const auto exit = provider.wait_for(kPatience);
  ASSERT_TRUE(exit) << "the agent did not exit after SIGTERM";
  EXPECT_TRUE(exit->exited_with(0)) << exit->describe();
  EXPECT_THAT(lines_containing(provider.err(), "] deregistered"), ::testing::SizeIs(1))
      << "the agent did not log an acknowledged deregistration";

  const auto status = probe.status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_EQ(counter(*status, "deregistrations"), 1u) << "one message for both instances";
  EXPECT_EQ(counter(*status, "nodes_expired"), 0u);
  EXPECT_EQ(status->nodes, 0u);
}

}  // namespace
}  // namespace cascade::integration
