#include "cascade/agent/router.hpp"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cascade/common/random.hpp"
#include "cascade/tests/common/allocation_counter.hpp"

namespace cascade::agent {
namespace {

using Indexes = std::vector<std::size_t>;

const proto::ServiceKey kOrders{"orders", "default"};

proto::Instance inst(std::string address, std::string zone = "",
                     std::map<std::string, std::string> metadata = {}, std::uint32_t tier = 0,
                     proto::InstanceStatus status = proto::InstanceStatus::kUp) {
  proto::Instance i;
  i.id = address;
  i.address = std::move(address);
  i.zone = std::move(zone);
  i.metadata = std::move(metadata);
  i.tier = tier;
  i.status = status;
  return i;
}

ConsumerContext consumer(std::string host, std::string zone = "", std::string method = "") {
  ConsumerContext c;
  c.host = std::move(host);
  c.zone = std::move(zone);
  c.method = std::move(method);
  return c;
}

RouteRuleSpec rule(std::string text, std::int32_t priority = 0, bool force = false) {
  RouteRuleSpec spec;
  spec.text = std::move(text);
  spec.priority = priority;
  spec.force = force;
  return spec;
}

RouteRuleSpec scoped(std::string text, std::string scope) {
  auto spec = rule(std::move(text));
  spec.scope = std::move(scope);
  return spec;
}

void load_ok(Router& router, std::vector<RouteRuleSpec> specs) {
  const auto errors = router.load(std::move(specs));
  ASSERT_TRUE(errors.empty()) << errors.front();
}

// Three zones, two subnets; readers carry metadata.role = reader.
const std::vector<proto::Instance> kFleet{
    inst("tcp://10.20.0.5:8080", "dc1", {{"role", "reader"}}),
    inst("10.30.0.1:8080", "dc2", {{"role", "writer"}}),
    inst("10.20.9.9:8080", "dc3"),
    inst("http://10.30.4.4:80/api", "dc1", {{"role", "reader"}}, 1),
};

TEST(ProviderHost, StripsSchemePortPathUserAndBrackets) {
  EXPECT_EQ(provider_host("10.0.0.7:8080"), "10.0.0.7");
  EXPECT_EQ(provider_host("tcp://10.0.0.7:8080"), "10.0.0.7");
  EXPECT_EQ(provider_host("http://user@api.example.com:443/v1/x"), "api.example.com");
  EXPECT_EQ(provider_host("[fe80::1]:80"), "fe80::1");
  EXPECT_EQ(provider_host("tcp://[::1]:7400"), "::1");
  EXPECT_EQ(provider_host("fe80::1"), "fe80::1");
  EXPECT_EQ(provider_host("orders.internal"), "orders.internal");
  EXPECT_EQ(provider_host(""), "");
}

TEST(Router, NoRulesSelectsEveryCandidate) {
  Router router;
  auto out = router.route(kOrders, consumer("10.20.1.1"), kFleet);
  EXPECT_EQ(out.selected, (Indexes{0, 1, 2, 3}));
  EXPECT_EQ(out.applied, nullptr);
  EXPECT_FALSE(out.fell_back);
  EXPECT_EQ(router.stats().unmatched, 1u);
}

TEST(Router, HostRuleKeepsConsumersOnTheirSubnet) {
  Router router;
  load_ok(router, {rule("host = 10.20.* => host = 10.20.*")});
  auto inside = router.route(kOrders, consumer("10.20.1.1"), kFleet);
  EXPECT_EQ(inside.selected, (Indexes{0, 2}));
  ASSERT_NE(inside.applied, nullptr);
  EXPECT_EQ(inside.applied->spec.text, "host = 10.20.* => host = 10.20.*");
  // Consumers elsewhere are not matched: no rule applies, everything stays.
  auto outside = router.route(kOrders, consumer("10.30.1.1"), kFleet);
  EXPECT_EQ(outside.selected, (Indexes{0, 1, 2, 3}));
  EXPECT_EQ(outside.applied, nullptr);
}

TEST(Router, EmptyMatchAppliesToEveryConsumer) {
  Router router;
  load_ok(router, {rule("=> zone != dc3")});
  EXPECT_EQ(router.route(kOrders, consumer("1.2.3.4"), kFleet).selected, (Indexes{0, 1, 3}));
  EXPECT_EQ(router.route(kOrders, ConsumerContext{}, kFleet).selected, (Indexes{0, 1, 3}));
}

TEST(Router, MethodGlobsSendReadsToReaders) {
  Router router;
  load_ok(router, {rule("method = get*,find* => metadata.role = reader")});
  EXPECT_EQ(router.route(kOrders, consumer("h", "", "getUser"), kFleet).selected, (Indexes{0, 3}));
  EXPECT_EQ(router.route(kOrders, consumer("h", "", "findAll"), kFleet).selected, (Indexes{0, 3}));
  EXPECT_EQ(router.route(kOrders, consumer("h", "", "update"), kFleet).selected,
            (Indexes{0, 1, 2, 3}));
}

TEST(Router, MissingMetadataReadsAsEmpty) {
  Router router;
  load_ok(router, {rule("=> metadata.role != writer")});
  // dc3 has no role at all: not a writer, so it stays.
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{0, 2, 3}));
}

