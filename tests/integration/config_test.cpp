// The config centre across tiers with the real binaries: an L2 hub and two
// datacenter hubs as processes, groups set with the real cascadectl, and
// consumers (the agent library in this process) in both datacenters. A value
// set at L2 reaches both with L2 as its origin, an override at dc1 wins in
// dc1 only, and the levers an operator pulls at L2 or dc1 change what call()
// does while it runs.

#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <future>

#include "cascade/agent/client.hpp"
#include "cascade/tests/integration/cluster.hpp"

namespace cascade::integration {
namespace {

constexpr Millis kL2Lease{1200};  // three of the L1 uplinks' beats
const proto::ServiceKey kPay{"pay", "default"};

agent::ClientOptions consumer_options(const std::string& hub, const std::string& id) {
  agent::ClientOptions o;
  o.node_id = id;
  o.hubs = {hub};
  o.beat_interval = kBeat;
  o.config_groups = {"ops"};  // followed from the start: the levers live there
  return o;
}

// A call that needs no network: the provider's address is made up.
agent::AttemptOutcome answered(const proto::Instance&, MonoTime) {
  return agent::AttemptOutcome::kOk;
}

class IntegrationConfig : public ClusterTest {
 protected:
  void SetUp() override {
    l2_ = start_hub({.id = "l2", .beat = kBeat, .lease = kL2Lease, .extra = {"--tier", "2"}});
    dc1_ = start_hub({.id = "dc1", .extra = {"--zone", "dc1", "--upstream", l2_.endpoint}});
    dc2_ = start_hub({.id = "dc2", .extra = {"--zone", "dc2", "--upstream", l2_.endpoint}});
  }
  void config_set(const RunningHub& hub, const std::string& key, const std::string& value) {
    const auto r = ctl({"--hub", hub.endpoint, "config", "set", "ops", key, value});
    ASSERT_EQ(r.status.code, 0) << r.err;
  }
  void config_rm(const RunningHub& hub, const std::string& key) {
    const auto r = ctl({"--hub", hub.endpoint, "config", "rm", "ops", key});
    ASSERT_EQ(r.status.code, 0) << r.err;
  }
  // Polls until `client` holds `value` for `key` of group ops.
  static bool sees(agent::Client& client, const std::string& key, const std::string& value) {
    return poll_until([&] { return client.config_value("ops", key) == value; }, kPatience);
  }
  static bool refused_as(agent::Client& client, agent::CallRefusal refusal) {
    return poll_until([&] { return client.call(kPay, answered).refused == refusal; }, kPatience);
  }

