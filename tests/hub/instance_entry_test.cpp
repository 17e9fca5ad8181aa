// The registry's compact instance record (hub/instance_entry.hpp) and the
// pool that shares the values instances repeat (hub/intern_pool.hpp).

#include "cascade/hub/instance_entry.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cascade/hub/intern_pool.hpp"
#include "cascade/hub/registry.hpp"

namespace cascade::hub {
namespace {

proto::Instance full_report() {
  proto::Instance in;
  in.id = "6f1c0a52-3d4e-4b7a-9c1d-0e2f3a4b5c6d";
  in.address = "172.16.4.20:20480";
  in.weight = 7;
  in.zone = "zone-b";
  in.status = proto::InstanceStatus::kStarting;
  in.metadata = {{"version", "1.4.2"}, {"protocol", "grpc"}};
  in.tier = 2;
  in.health = proto::Health::kIsolated;
  in.health_reason = "isolated at dc2: 5 reports from 2 callers";
  return in;
}

TEST(InternPool, EqualValuesShareOneCopyAndDifferentOnesDoNot) {
  InternPool<std::string> pool;
  const auto a = pool.intern("zone-a");
  const auto again = pool.intern(std::string("zone-") + "a");
  const auto b = pool.intern("zone-b");
  EXPECT_EQ(a.get(), again.get());
  EXPECT_NE(a.get(), b.get());
  EXPECT_EQ(*b, "zone-b");
}

TEST(InternPool, AValueNoRecordHoldsIsFreedAndMadeAgainOnItsNextUse) {
  InternPool<std::string> pool;
  {
    const auto held = pool.intern("zone-a");
    const auto copy = held;  // NOLINT(performance-unnecessary-copy-initialization): counted
    EXPECT_EQ(pool.slots(), 1u);
  }
  EXPECT_EQ(pool.slots(), 0u) << "freed with its last reference";
  const auto made = pool.intern("zone-a");
  EXPECT_EQ(*made, "zone-a");
  EXPECT_EQ(pool.slots(), 1u);
}

TEST(InternPool, AStreamOfDistinctValuesKeepsOnlyWhatIsHeld) {
  InternPool<std::string> pool;
  std::vector<InternPool<std::string>::Ref> held;
  for (int i = 0; i < 100'000; ++i) {
    auto ref = pool.intern("value-" + std::to_string(i));
    if (i % 1000 == 0) held.push_back(std::move(ref));  // 100 stay in use
  }
  EXPECT_EQ(pool.slots(), held.size());
  for (const auto& ref : held)
    EXPECT_EQ(pool.intern(*ref).get(), ref.get()) << "what is held is still found";
}

// A HubCore is returned by value and a Registry moved with it: the values
// must follow the pool, and a reference held past the pool's end must still
// read its value and free it alone (ASan checks both in the sanitizer run).
TEST(InternPool, AMovedPoolKeepsItsValuesAndAReferenceMayOutliveThePool) {
  std::optional<InternPool<std::string>> moved;
  InternPool<std::string>::Ref survivor;
  {
    InternPool<std::string> pool;
    const auto a = pool.intern("zone-a");
    moved.emplace(std::move(pool));
    EXPECT_EQ(moved->intern("zone-a").get(), a.get()) << "found in the moved pool";
    survivor = moved->intern("zone-b");
  }
  EXPECT_EQ(moved->slots(), 1u) << "zone-a left with its last reference, from the moved pool";
  moved.reset();
  EXPECT_EQ(*survivor, "zone-b");
  survivor = nullptr;  // frees it without the pool
  EXPECT_FALSE(survivor);
}

TEST(SharedText, EqualTextsShareOneCopyAndTheEmptyOneTakesNone) {
  InternPool<std::string> pool;
  const SharedText a("10.0.0.7", pool);
  const SharedText b(std::string("10.0.0.") + "7", pool);
  const SharedText none("", pool);
  EXPECT_EQ(&a.str(), &b.str());
  EXPECT_TRUE(a == "10.0.0.7");
  EXPECT_FALSE(a == "10.0.0.8");
  EXPECT_TRUE(none.empty());
  EXPECT_EQ(none.str(), "");
  EXPECT_TRUE(SharedText{} == "");
  EXPECT_EQ(pool.slots(), 1u);
}

TEST(InstanceEntry, TheReportComesBackAsItsOwnerMadeItWithEveryField) {
  InstanceInterner interner;
  InstanceEntry entry;
  const auto in = full_report();
  entry.set_report(in, interner);
  EXPECT_EQ(entry.report(in.id), in);
  EXPECT_TRUE(entry.reports(in));
}

TEST(InstanceEntry, AnyChangedFieldIsADifferentReport) {
  InstanceInterner interner;
  InstanceEntry entry;
  entry.set_report(full_report(), interner);
  const std::vector<void (*)(proto::Instance&)> changes = {
      [](proto::Instance& in) { in.address = "172.16.4.21:20480"; },
      [](proto::Instance& in) { in.weight = 8; },
      [](proto::Instance& in) { in.zone = ""; },
      [](proto::Instance& in) { in.status = proto::InstanceStatus::kUp; },
      [](proto::Instance& in) { in.metadata["protocol"] = "http"; },
      [](proto::Instance& in) { in.metadata.clear(); },
      [](proto::Instance& in) { in.tier = 0; },
      [](proto::Instance& in) { in.health = proto::Health::kOk; },
      [](proto::Instance& in) { in.health_reason.clear(); },
  };
  for (std::size_t i = 0; i < changes.size(); ++i) {
    auto changed = full_report();
    changes[i](changed);
    EXPECT_FALSE(entry.reports(changed)) << "change " << i;
  }
}

TEST(InstanceEntry, InstancesWithTheSameZoneAndMetadataShareThem) {
  InstanceInterner interner;
  InstanceEntry a;
  InstanceEntry b;
  auto in = full_report();
  a.set_report(in, interner);
  in.address = "172.16.4.21:20480";
  b.set_report(in, interner);
  EXPECT_EQ(interner.zones.slots(), 1u);
  EXPECT_EQ(interner.metadata.slots(), 1u);
  EXPECT_EQ(b.report("b").metadata, full_report().metadata);
}

TEST(InstanceEntry, ServedLaysTheHubsVerdictAndTheOperatorsMarkOverTheReport) {
  InstanceInterner interner;
  InstanceEntry entry;
  auto in = full_report();
  in.health = proto::Health::kOk;
  in.health_reason.clear();
  in.status = proto::InstanceStatus::kUp;
  entry.set_report(in, interner);
  EXPECT_EQ(entry.served(in.id), in);
  entry.set_verdict({proto::Health::kUnconfirmed, "its agent's lease ran out"});
  entry.out_of_service = true;
  const auto served = entry.served(in.id);
  EXPECT_EQ(served.status, proto::InstanceStatus::kOutOfService);
  EXPECT_EQ(served.health, proto::Health::kUnconfirmed);
  EXPECT_EQ(served.health_reason, "its agent's lease ran out");
  EXPECT_EQ(entry.report(in.id), in) << "the report itself is untouched";
  entry.set_verdict({});
  EXPECT_EQ(entry.served(in.id).health, proto::Health::kOk);
}

TEST(InstanceEntry, ClaimsAreKeptInOrderDroppedByNodeAndMarkedStale) {
  InstanceEntry entry;
  EXPECT_TRUE(entry.claimants().empty());
  entry.add_claim("n1", true);
  entry.add_claim("n2", true);
  entry.add_claim("n3", false);
  entry.drop_claim("n2");
  ASSERT_EQ(entry.claimants().size(), 2u);
  entry.claims_differ();
  EXPECT_FALSE(entry.claimants()[0].same_content);
  const Claim first = entry.take_first_claim();
  EXPECT_EQ(first.node, "n1");
  ASSERT_EQ(entry.claimants().size(), 1u);
  EXPECT_EQ(entry.claimants()[0].node, "n3");
  entry.drop_claim("n3");
  EXPECT_TRUE(entry.claimants().empty());
}

// The owner's report, not the served one, is what the owner is asked about
// (its set digest) and what is written to the store.
TEST(InstanceEntry, TheRegistryAnswersANodesReportWithoutTheHubsVerdict) {
  Registry registry(1, 16);
  registry.begin_txn();
  auto& svc = registry.service({"api", "default"});
  auto in = full_report();
  const auto upserted = registry.upsert(svc, in, "n1");
  ASSERT_TRUE(upserted.changed);
  ASSERT_TRUE(registry.set_verdict(svc, in.id, {proto::Health::kUnconfirmed, "held"}));
  const auto reported = Registry::reported_by(*upserted.slot, "n1");
  ASSERT_TRUE(reported.has_value());
  EXPECT_EQ(*reported, in);
  EXPECT_FALSE(Registry::reported_by(*upserted.slot, "n2").has_value()) << "n2 never reported it";
}

}  // namespace
}  // namespace cascade::hub