TEST(Router, DollarZoneKeepsCallsInTheConsumersZone) {
  Router router;
  load_ok(router, {rule("=> zone = $zone")});
  EXPECT_EQ(router.route(kOrders, consumer("h", "dc1"), kFleet).selected, (Indexes{0, 3}));
  EXPECT_EQ(router.route(kOrders, consumer("h", "dc2"), kFleet).selected, (Indexes{1}));
}

TEST(Router, ConsumerMetadataAndProviderMetadata) {
  Router router;
  load_ok(router, {rule("metadata.canary = true => metadata.canary = true")});
  std::vector<proto::Instance> fleet{inst("a:1", "", {{"canary", "true"}}), inst("b:1")};
  auto canary = consumer("h");
  canary.metadata["canary"] = "true";
  EXPECT_EQ(router.route(kOrders, canary, fleet).selected, (Indexes{0}));
  EXPECT_EQ(router.route(kOrders, consumer("h"), fleet).selected, (Indexes{0, 1}));
}

TEST(Router, TierAndServiceKeys) {
  Router router;
  load_ok(router, {rule("service = ord* & tier = 0 => tier = 0 & host != 10.30.*")});
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{0, 2}));
  EXPECT_EQ(router.route({"payments", "default"}, consumer("h"), kFleet).applied, nullptr);
  auto upper = consumer("h");
  upper.tier = 1;
  EXPECT_EQ(router.route(kOrders, upper, kFleet).applied, nullptr);
}

TEST(Router, HigherPriorityRuleWinsWhateverItsPlace) {
  Router router;
  load_ok(router, {rule("=> zone = dc1", 0), rule("=> zone = dc2", 10), rule("=> zone = dc3", 5)});
  auto out = router.route(kOrders, consumer("h"), kFleet);
  EXPECT_EQ(out.selected, (Indexes{1}));
  EXPECT_EQ(out.applied->spec.priority, 10);
  const auto stats = router.stats();
  ASSERT_EQ(stats.rules.size(), 3u);
  EXPECT_EQ(stats.rules[0].spec.priority, 10);
  EXPECT_EQ(stats.rules[1].spec.priority, 5);
  EXPECT_EQ(stats.rules[2].spec.priority, 0);
}

TEST(Router, EqualPrioritiesKeepLoadOrder) {
  Router router;
  load_ok(router, {rule("=> zone = dc3", 1), rule("=> zone = dc1", 1), rule("=> zone = dc2", 1)});
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{2}));
}

