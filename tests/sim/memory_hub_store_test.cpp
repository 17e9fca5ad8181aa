// The simulation's disk keeps the config centre's rows as the SQLite store
// does (tests/hub/config_persistence_test.cpp): this hub's keys with their
// origin versions and the history, of which a load returns the last
// kConfigHistoryRestored records per group, oldest first; a hub restored
// from it serves the same values with the same origins.

#include "cascade/sim/memory_hub_store.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "cascade/hub/hub_core.hpp"

namespace cascade::sim {
namespace {

using hub::ConfigEntryRecord;
using hub::ConfigHistoryRecord;
using hub::PersistBatch;

ConfigHistoryRecord change(const std::string& group, std::uint64_t version, const std::string& key,
                           std::optional<std::string> old_value,
                           std::optional<std::string> new_value) {
  return {group, version, key, std::move(old_value), std::move(new_value), "ops", 0};
}

TEST(MemoryHubStoreTest, KeepsConfigEntriesAsTheLastChangeOfEachKeyLeftThem) {
  MemoryHubStore store;
  PersistBatch first;
  first.wall_ms = 1000;
  first.config_changes = {change("orders", 10, "timeout", std::nullopt, "300"),
                          change("orders", 10, "retries", std::nullopt, "3"),
                          change("billing", 11, "mode", std::nullopt, "safe")};
  store.apply(first);
  PersistBatch second;
  second.wall_ms = 2000;
  // One key changed twice in one batch ends as the second change left it.
  second.config_changes = {change("orders", 12, "timeout", "300", "250"),
                           change("orders", 13, "timeout", "250", "200"),
                           change("orders", 13, "retries", "3", std::nullopt)};
  store.apply(second);

  const auto snapshot = store.load();
  EXPECT_EQ(snapshot.config_entries,
            (std::vector<ConfigEntryRecord>{{"billing", "mode", "safe", 11},
                                            {"orders", "timeout", "200", 13}}))
      << "by group and key, with the version each was set at";
  ASSERT_EQ(snapshot.config_history.size(), 6u);
  EXPECT_EQ(snapshot.config_history[0].group, "billing");
  EXPECT_EQ(snapshot.config_history[1].key, "timeout") << "oldest first within a group";
  EXPECT_EQ(snapshot.config_history[1].wall_ms, 1000) << "stamped with its batch's commit time";
  EXPECT_EQ(snapshot.config_history[5].new_value, std::nullopt);
  EXPECT_EQ(snapshot.config_history[5].wall_ms, 2000);
  EXPECT_EQ(store.config_entry_count(), 2u);
  EXPECT_EQ(store.batches_applied(), 2u);
}

TEST(MemoryHubStoreTest, ALoadRestoresTheNewestHistoryRecordsOfEachGroupOnly) {
  MemoryHubStore store;
  const std::size_t total = hub::kConfigHistoryRestored + 7;
  for (std::size_t i = 0; i < total; ++i) {
    PersistBatch batch;
    batch.config_changes = {change("orders", i + 1, "k", std::nullopt, std::to_string(i))};
    store.apply(batch);
  }
  PersistBatch other;
  other.config_changes = {change("billing", 1, "mode", std::nullopt, "safe")};
  store.apply(other);

  const auto snapshot = store.load();
  EXPECT_EQ(store.config_history_count(), total + 1) << "the store keeps them all";
  ASSERT_EQ(snapshot.config_history.size(), hub::kConfigHistoryRestored + 1);
  EXPECT_EQ(snapshot.config_history[0].group, "billing");
  EXPECT_EQ(snapshot.config_history[1].version, total - hub::kConfigHistoryRestored + 1);
  EXPECT_EQ(snapshot.config_history.back().version, total);
  EXPECT_EQ(snapshot.config_entries.size(), 2u);
}

TEST(MemoryHubStoreTest, AHubRestoredFromItServesTheSameKeysWithTheirOrigins) {
  MemoryHubStore store;
  const MonoTime now = mono_from_ms(1'000'000);
  const hub::HubCoreConfig config{"hub-a", 1, Duration{6000}};
  hub::HubCore before(config, store.next_epoch(), now);
  before.restore(store.load(), now);
  ASSERT_TRUE(std::holds_alternative<std::vector<ConfigHistoryRecord>>(
      before.edit_config(now, "orders", {{"timeout", "300"}, {"retries", "3"}}, "ops", 0)));
  ASSERT_TRUE(std::holds_alternative<std::vector<ConfigHistoryRecord>>(
      before.edit_config(now, "orders", {{"retries", std::nullopt}}, "ops", 0)));
  store.apply(before.take_persist_batch(1'700'000'000'000));
  const auto* served_before = before.config_centre().groups().served("orders");
  ASSERT_NE(served_before, nullptr);

  hub::HubCore after(config, store.next_epoch(), now);
  after.restore(store.load(), now);
  const auto* served = after.config_centre().groups().served("orders");
  ASSERT_NE(served, nullptr) << "the group came back from the disk";
  EXPECT_EQ(served->entries, served_before->entries) << "values and origins";
  EXPECT_NE(served->version, served_before->version) << "served under the new epoch";
  EXPECT_EQ(store.load().config_history.size(), 3u);
}

}  // namespace
}  // namespace cascade::sim