  RunningHub l2_;
  RunningHub dc1_;
  RunningHub dc2_;
};

TEST_F(IntegrationConfig, AValueSetAtL2ReachesBothDatacentersAndAnOverrideWinsInItsOwnOnly) {
  agent::Client in_dc1(consumer_options(dc1_.endpoint, "app-dc1"));
  agent::Client in_dc2(consumer_options(dc2_.endpoint, "app-dc2"));
  config_set(l2_, "timeout_ms", "300");
  ASSERT_TRUE(sees(in_dc1, "timeout_ms", "300"));
  ASSERT_TRUE(sees(in_dc2, "timeout_ms", "300"));
  const auto from_l2 = in_dc2.config("ops");
  ASSERT_TRUE(from_l2);
  EXPECT_EQ(from_l2->values.at("timeout_ms").origin.hub, "l2");
  EXPECT_EQ(from_l2->values.at("timeout_ms").origin.tier, 2u);
  EXPECT_FALSE(from_l2->stale);

  config_set(dc1_, "timeout_ms", "100");
  ASSERT_TRUE(sees(in_dc1, "timeout_ms", "100"));
  const auto overridden = in_dc1.config("ops");
  EXPECT_EQ(overridden->values.at("timeout_ms").origin.hub, "dc1");
  EXPECT_EQ(overridden->values.at("timeout_ms").origin.tier, 1u);
  EXPECT_EQ(in_dc2.config_value("ops", "timeout_ms"), "300") << "dc2 keeps L2's value";

  config_rm(dc1_, "timeout_ms");
  EXPECT_TRUE(sees(in_dc1, "timeout_ms", "300")) << "L2's value again once dc1's is gone";
  const auto get = ctl({"--hub", dc1_.endpoint, "config", "get", "ops", "timeout_ms"});
  EXPECT_EQ(get.status.code, 0) << get.err;
  EXPECT_NE(get.out.find("300"), std::string::npos) << get.out;
}

TEST_F(IntegrationConfig, ADegradeSwitchAtL2MakesCallersInBothDatacentersFailFastUntilOff) {
  start_provider(dc1_.endpoint, "pay-1", "pay=10.1.0.1:80");
  ASSERT_TRUE(wait_until_listed(dc1_.endpoint, "pay", "10.1.0.1:80"));
  agent::Client in_dc1(consumer_options(dc1_.endpoint, "caller-dc1"));
  agent::Client in_dc2(consumer_options(dc2_.endpoint, "caller-dc2"));
  for (auto* client : {&in_dc1, &in_dc2})
    ASSERT_TRUE(poll_until(
        [&] { return client->call(kPay, answered).outcome == agent::AttemptOutcome::kOk; },
        kPatience))
        << "each caller reaches pay before the switch";

  config_set(l2_, "degrade.pay", "on");
  for (auto* client : {&in_dc1, &in_dc2}) {
    ASSERT_TRUE(refused_as(*client, agent::CallRefusal::kDegraded));
    std::atomic<int> attempts{0};
    const auto counted = [&](const proto::Instance&, MonoTime) {
      ++attempts;
      return agent::AttemptOutcome::kOk;
    };
    EXPECT_EQ(client->call(kPay, counted).refused, agent::CallRefusal::kDegraded);
    EXPECT_EQ(attempts.load(), 0) << "a degraded service is not called";
  }

  config_set(l2_, "degrade.pay", "off");
  for (auto* client : {&in_dc1, &in_dc2})
    EXPECT_TRUE(refused_as(*client, agent::CallRefusal::kNone));
}

TEST_F(IntegrationConfig, AnInFlightLimitSetAtDc1RefusesTheCallOverItThereAndNotInDc2) {
  start_provider(dc1_.endpoint, "pay-1", "pay=10.1.0.1:80");
  ASSERT_TRUE(wait_until_listed(dc1_.endpoint, "pay", "10.1.0.1:80"));
  agent::Client in_dc1(consumer_options(dc1_.endpoint, "caller-dc1"));
  agent::Client in_dc2(consumer_options(dc2_.endpoint, "caller-dc2"));
  ASSERT_TRUE(refused_as(in_dc1, agent::CallRefusal::kNone));
  ASSERT_TRUE(refused_as(in_dc2, agent::CallRefusal::kNone));

  config_set(dc1_, "limit.pay.max_in_flight", "1");
  ASSERT_TRUE(sees(in_dc1, "limit.pay.max_in_flight", "1"));
  // One call held in flight at the dc1 caller; a second one at once.
  std::promise<void> inside;
  std::promise<void> release;
  auto released = release.get_future().share();
  std::atomic<bool> signalled{false};
  const agent::AttemptFn slow = [&](const proto::Instance&, MonoTime) {
    if (!signalled.exchange(true)) inside.set_value();
    released.wait();
    return agent::AttemptOutcome::kOk;
  };
  agent::CallOptions long_call;
  long_call.timeout = Duration{5000};
  auto first = std::async(std::launch::async, [&] { return in_dc1.call(kPay, slow, long_call); });
  ASSERT_EQ(inside.get_future().wait_for(std::chrono::seconds(5)), std::future_status::ready);
  const auto second = in_dc1.call(kPay, answered, long_call);
  EXPECT_EQ(second.refused, agent::CallRefusal::kOverLimit);
  EXPECT_EQ(second.attempts, 0u) << "refused at once, nothing sent";
  release.set_value();
  EXPECT_EQ(first.get().outcome, agent::AttemptOutcome::kOk);
  EXPECT_EQ(in_dc1.stats().levers.over_limit, 1u);

  // dc2 follows the same group and holds no limit: dc1's key is dc1's.
  ASSERT_TRUE(poll_until([&] { return in_dc2.config("ops").has_value(); }, kPatience))
      << "dc2 is answered";
  EXPECT_EQ(in_dc2.config_value("ops", "limit.pay.max_in_flight"), std::nullopt);
  EXPECT_EQ(in_dc2.call(kPay, answered).refused, agent::CallRefusal::kNone);
}

TEST_F(IntegrationConfig, WithL2KilledDc1ServesTheLastValuesMarkedStale) {
  agent::Client in_dc1(consumer_options(dc1_.endpoint, "app-dc1"));
  config_set(l2_, "timeout_ms", "300");
  ASSERT_TRUE(sees(in_dc1, "timeout_ms", "300"));
  l2_.process->signal(SIGKILL);
  ASSERT_TRUE(poll_until(
      [&] {
        const auto got = in_dc1.config("ops");
        return got && got->stale;
      },
      kPatience))
      << "the upper copy goes past its TTL and dc1 says so";
  EXPECT_EQ(in_dc1.config_value("ops", "timeout_ms"), "300") << "the last value, kept";
}

}  // namespace
}  // namespace cascade::integration