TEST(Router, FirstMatchingRuleAppliesAndOnlyIt) {
  Router router;
  load_ok(router, {rule("host = 10.99.* => zone = dc2", 10), rule("=> zone = dc1", 0)});
  // The higher rule does not match this consumer, so the next one applies.
  EXPECT_EQ(router.route(kOrders, consumer("10.20.0.1"), kFleet).selected, (Indexes{0, 3}));
  EXPECT_EQ(router.route(kOrders, consumer("10.99.0.1"), kFleet).selected, (Indexes{1}));
}

TEST(Router, DisabledRuleIsListedButNeverApplies) {
  Router router;
  auto off = rule("=> zone = dc2", 10);
  off.enabled = false;
  load_ok(router, {off, rule("=> zone = dc1")});
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{0, 3}));
  EXPECT_EQ(router.size(), 2u);
  EXPECT_EQ(router.stats().rules[0].applied, 0u);
}

TEST(Router, ScopeLimitsARuleToItsServices) {
  Router router;
  load_ok(router, {scoped("=> zone = dc1", "orders")});
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{0, 3}));
  EXPECT_EQ(router.route({"payments", "default"}, consumer("h"), kFleet).applied, nullptr);
  // Without "@GROUP" the scope names the default group only.
  EXPECT_EQ(router.route({"orders", "blue"}, consumer("h"), kFleet).applied, nullptr);

  load_ok(router, {scoped("=> zone = dc2", "pay*@*")});
  EXPECT_EQ(router.route({"payments", "blue"}, consumer("h"), kFleet).selected, (Indexes{1}));
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).applied, nullptr);
}

TEST(Router, EmptyResultFallsBackToEveryCandidateAndIsCounted) {
  Router router;
  load_ok(router, {rule("=> zone = dc9")});
  auto out = router.route(kOrders, consumer("h"), kFleet);
  EXPECT_TRUE(out.fell_back);
  EXPECT_EQ(out.selected, (Indexes{0, 1, 2, 3}));
  ASSERT_NE(out.applied, nullptr);
  router.route(kOrders, consumer("h"), kFleet);
  const auto stats = router.stats();
  EXPECT_EQ(stats.fallbacks, 2u);
  ASSERT_EQ(stats.rules.size(), 1u);
  EXPECT_EQ(stats.rules[0].applied, 2u);
  EXPECT_EQ(stats.rules[0].fallbacks, 2u);
  EXPECT_EQ(stats.rules[0].forced_empty, 0u);
}

TEST(Router, FilterLeavingOnlyDownInstancesFallsBack) {
  Router router;
  load_ok(router, {rule("=> zone = dc1")});
  std::vector<proto::Instance> fleet{
      inst("a:1", "dc1", {}, 0, proto::InstanceStatus::kDown),
      inst("b:1", "dc2"),
  };
  fleet.push_back(inst("c:1", "dc1"));
  fleet.back().weight = 0;  // drained
  auto out = router.route(kOrders, consumer("h"), fleet);
  EXPECT_TRUE(out.fell_back);
  EXPECT_EQ(out.selected, (Indexes{0, 1, 2}));
}

TEST(Router, ForceReturnsTheEmptyResult) {
  Router router;
  load_ok(router, {rule("=> zone = dc9", 0, /*force=*/true)});
  auto out = router.route(kOrders, consumer("h"), kFleet);
  EXPECT_FALSE(out.fell_back);
  EXPECT_TRUE(out.selected.empty());
  const auto stats = router.stats();
  EXPECT_EQ(stats.fallbacks, 0u);
  EXPECT_EQ(stats.forced_empty, 1u);
  EXPECT_EQ(stats.rules[0].forced_empty, 1u);
}

