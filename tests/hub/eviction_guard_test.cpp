#include "cascade/hub/eviction_guard.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace cascade::hub {
namespace {

constexpr Duration kWindow{60'000};
constexpr Duration kMaxHold{600'000};
const MonoTime kT0 = mono_from_ms(1'000'000);

proto::ServiceKey key(const std::string& name) {
  return proto::ServiceKey{name};
}

// The registry as the hub core would describe it to the guard: which node
// provides how many instances of which service.
class FakeRegistry {
 public:
  void add(const std::string& node, const std::string& service, std::uint32_t n = 1) {
    nodes_[node][service] += n;
    services_[service] += n;
    total_ += n;
  }

  // Where the core counts the node for the guard: what it last told it.
  const std::string& source(const std::string& node) const {
    static const std::string kOwn;
    auto it = sources_.find(node);
    return it == sources_.end() ? kOwn : it->second;
  }
  void set_source(const std::string& node, const std::string& source) { sources_[node] = source; }

  ExpiryRequest request(const std::string& node) const {
    ExpiryRequest r;
    r.node_id = node;
    r.source = source(node);
    r.registry_instances = total_;
    if (auto it = nodes_.find(node); it != nodes_.end())
      for (const auto& [service, n] : it->second)
        r.services.push_back({key(service), n, services_.at(service)});
    return r;
  }

  void drop(const std::string& node) {
    auto it = nodes_.find(node);
    ASSERT_NE(it, nodes_.end()) << node << " dropped twice";
    for (const auto& [service, n] : it->second) {
      services_[service] -= n;
      total_ -= n;
    }
    nodes_.erase(it);
    sources_.erase(node);
  }

  std::uint32_t size(const std::string& service) const {
    auto it = services_.find(service);
    return it == services_.end() ? 0 : it->second;
  }
  bool has(const std::string& node) const { return nodes_.count(node) > 0; }

 private:
  std::map<std::string, std::map<std::string, std::uint32_t>> nodes_;
  std::map<std::string, std::uint32_t> services_;
  std::map<std::string, std::string> sources_;
  std::size_t total_ = 0;
};

struct Tally {
  int expired = 0;
  int held_budget = 0;
  int held_partition = 0;
};

class EvictionGuardTest : public ::testing::Test {
 protected:
  EvictionGuardTest() { use(EvictionGuardConfig{}); }

  void use(EvictionGuardConfig config) { guard_.emplace(config); }
  // The shares never hold anything back: only the partition rule is under test.
  void use_partition_rule_only() {
    EvictionGuardConfig config;
    config.max_service_share = 1.0;
    config.max_registry_share = 1.0;
    use(config);
  }
  EvictionGuard& guard() { return *guard_; }

  // The gauges status reads (kept as holds begin and end) agree with a recount.
  void TearDown() override {
    if (auto mismatch = guard().recount_mismatch()) ADD_FAILURE() << *mismatch;
  }

  // What the core does when a node beats through `source`: tells the guard
  // where it was counted before. True if it was held.
  bool seen(const std::string& node, const std::string& source) {
    const bool held = guard().on_node_seen(node, registry_.source(node), source);
    registry_.set_source(node, source);
    return held;
  }
  // A graceful removal.
  void removed(const std::string& node) {
    guard().on_node_removed(node, registry_.source(node));
    registry_.drop(node);
  }

  // Nodes "<prefix>-<i>", one instance of `service` each, beating through `source`.
  std::vector<std::string> add_nodes(const std::string& prefix, int count,
                                     const std::string& service, const std::string& source = "") {
    std::vector<std::string> ids;
    for (int i = 0; i < count; ++i) {
      ids.push_back(prefix + "-" + std::to_string(i));
      registry_.add(ids.back(), service);
      seen(ids.back(), source);
    }
    return ids;
  }

  // A big, healthy service so that the registry-wide cap stays out of the way.
  void add_bulk() {
    registry_.add("bulk", "bulk-service", 10'000);
    seen("bulk", "");
  }

  // What the core does when a lease runs out: ask, and drop the node on kExpire.
  ExpiryVerdict lease_runs_out(const std::string& node, MonoTime now) {
    const auto verdict = guard().on_lease_expired(now, registry_.request(node));
    if (verdict == ExpiryVerdict::kExpire) registry_.drop(node);
    return verdict;
  }

  Tally leases_run_out(const std::vector<std::string>& nodes, MonoTime now) {
    Tally t;
    for (const auto& node : nodes) {
      switch (lease_runs_out(node, now)) {
        case ExpiryVerdict::kExpire:
          ++t.expired;
          break;
        case ExpiryVerdict::kHoldBudget:
          ++t.held_budget;
          break;
        case ExpiryVerdict::kHoldPartition:
          ++t.held_partition;
          break;
      }
    }
    return t;
  }

  // What the core does on its timer: drop what the guard releases.
  std::vector<std::string> run_due(MonoTime now) {
    auto released = guard().due(now, 1'000'000);
    for (const auto& node : released)
      registry_.drop(node);
    return released;
  }

  std::optional<EvictionGuard> guard_;
  FakeRegistry registry_;
};

TEST_F(EvictionGuardTest, ThirtyPercentOfAServiceExpiringAtOnceOnlyTwentyPercentExpire) {
  add_bulk();
  const auto pay = add_nodes("pay", 10, "payments");
  const Tally t = leases_run_out({pay[0], pay[1], pay[2]}, kT0);
  EXPECT_EQ(t.expired, 2);
  EXPECT_EQ(t.held_budget, 1);
  EXPECT_EQ(registry_.size("payments"), 8u);
  EXPECT_TRUE(guard().is_held(pay[2]));
  // Asking again about a held node keeps its hold.
  EXPECT_EQ(guard().on_lease_expired(kT0, registry_.request(pay[2])), ExpiryVerdict::kHoldBudget);
  const auto s = guard().stats(kT0);
  EXPECT_EQ(s.held_nodes, 1u);
  EXPECT_EQ(s.held_for_budget, 1u);
  EXPECT_EQ(s.held_instances, 1u);
  EXPECT_EQ(s.counters.service_cap_holds, 1u);
  EXPECT_EQ(s.window_expired_nodes, 2u);
  EXPECT_EQ(s.window_expired_instances, 2u);
}

TEST_F(EvictionGuardTest, HeldNodesDrainWindowByWindowNeverStuck) {
  EvictionGuardConfig config;
  config.max_hold = Duration{24 * 3'600'000};  // so that only the budget can release them
  use(config);
  add_bulk();
  const auto nodes = add_nodes("web", 100, "web");
  const Tally t = leases_run_out(nodes, kT0);  // a real mass death
  EXPECT_EQ(t.expired, 20);
  EXPECT_EQ(t.held_budget, 80);
  EXPECT_TRUE(run_due(kT0 + kWindow - Duration{1}).empty());

  MonoTime now = kT0;
  int windows = 0;
  while (guard().stats(now).held_nodes > 0) {
    const auto next = guard().next_deadline();
    ASSERT_TRUE(next);
    ASSERT_EQ(*next, now + kWindow) << "drains exactly when the window has room";
    now = *next;
    const std::uint32_t before = registry_.size("web");
    const auto released = run_due(now);
    ASSERT_FALSE(released.empty()) << "stuck after " << windows << " windows";
    if (before >= config.min_service_instances_for_cap) {
      EXPECT_LE(released.size(), std::floor(0.2 * before + 1e-9)) << "window " << windows;
    }
    if (windows == 0) {
      EXPECT_EQ(released.size(), 16u);  // 20% of the 80 left
    }
    ASSERT_LT(++windows, 40);
  }
  EXPECT_EQ(registry_.size("web"), 0u);
  EXPECT_EQ(guard().stats(now).counters.released_budget, 80u);
  EXPECT_EQ(guard().stats(now).counters.released_max_hold, 0u);
  EXPECT_FALSE(guard().next_deadline());
}

TEST_F(EvictionGuardTest, MaxHoldReleasesANodeTheBudgetNeverFits) {
  add_bulk();
  registry_.add("fat", "svc", 3);
  seen("fat", "");
  add_nodes("thin", 7, "svc");
  EXPECT_EQ(lease_runs_out("fat", kT0), ExpiryVerdict::kHoldBudget);  // 3 > 20% of 10
  EXPECT_EQ(guard().next_deadline(), kT0 + kMaxHold);
  EXPECT_TRUE(run_due(kT0 + 5 * kWindow).empty());
  EXPECT_TRUE(run_due(kT0 + kMaxHold - Duration{1}).empty());
  EXPECT_EQ(run_due(kT0 + kMaxHold), std::vector<std::string>{"fat"});
  EXPECT_FALSE(guard().is_held("fat"));
  const auto s = guard().stats(kT0 + kMaxHold);
  EXPECT_EQ(s.counters.released_max_hold, 1u);
  EXPECT_EQ(s.held_nodes, 0u);
  EXPECT_EQ(s.window_expired_instances, 3u);  // a release consumes budget too
}

TEST_F(EvictionGuardTest, HeldNodeThatBeatsAgainIsReleasedUnheldAndNeverExpired) {
  add_bulk();
  const auto pay = add_nodes("pay", 10, "payments");
  leases_run_out({pay[0], pay[1], pay[2]}, kT0);
  ASSERT_TRUE(guard().is_held(pay[2]));
  EXPECT_TRUE(seen(pay[2], ""));
  EXPECT_FALSE(guard().is_held(pay[2]));
  EXPECT_FALSE(seen(pay[2], ""));
  EXPECT_FALSE(guard().next_deadline());
  EXPECT_TRUE(run_due(kT0 + 2 * kMaxHold).empty());
  EXPECT_TRUE(registry_.has(pay[2]));
  const auto s = guard().stats(kT0 + 2 * kMaxHold);
  EXPECT_EQ(s.held_nodes, 0u);
  EXPECT_EQ(s.held_instances, 0u);
  EXPECT_EQ(s.counters.returned, 1u);
}

TEST_F(EvictionGuardTest, GracefulRemovalIsNeitherHeldNorCounted) {
  add_bulk();
  const auto pay = add_nodes("pay", 10, "payments");
  for (int i = 0; i < 3; ++i)
    removed(pay[i]);
  // 7 left: one expiry fits the 20% share; had the removals counted, it would not.
  EXPECT_EQ(lease_runs_out(pay[3], kT0), ExpiryVerdict::kExpire);
  EXPECT_EQ(lease_runs_out(pay[4], kT0), ExpiryVerdict::kHoldBudget);
  removed(pay[4]);  // an admin removes the held node
  EXPECT_FALSE(guard().is_held(pay[4]));
  const auto s = guard().stats(kT0);
  EXPECT_EQ(s.held_nodes, 0u);
  EXPECT_EQ(s.window_expired_nodes, 1u);
  EXPECT_TRUE(run_due(kT0 + 2 * kMaxHold).empty());
  EXPECT_EQ(guard().tracked_holds(), 0u);  // nodes of their own source cost nothing unheld
}

TEST_F(EvictionGuardTest, SourceLosingMostOfItsNodesIsHeldWhileOtherSourcesExpireNormally) {
  use_partition_rule_only();
  const auto a = add_nodes("a", 10, "orders", "proxy-a");
  const auto b = add_nodes("b", 10, "orders", "proxy-b");
  const Tally ta = leases_run_out(a, kT0);  // proxy-a is cut off
  EXPECT_EQ(ta.expired, 4);                 // until half are lost, deaths look single
  EXPECT_EQ(ta.held_partition, 6);
  const Tally tb = leases_run_out({b[0], b[1]}, kT0);
  EXPECT_EQ(tb.expired, 2);
  auto s = guard().stats(kT0);
  ASSERT_EQ(s.partitioned_sources.size(), 1u);
  EXPECT_EQ(s.partitioned_sources[0].source, "proxy-a");
  EXPECT_EQ(s.partitioned_sources[0].nodes, 6u);
  EXPECT_EQ(s.partitioned_sources[0].held, 6u);
  EXPECT_EQ(s.counters.partition_holds, 6u);
  for (int i = 4; i < 10; ++i)
    EXPECT_TRUE(seen(a[i], "proxy-a"));  // the proxy is back
  EXPECT_TRUE(guard().stats(kT0).partitioned_sources.empty());
}

TEST_F(EvictionGuardTest, GaugesFollowTwoPartitionsAsTheyBeginAndHealWithoutAWalk) {
  use_partition_rule_only();
  const auto a = add_nodes("a", 10, "orders", "proxy-a");
  const auto b = add_nodes("b", 10, "orders", "proxy-b");
  leases_run_out(a, kT0);
  leases_run_out(b, kT0);
  auto g = guard().gauges();
  EXPECT_EQ(g.partitioned_sources, 2u);
  EXPECT_EQ(g.held_for_partition, 12u);
  EXPECT_EQ(g.held_nodes, 12u);
  EXPECT_EQ(g.held_instances, 12u);
  EXPECT_EQ(g.partitioned_sources, guard().stats(kT0).partitioned_sources.size());
  for (int i = 4; i < 9; ++i)
    seen(a[i], "proxy-a");  // one of proxy-a's still held: still partitioned
  EXPECT_EQ(guard().gauges().partitioned_sources, 2u);
  seen(a[9], "proxy-a");
  g = guard().gauges();
  EXPECT_EQ(g.partitioned_sources, 1u);
  EXPECT_EQ(g.held_for_partition, 6u);
  removed(b[9]);  // an operator removed one of proxy-b's held nodes
  EXPECT_EQ(guard().gauges().partitioned_sources, 1u);
  EXPECT_EQ(run_due(kT0 + kMaxHold).size(), 5u);
  EXPECT_EQ(guard().gauges().partitioned_sources, 0u);
  EXPECT_EQ(guard().gauges().held_nodes, 0u);
}

TEST_F(EvictionGuardTest, PartitionHoldEndsAtMaxHold) {
  add_bulk();
  const auto a = add_nodes("a", 10, "big", "proxy-a");
  add_nodes("other", 90, "big");
  const Tally t = leases_run_out(a, kT0);
  EXPECT_EQ(t.expired, 4);
  EXPECT_EQ(t.held_partition, 6);
  EXPECT_EQ(guard().next_deadline(), kT0 + kMaxHold);
  EXPECT_TRUE(run_due(kT0 + kMaxHold - Duration{1}).empty());
  EXPECT_EQ(run_due(kT0 + kMaxHold).size(), 6u);
  EXPECT_TRUE(guard().stats(kT0 + kMaxHold).partitioned_sources.empty());
  EXPECT_EQ(guard().stats(kT0 + kMaxHold).counters.released_max_hold, 6u);
}

TEST_F(EvictionGuardTest, DisablingReleasesEverythingHeld) {
  add_bulk();
  const auto pay = add_nodes("pay", 10, "payments");
  const auto a = add_nodes("a", 10, "orders", "proxy-a");
  const Tally tp = leases_run_out({pay[0], pay[1], pay[2], pay[3]}, kT0);
  const Tally ta = leases_run_out(a, kT0);
  const int held = tp.held_budget + ta.held_budget + ta.held_partition;
  ASSERT_GT(tp.held_budget, 0);
  ASSERT_GT(ta.held_partition, 0);
  const MonoTime now = kT0 + Duration{10};
  guard().set_enabled(false);
  ASSERT_TRUE(guard().next_deadline());
  EXPECT_LE(*guard().next_deadline(), now);
  EXPECT_EQ(run_due(now).size(), static_cast<std::size_t>(held));
  EXPECT_EQ(guard().stats(now).held_nodes, 0u);
  EXPECT_EQ(guard().stats(now).counters.released_disabled, static_cast<std::uint64_t>(held));
  EXPECT_EQ(lease_runs_out(pay[4], now), ExpiryVerdict::kExpire);
  EXPECT_FALSE(guard().next_deadline());
}

TEST_F(EvictionGuardTest, RegistryShareHoldsAcrossManyServices) {
  EvictionGuardConfig config;
  config.max_service_share = 0.5;  // 30% of each service fits; 30% of the registry does not
  use(config);
  std::vector<std::vector<std::string>> services;
  for (int s = 0; s < 10; ++s)
    services.push_back(add_nodes("s" + std::to_string(s), 10, "svc" + std::to_string(s)));
  Tally t;
  for (int round = 0; round < 3; ++round)
    for (const auto& nodes : services) {
      const Tally one = leases_run_out({nodes[round]}, kT0);
      t.expired += one.expired;
      t.held_budget += one.held_budget;
    }
  EXPECT_EQ(t.expired, 20);
  EXPECT_EQ(t.held_budget, 10);
  const auto s = guard().stats(kT0);
  EXPECT_EQ(s.counters.registry_cap_holds, 10u);
  EXPECT_EQ(s.counters.service_cap_holds, 0u);
}

TEST_F(EvictionGuardTest, TinyServicesAreNotCappedPerService) {
  add_bulk();
  const auto tiny = add_nodes("tiny", 3, "tiny");
  const Tally t = leases_run_out({tiny[0], tiny[1]}, kT0);
  EXPECT_EQ(t.expired, 2);  // 20% of 3 is no instance at all: a cap would hold every death
  const auto small = add_nodes("small", 5, "small");  // from 5 instances on, the cap applies
  const Tally s = leases_run_out({small[0], small[1]}, kT0);
  EXPECT_EQ(s.expired, 1);
  EXPECT_EQ(s.held_budget, 1);
}

TEST_F(EvictionGuardTest, LowerTierHubNodeIsHeldByThePerServiceCap) {
  add_bulk();
  registry_.add("tier2-hub", "orders", 40);
  registry_.add("tier2-hub", "users", 30);
  seen("tier2-hub", "");  // a lower-tier hub is its own source
  add_nodes("orders-agent", 10, "orders");
  add_nodes("users-agent", 10, "users");
  EXPECT_EQ(lease_runs_out("tier2-hub", kT0), ExpiryVerdict::kHoldBudget);
  auto s = guard().stats(kT0);
  EXPECT_EQ(s.held_instances, 70u);
  EXPECT_EQ(s.counters.service_cap_holds, 1u);
  EXPECT_TRUE(s.partitioned_sources.empty());
  EXPECT_TRUE(run_due(kT0 + 3 * kWindow).empty());  // 40 of 50 never fits a 20% share
  EXPECT_TRUE(seen("tier2-hub", ""));
  EXPECT_EQ(registry_.size("orders"), 50u);
}

TEST_F(EvictionGuardTest, ForgetsEmptyWindowsAndSourcesWithoutNodes) {
  const auto p = add_nodes("p", 10, "svc", "proxy-p");
  EXPECT_EQ(guard().tracked_sources(), 1u);
  leases_run_out({p[0], p[1]}, kT0);
  for (int i = 2; i < 10; ++i)
    removed(p[i]);
  EXPECT_EQ(guard().tracked_holds(), 0u);
  EXPECT_EQ(guard().tracked_sources(), 1u);  // its expiries are still in the window
  EXPECT_EQ(guard().tracked_services(), 1u);
  run_due(kT0 + kWindow);
  EXPECT_EQ(guard().tracked_sources(), 0u);
  EXPECT_EQ(guard().tracked_services(), 0u);
  EXPECT_EQ(guard().stats(kT0 + kWindow).window_expired_nodes, 0u);
}

TEST_F(EvictionGuardTest, NodeThatChangesSourceCountsForTheNewOne) {
  const auto a = add_nodes("a", 4, "svc", "proxy-a");
  EXPECT_FALSE(seen(a[0], "proxy-b"));
  EXPECT_EQ(guard().tracked_sources(), 2u);
  EXPECT_EQ(guard().members("proxy-a"), 3u);
  EXPECT_EQ(guard().members("proxy-b"), 1u);
  EXPECT_FALSE(seen(a[1], ""));  // now its own source: counted nowhere
  EXPECT_EQ(guard().members("proxy-a"), 2u);
  EXPECT_EQ(guard().total_members(), 3u);
  for (const auto& node : a)
    removed(node);
  EXPECT_EQ(guard().tracked_sources(), 0u);
  EXPECT_EQ(guard().total_members(), 0u);
}

TEST_F(EvictionGuardTest, HeldNodeThatReturnsThroughAnotherSourceLeavesTheHeldOne) {
  use_partition_rule_only();
  const auto a = add_nodes("a", 4, "svc", "proxy-a");
  const Tally t = leases_run_out(a, kT0);  // the first looks like a single death; then a partition
  ASSERT_EQ(t.expired, 1);
  ASSERT_EQ(t.held_partition, 3);
  EXPECT_EQ(guard().gauges().partitioned_sources, 1u);
  EXPECT_TRUE(seen(a[3], "proxy-b"));  // back, through another proxy
  EXPECT_EQ(guard().members("proxy-b"), 1u);
  EXPECT_EQ(guard().members("proxy-a"), 2u);  // a[1] and a[2], still held
  EXPECT_EQ(guard().tracked_holds(), 2u);
}

TEST_F(EvictionGuardTest, NothingHeldMeansNoDeadline) {
  add_bulk();
  const auto pay = add_nodes("pay", 10, "payments");
  EXPECT_FALSE(guard().next_deadline());
  leases_run_out({pay[0], pay[1]}, kT0);
  EXPECT_FALSE(guard().next_deadline());
}

TEST(EvictionGuardConfigCheck, BadConfigGetsAClearMessage) {
  auto error_of = [](auto change) {
    EvictionGuardConfig config;
    change(config);
    auto made = EvictionGuard::create(config);
    return std::holds_alternative<std::string>(made) ? std::get<std::string>(made) : "";
  };
  EXPECT_EQ(error_of([](auto&) {}), "");
  EXPECT_NE(error_of([](auto& c) { c.window = Duration{0}; }).find("window"), std::string::npos);
  EXPECT_NE(error_of([](auto& c) { c.max_hold = Duration{-1}; }).find("max_hold"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) { c.max_service_share = 1.5; }).find("max_service_share"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) { c.max_registry_share = 0; }).find("max_registry_share"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) {
              c.source_partition_share = std::nan("");
            }).find("source_partition_share"),
            std::string::npos);
  EXPECT_NE(error_of([](auto& c) { c.min_source_nodes = 1; }).find("min_source_nodes"),
            std::string::npos);
}

TEST(EvictionGuardVerdict, NamesAreStable) {
  EXPECT_EQ(verdict_name(ExpiryVerdict::kExpire), "expire");
  EXPECT_EQ(verdict_name(ExpiryVerdict::kHoldBudget), "hold-budget");
  EXPECT_EQ(verdict_name(ExpiryVerdict::kHoldPartition), "hold-partition");
}

}  // namespace
}  // namespace cascade::hub