TEST(Router, DenyRuleNeedsForce) {
  Router router;
  auto errors = router.load({rule("zone = dc1 =>")});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("route #1"), std::string::npos) << errors[0];
  EXPECT_NE(errors[0].find("force = true"), std::string::npos) << errors[0];

  load_ok(router, {rule("zone = dc1 =>", 0, /*force=*/true)});
  EXPECT_TRUE(router.route(kOrders, consumer("h", "dc1"), kFleet).selected.empty());
  EXPECT_EQ(router.route(kOrders, consumer("h", "dc2"), kFleet).selected, (Indexes{0, 1, 2, 3}));
}

TEST(Router, BadLoadNamesEveryBadRuleAndKeepsTheOldTable) {
  Router router;
  load_ok(router, {rule("=> zone = dc1")});
  auto errors = router.load({rule("=> zone = dc2"), rule("hots = a => zone = b", 7),
                             rule("=> zone = dc2"), scoped("=> zone = dc2", "orders@")});
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0],
            "route #2 (priority 7, 'hots = a => zone = b'): column 1: unknown key 'hots' (keys: "
            "host, zone, tier, method, service or metadata.NAME)");
  EXPECT_NE(errors[1].find("route #4"), std::string::npos) << errors[1];
  EXPECT_NE(errors[1].find("empty group"), std::string::npos) << errors[1];
  // Nothing of the bad load was applied.
  EXPECT_EQ(router.size(), 1u);
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{0, 3}));
}

TEST(Router, BadScopeGlobIsRejected) {
  Router router;
  auto errors = router.load({scoped("=> zone = dc1", "ord**")});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("scope 'ord**': bad glob"), std::string::npos) << errors[0];
  errors = router.load({scoped("=> zone = dc1", "@blue")});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("empty service name"), std::string::npos) << errors[0];
}

TEST(Router, ReplaceScopeLeavesOtherRulesAndTheirCounters) {
  Router router;
  load_ok(router, {scoped("=> zone = dc9", "payments"), scoped("=> zone = dc1", "orders")});
  router.route({"payments", "default"}, consumer("h"), kFleet);  // falls back
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{0, 3}));

  auto errors = router.replace_scope(
      "orders", {scoped("=> zone = dc2", "orders"), scoped("=> zone = dc3", "orders")});
  ASSERT_TRUE(errors.empty()) << errors.front();
  EXPECT_EQ(router.size(), 3u);
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{1}));
  const auto stats = router.stats();
  ASSERT_EQ(stats.rules.size(), 3u);
  EXPECT_EQ(stats.rules[0].spec.text, "=> zone = dc9");
  EXPECT_EQ(stats.rules[0].fallbacks, 1u);  // carried over
  EXPECT_EQ(stats.rules[1].spec.text, "=> zone = dc2");
  EXPECT_EQ(stats.rules[1].applied, 1u);

  // Emptying a scope removes its rules only.
  ASSERT_TRUE(router.replace_scope("orders", {}).empty());
  EXPECT_EQ(router.size(), 1u);
}

TEST(Router, ReplaceScopeIsAllOrNothingAndRefusesOtherScopes) {
  Router router;
  load_ok(router, {scoped("=> zone = dc1", "orders")});
  auto errors = router.replace_scope("orders", {scoped("=> zone = dc2", "payments")});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("is not the scope being replaced, 'orders'"), std::string::npos)
      << errors[0];
  errors = router.replace_scope(
      "orders", {scoped("=> zone = dc2", "orders"), scoped("=> zone = ", "orders")});
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_NE(errors[0].find("route #2"), std::string::npos) << errors[0];
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).selected, (Indexes{0, 3}));
}

TEST(Router, AppliedRuleOutlivesAReload) {
  Router router;
  load_ok(router, {rule("=> zone = dc1")});
  auto out = router.route(kOrders, consumer("h"), kFleet);
  load_ok(router, {});
  ASSERT_NE(out.applied, nullptr);
  EXPECT_EQ(out.applied->spec.text, "=> zone = dc1");
  EXPECT_EQ(router.route(kOrders, consumer("h"), kFleet).applied, nullptr);
}

TEST(Router, SelectedInstancesCopiesInCandidateOrder) {
  Router router;
  load_ok(router, {rule("=> zone = dc1")});
  auto picked = selected_instances(router.route(kOrders, consumer("h"), kFleet), kFleet);
  ASSERT_EQ(picked.size(), 2u);
  EXPECT_EQ(picked[0], kFleet[0]);
  EXPECT_EQ(picked[1], kFleet[3]);
}

TEST(Router, RouteAllocatesOnlyItsOutputVector) {
  Router router;
  load_ok(router, {rule("host = 10.* & metadata.app = shop => metadata.role = reader,r* & "
                        "zone = $zone & tier = 0 & host != 10.30.*",
                        5),
                   rule("=> zone = dc1")});
  std::vector<proto::Instance> fleet;
  for (int i = 0; i < 500; ++i)
    fleet.push_back(inst("tcp://10.20.0." + std::to_string(i) + ":80", i % 2 ? "dc1" : "dc2",
                         {{"role", i % 3 ? "reader" : "writer"}}));
  auto who = consumer("10.20.7.7", "dc1");
  who.metadata["app"] = "shop";

  RouteOutcome out;
  const auto allocations =
      test_support::allocations_during([&] { out = router.route(kOrders, who, fleet); });
  EXPECT_EQ(allocations, 1u);
  EXPECT_EQ(out.applied->spec.priority, 5);
  EXPECT_EQ(out.selected.size(), 167u);  // odd i (dc1) not divisible by 3: 250 - 83
}

// Rules that parse, however odd, route without crashing, and outcomes keep
// their invariants: valid ascending indexes, everything on fallback.
TEST(Router, RandomRulesKeepOutcomeInvariants) {
  Rng rng(99);
  const std::vector<std::string> conditions{
      "host = 10.20.*", "zone = $zone",  "zone != dc1,dc2", "metadata.role = r*",
      "tier = 0",       "tier != $tier", "host = *.9",      "metadata.x != $metadata.x",
      "zone = *",       "host = $host"};
  const std::vector<std::string> matches{"",
                                         "zone = dc1",
                                         "method = get*",
                                         "host != 10.30.*",
                                         "service = ord*",
                                         "metadata.app = shop"};
  Router router;
  for (int round = 0; round < 300; ++round) {
    std::vector<RouteRuleSpec> specs;
    for (auto n = rng.uniform(1, 4); n > 0; --n) {
      std::string text = matches[static_cast<std::size_t>(rng.uniform(0, 5))] + " =>";
      for (auto k = rng.uniform(1, 3); k > 0; --k) {
        if (!text.ends_with("=>")) text += " &";
        text +=
            " " + conditions[static_cast<std::size_t>(rng.uniform(0, std::ssize(conditions) - 1))];
      }
      specs.push_back(rule(text, static_cast<std::int32_t>(rng.uniform(-2, 2)), rng.unit() < 0.3));
    }
    const auto errors = router.load(specs);
    ASSERT_TRUE(errors.empty()) << errors.front();
    auto who = consumer(rng.unit() < 0.5 ? "10.20.1.1" : "10.30.1.1",
                        rng.unit() < 0.5 ? "dc1" : "dc2", rng.unit() < 0.5 ? "getX" : "put");
    auto out = router.route(kOrders, who, kFleet);
    for (std::size_t i = 1; i < out.selected.size(); ++i)
      EXPECT_LT(out.selected[i - 1], out.selected[i]);
    for (auto i : out.selected)
      EXPECT_LT(i, kFleet.size());
    if (out.fell_back || out.applied == nullptr) {
      EXPECT_EQ(out.selected, (Indexes{0, 1, 2, 3}));
    } else if (out.selected.empty()) {
      EXPECT_TRUE(out.applied->spec.force);
    }
  }
  const auto stats = router.stats();
  EXPECT_EQ(stats.routed, 300u);
}

}  // namespace
}  // namespace cascade::agent
