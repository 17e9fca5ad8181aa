// A hub's config centre without sockets: groups of keys set by operators,
// versioned, sent to subscribers as deltas or whole; a hub's own keys served
// over the tier above's, each value saying where it was set; limits that
// refuse a whole edit; history and rollback.

#include "cascade/hub/config_groups.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>

namespace cascade::hub {
namespace {

using proto::UpdateKind;

constexpr WallMs kWall = 1'700'000'000'000;

ConfigGroups l1(ConfigLimits limits = {}) {
  return ConfigGroups({"hub-dc1", 1}, 7, limits);
}

std::vector<ConfigEdit> set(std::vector<std::pair<std::string, std::string>> pairs) {
  std::vector<ConfigEdit> edits;
  for (auto& [key, value] : pairs)
    edits.push_back({key, value});
  return edits;
}

std::vector<ConfigHistoryRecord> changes(const ConfigGroups::Outcome& outcome) {
  if (const auto* error = std::get_if<std::string>(&outcome)) ADD_FAILURE() << *error;
  const auto* records = std::get_if<std::vector<ConfigHistoryRecord>>(&outcome);
  return records ? *records : std::vector<ConfigHistoryRecord>{};
}

std::string refusal(const ConfigGroups::Outcome& outcome) {
  const auto* error = std::get_if<std::string>(&outcome);
  return error ? *error : "";
}

std::uint64_t version_of(const ConfigGroups& config, const std::string& group) {
  const auto* served = config.served(group);
  return served ? served->version : 0;
}

// Sets orders' key k to "0", "1", ... `times` times; the version after each.
std::vector<std::uint64_t> set_k_repeatedly(ConfigGroups& config, int times) {
  std::vector<std::uint64_t> versions;
  for (int i = 0; i < times; ++i) {
    changes(config.edit("orders", set({{"k", std::to_string(i)}}), "ops", kWall));
    versions.push_back(version_of(config, "orders"));
  }
  return versions;
}

// The value a subscriber sees for `key`, "" when absent.
std::string value_of(const ConfigGroups& config, const std::string& group, const std::string& key) {
  const auto* served = config.served(group);
  if (served == nullptr) return "";
  auto it = served->entries.find(key);
  return it == served->entries.end() ? "" : it->second.value;
}

TEST(ConfigGroups, KeysSetTogetherAreServedUnderOneNewVersionWithThisHubAsTheirOrigin) {
  auto config = l1();
  const auto records =
      changes(config.edit("orders", set({{"timeout_ms", "300"}, {"retries", "2"}}), "ops", kWall));
  ASSERT_EQ(records.size(), 2u);
  const auto version = version_of(config, "orders");
  EXPECT_EQ(records[0].version, version);
  EXPECT_EQ(records[1].version, version);
  EXPECT_EQ(version >> 40, 7u);  // issued by this incarnation

  const auto update = config.update_for("orders", 0);
  ASSERT_TRUE(update);
  EXPECT_EQ(update->kind, UpdateKind::kFull);
  EXPECT_EQ(update->version, version);
  ASSERT_EQ(update->upserts.size(), 2u);
  EXPECT_EQ(update->upserts[0].key, "retries");
  EXPECT_EQ(update->upserts[0].origin, (proto::ConfigOrigin{1, "hub-dc1", version}));
  EXPECT_FALSE(config.update_for("orders", version)) << "a current holder needs nothing";
}

TEST(ConfigGroups, ASubscriberOneChangeBehindGetsOnlyTheKeysThatChanged) {
  auto config = l1();
  changes(config.edit("orders", set({{"a", "1"}, {"b", "2"}, {"c", "3"}}), "ops", kWall));
  const auto held = version_of(config, "orders");
  changes(config.edit("orders", {{"a", "10"}, {"c", std::nullopt}}, "ops", kWall));

  const auto update = config.update_for("orders", held);
  ASSERT_TRUE(update);
  EXPECT_EQ(update->kind, UpdateKind::kDelta);
  EXPECT_EQ(update->from_version, held);
  ASSERT_EQ(update->upserts.size(), 1u);
  EXPECT_EQ(update->upserts[0].key, "a");
  EXPECT_EQ(update->upserts[0].value, "10");
  EXPECT_EQ(update->removed, std::vector<std::string>{"c"});
}

TEST(ConfigGroups, ASubscriberTooFarBehindOrHoldingAVersionNotIssuedHereGetsTheWholeGroup) {
  auto config = l1({.log_per_group = 2});
  const auto oldest = set_k_repeatedly(config, 4).front();

  EXPECT_EQ(config.update_for("orders", oldest)->kind, UpdateKind::kFull);
  EXPECT_EQ(config.update_for("orders", oldest + 1'000)->kind, UpdateKind::kFull);
  // A restarted hub (a later epoch) never issued what the previous one did.
  ConfigGroups restarted({"hub-dc1", 1}, 8);
  changes(restarted.edit("orders", set({{"k", "3"}}), "ops", kWall));
  EXPECT_EQ(restarted.update_for("orders", version_of(config, "orders"))->kind, UpdateKind::kFull);
  EXPECT_GT(version_of(restarted, "orders"), version_of(config, "orders"));
}

TEST(ConfigGroups, AGroupNeverSetIsGoneAtTheNeverServedVersionAndAnEmptiedGroupAtItsVersion) {
  auto config = l1();
  const auto never = config.update_for("nothing", 0);
  ASSERT_TRUE(never) << "a subscriber that holds nothing yet gets an answer";
  EXPECT_EQ(never->kind, UpdateKind::kGone);
  EXPECT_EQ(never->version, kNeverServedVersion);
  EXPECT_FALSE(config.update_for("nothing", kNeverServedVersion))
      << "a holder of nothing is told nothing twice";

  changes(config.edit("orders", set({{"k", "v"}}), "ops", kWall));
  changes(config.edit("orders", {{"k", std::nullopt}}, "ops", kWall));
  const auto emptied = config.update_for("orders", 0);
  ASSERT_TRUE(emptied);
  EXPECT_EQ(emptied->kind, UpdateKind::kGone);
  EXPECT_EQ(emptied->version, version_of(config, "orders"));
  EXPECT_NE(emptied->version, 0u);
}

TEST(ConfigGroups, SettingAKeyToTheValueItHasChangesNothing) {
  auto config = l1();
  changes(config.edit("orders", set({{"k", "v"}}), "ops", kWall));
  const auto version = version_of(config, "orders");
  EXPECT_TRUE(changes(config.edit("orders", set({{"k", "v"}}), "ops", kWall)).empty());
  EXPECT_TRUE(changes(config.edit("orders", {{"absent", std::nullopt}}, "ops", kWall)).empty());
  EXPECT_EQ(version_of(config, "orders"), version);
  EXPECT_EQ(config.history("orders").size(), 1u);
}

// Versions come from one counter per hub; one is issued only once a change
// is certain, so the next change takes the very next one.
TEST(ConfigGroups, AnEditOrAnUpperCopyThatChangesNothingIssuesNoVersion) {
  auto config = l1();
  const proto::ConfigOrigin l2{2, "hub-l2", 99};
  const ConfigEntries upper{{"retries", {"retries", "3", l2}}};
  config.set_upper("orders", upper);
  const auto first = version_of(config, "orders");

  config.set_upper("orders", upper);  // the same copy again
  EXPECT_EQ(changes(config.edit("orders", set({{"k", "v"}}), "ops", kWall)).size(), 1u);
  EXPECT_EQ(version_of(config, "orders"), first + 1);

  EXPECT_TRUE(changes(config.edit("orders", set({{"k", "v"}}), "ops", kWall)).empty());
  EXPECT_TRUE(changes(config.edit("orders", {{"absent", std::nullopt}}, "ops", kWall)).empty());
  config.set_upper("unused", std::nullopt);  // no copy before, none now
  changes(config.edit("orders", set({{"k", "w"}}), "ops", kWall));
  EXPECT_EQ(version_of(config, "orders"), first + 2);
}

TEST(ConfigGroups, AnEditPastALimitIsRefusedWholeWithWhatIsWrongAndChangesNothing) {
  ConfigLimits limits;
  limits.max_value_bytes = 8;
  limits.max_keys_per_group = 3;
  limits.max_group_bytes = 19;
  ConfigGroups config({"hub-dc1", 1}, 7, limits);
  changes(config.edit("g", set({{"a", "1"}}), "ops", kWall));
  const auto version = version_of(config, "g");

  EXPECT_NE(refusal(config.edit("g", set({{"b", "2"}, {"big", "123456789"}}), "ops", kWall))
                .find("the value of 'big' is 9 bytes, more than 8"),
            std::string::npos);
  EXPECT_NE(refusal(config.edit("g", set({{"b", "1"}, {"c", "1"}, {"d", "1"}}), "ops", kWall))
                .find("4 keys, more than 3"),
            std::string::npos);
  EXPECT_NE(refusal(config.edit("g", set({{"b", "12345678"}, {"c", "12345678"}}), "ops", kWall))
                .find("take 20 bytes, more than 19"),
            std::string::npos);
  EXPECT_NE(refusal(config.edit("g", set({{std::string(256, 'k'), "1"}}), "ops", kWall)), "");
  EXPECT_NE(refusal(config.edit("g", set({{"bad\nkey", "1"}}), "ops", kWall)), "");
  EXPECT_NE(refusal(config.edit("", set({{"k", "1"}}), "ops", kWall)), "");
  EXPECT_NE(refusal(config.edit("g", {}, "ops", kWall)), "");

  EXPECT_EQ(version_of(config, "g"), version);
  EXPECT_EQ(config.served("g")->entries.size(), 1u);
  // Replacing a value counts its new size only: 1 + 8 bytes fits.
  EXPECT_EQ(changes(config.edit("g", set({{"a", "12345678"}}), "ops", kWall)).size(), 1u);
}

TEST(ConfigGroups, ThisHubsKeyIsServedOverTheUpperTiersAndRemovingItServesTheUpperValueAgain) {
  auto config = l1();
  const proto::ConfigOrigin l2{2, "hub-l2", 99};
  config.set_upper("orders", ConfigEntries{{"timeout_ms", {"timeout_ms", "500", l2}},
                                           {"retries", {"retries", "3", l2}}});
  EXPECT_EQ(value_of(config, "orders", "timeout_ms"), "500");

  changes(config.edit("orders", set({{"timeout_ms", "200"}}), "ops", kWall));
  const auto& served = config.served("orders")->entries;
  EXPECT_EQ(served.at("timeout_ms").value, "200");
  EXPECT_EQ(served.at("timeout_ms").origin.hub, "hub-dc1");
  EXPECT_EQ(served.at("retries").origin, l2);

  // A new value above does not win over this hub's.
  config.set_upper("orders", ConfigEntries{{"timeout_ms", {"timeout_ms", "700", l2}}});
  EXPECT_EQ(value_of(config, "orders", "timeout_ms"), "200");
  EXPECT_EQ(value_of(config, "orders", "retries"), "");

  changes(config.edit("orders", {{"timeout_ms", std::nullopt}}, "ops", kWall));
  EXPECT_EQ(value_of(config, "orders", "timeout_ms"), "700");
  EXPECT_EQ(config.served("orders")->entries.at("timeout_ms").origin, l2);

  config.set_upper("orders", std::nullopt);  // the upper tier has no such group
  EXPECT_EQ(config.update_for("orders", 0)->kind, UpdateKind::kGone);
}

// Global defaults at L3, a region's override at L2, a datacenter's at L1:
// each hub's served group is what the hub below takes as its upper copy.
TEST(ConfigGroups, OverridesApplyInTierOrderAcrossThreeTiersWithTheOriginOfEachValue) {
  ConfigGroups l3({"hub-l3", 3}, 1), l2({"hub-l2", 2}, 1), l1({"hub-l1", 1}, 1);
  changes(l3.edit("pay", set({{"a", "global"}, {"b", "global"}, {"c", "global"}}), "ops", kWall));
  changes(l2.edit("pay", set({{"b", "region"}, {"c", "region"}}), "ops", kWall));
  changes(l1.edit("pay", set({{"c", "dc"}}), "ops", kWall));
  const auto cascade_down = [&] {
    l2.set_upper("pay", l3.served("pay")->entries);
    l1.set_upper("pay", l2.served("pay")->entries);
  };
  cascade_down();

  const auto& served = l1.served("pay")->entries;
  EXPECT_EQ(served.at("a").value, "global");
  EXPECT_EQ(served.at("a").origin.tier, 3u);
  EXPECT_EQ(served.at("b").value, "region");
  EXPECT_EQ(served.at("b").origin.hub, "hub-l2");
  EXPECT_EQ(served.at("c").value, "dc");
  EXPECT_EQ(served.at("c").origin.tier, 1u);

  // A global change shows where nobody overrides it, and only there.
  const auto held = version_of(l1, "pay");
  changes(l3.edit("pay", set({{"a", "global-2"}, {"c", "global-2"}}), "ops", kWall));
  cascade_down();
  const auto update = l1.update_for("pay", held);
  ASSERT_TRUE(update);
  EXPECT_EQ(update->kind, UpdateKind::kDelta);
  ASSERT_EQ(update->upserts.size(), 1u);
  EXPECT_EQ(update->upserts[0].key, "a");
  EXPECT_EQ(update->upserts[0].value, "global-2");
}

TEST(ConfigGroups, HistoryTellsWhoChangedWhatWhenFromWhichValueToWhich) {
  auto config = l1();
  changes(config.edit("orders", set({{"k", "1"}}), "alice", kWall));
  changes(config.edit("orders", set({{"k", "2"}}), "bob", kWall + 5));
  changes(config.edit("orders", {{"k", std::nullopt}}, "alice", kWall + 9));
  const auto& history = config.history("orders");
  ASSERT_EQ(history.size(), 3u);
  EXPECT_EQ(history[0].old_value, std::nullopt);
  EXPECT_EQ(history[0].new_value, "1");
  EXPECT_EQ(history[1].author, "bob");
  EXPECT_EQ(history[1].wall_ms, kWall + 5);
  EXPECT_EQ(history[1].old_value, "1");
  EXPECT_EQ(history[1].new_value, "2");
  EXPECT_EQ(history[2].old_value, "2");
  EXPECT_EQ(history[2].new_value, std::nullopt);
  EXPECT_LT(history[0].version, history[1].version);
  EXPECT_TRUE(config.history("other").empty());
}

TEST(ConfigGroups, RollbackPutsThisHubsKeysBackAsTheyWereAtAVersionAsANewChange) {
  auto config = l1();
  changes(config.edit("orders", set({{"a", "1"}, {"b", "1"}}), "ops", kWall));
  const auto good = version_of(config, "orders");
  changes(config.edit("orders", set({{"a", "2"}, {"new", "x"}}), "ops", kWall));
  changes(config.edit("orders", {{"b", std::nullopt}}, "ops", kWall));
  const auto before_rollback = version_of(config, "orders");

  const auto records = changes(config.rollback("orders", good, "alice", kWall + 1));
  EXPECT_EQ(records.size(), 3u);  // a back to 1, b back, new removed
  const auto& served = config.served("orders")->entries;
  EXPECT_EQ(served.size(), 2u);
  EXPECT_EQ(served.at("a").value, "1");
  EXPECT_EQ(served.at("b").value, "1");
  EXPECT_GT(version_of(config, "orders"), before_rollback) << "a rollback is a change forward";
  EXPECT_EQ(config.history("orders").back().author, "alice");

  // Rolling back to where it stands changes nothing.
  EXPECT_TRUE(
      changes(config.rollback("orders", version_of(config, "orders"), "ops", kWall)).empty());
}

TEST(ConfigGroups, RollbackIsRefusedBeyondTheKeptHistoryToAFutureVersionOrForAGroupNeverSetHere) {
  auto config = l1({.history_per_group = 2});
  const auto first = set_k_repeatedly(config, 3).front();

  EXPECT_NE(refusal(config.rollback("orders", first - 1, "ops", kWall)).find("no longer kept"),
            std::string::npos);
  EXPECT_NE(refusal(config.rollback("orders", version_of(config, "orders") + 1, "ops", kWall))
                .find("no version"),
            std::string::npos);
  EXPECT_NE(refusal(config.rollback("other", 1, "ops", kWall)), "");
  // Within the kept history it works.
  EXPECT_EQ(changes(config.rollback("orders", first, "ops", kWall)).size(), 1u);
  EXPECT_EQ(value_of(config, "orders", "k"), "0");
}

// ---------------------------------------------------------------- restart

// What a store kept of a ConfigGroups: its own keys and its history.
std::vector<ConfigEntryRecord> stored_entries(const ConfigGroups& config, const std::string& group,
                                              const std::string& hub = "hub-dc1") {
  std::vector<ConfigEntryRecord> out;
  if (const auto* served = config.served(group))
    for (const auto& [key, entry] : served->entries)
      if (entry.origin.hub == hub) out.push_back({group, key, entry.value, entry.origin.version});
  return out;
}
std::vector<ConfigHistoryRecord> stored_history(const ConfigGroups& config,
                                                const std::string& group) {
  const auto& history = config.history(group);
  return {history.begin(), history.end()};
}

TEST(ConfigGroups, ARestoredGroupServesItsKeysWithTheirOriginUnderAVersionOfTheNewEpoch) {
  auto before = l1();
  changes(before.edit("orders", set({{"a", "1"}, {"b", std::string("\0\xff", 2)}}), "ops", kWall));
  const auto set_a = version_of(before, "orders");
  changes(before.edit("orders", set({{"b", "2"}}), "ops", kWall + 1));
  const auto old_version = version_of(before, "orders");

  ConfigGroups after({"hub-dc1", 1}, 8);
  after.restore("orders", stored_entries(before, "orders"), stored_history(before, "orders"));

  const auto* served = after.served("orders");
  ASSERT_NE(served, nullptr);
  EXPECT_EQ(served->version >> 40, 8u);
  EXPECT_EQ(served->entries.at("a").origin, (proto::ConfigOrigin{1, "hub-dc1", set_a}));
  EXPECT_EQ(served->entries.at("b").origin.version, old_version);
  EXPECT_EQ(served->entries.at("b").value, "2");
  EXPECT_EQ(after.update_for("orders", old_version)->kind, UpdateKind::kFull)
      << "a holder of the previous incarnation's version gets the group whole";
  EXPECT_EQ(stored_history(after, "orders"), stored_history(before, "orders"));
  // The limits count the restored keys: 1 + 1 and 1 + 1 bytes are taken.
  ConfigGroups tight({"hub-dc1", 1}, 8, {.max_group_bytes = 6});
  tight.restore("orders", stored_entries(before, "orders"), {});
  EXPECT_NE(refusal(tight.edit("orders", set({{"c", "12"}}), "ops", kWall)), "");
  EXPECT_EQ(changes(tight.edit("orders", set({{"c", "1"}}), "ops", kWall)).size(), 1u);
}

TEST(ConfigGroups, ARestoredGroupRollsBackToAVersionOfThePreviousIncarnation) {
  auto before = l1();
  changes(before.edit("orders", set({{"k", "good"}}), "ops", kWall));
  const auto good = version_of(before, "orders");
  changes(before.edit("orders", set({{"k", "bad"}, {"extra", "x"}}), "ops", kWall));

  ConfigGroups after({"hub-dc1", 1}, 8);
  after.restore("orders", stored_entries(before, "orders"), stored_history(before, "orders"));
  EXPECT_EQ(changes(after.rollback("orders", good, "alice", kWall)).size(), 2u);
  EXPECT_EQ(value_of(after, "orders", "k"), "good");
  EXPECT_EQ(value_of(after, "orders", "extra"), "");
  EXPECT_EQ(version_of(after, "orders") >> 40, 8u);
}

TEST(ConfigGroups, AGroupWhoseKeysWereAllRemovedBeforeARestartStillRollsBack) {
  auto before = l1();
  changes(before.edit("orders", set({{"k", "1"}}), "ops", kWall));
  const auto set_k = version_of(before, "orders");
  changes(before.edit("orders", {{"k", std::nullopt}}, "ops", kWall));

  ConfigGroups after({"hub-dc1", 1}, 8);
  after.restore("orders", {}, stored_history(before, "orders"));
  EXPECT_EQ(after.served("orders"), nullptr) << "nothing to serve";
  EXPECT_EQ(changes(after.rollback("orders", set_k, "ops", kWall)).size(), 1u);
  EXPECT_EQ(value_of(after, "orders", "k"), "1");
}

// A store hands over the last records of a group. All of them (fewer than the
// limit): a rollback reaches the version before the oldest. As many as the
// limit: the records before may have shared the oldest's version, so it
// reaches only that version. More: the oldest are dropped, as in memory.
TEST(ConfigGroups, ARestoredHistoryReachesBackToTheVersionBeforeItsOldestRecordAndNoFurther) {
  auto before = l1();
  const auto versions = set_k_repeatedly(before, 5);  // k = 0..4
  auto history = stored_history(before, "orders");
  const auto restored = [&](std::size_t limit, std::size_t records) {
    ConfigGroups after({"hub-dc1", 1}, 8, {.history_per_group = limit});
    after.restore("orders", stored_entries(before, "orders"),
                  {history.end() - static_cast<std::ptrdiff_t>(records), history.end()});
    return after;
  };

  auto all = restored(8, 3);  // the records of versions[2..4]; versions[1] before them
  EXPECT_EQ(changes(all.rollback("orders", versions[1], "ops", kWall)).size(), 1u);
  EXPECT_EQ(value_of(all, "orders", "k"), "1");
  auto refused = restored(8, 3);
  EXPECT_EQ(refusal(refused.rollback("orders", versions[1] - 1, "ops", kWall)),
            fmt::format("the history of group 'orders' before version {} is no longer kept",
                        versions[1]));

  auto full = restored(3, 3);
  EXPECT_NE(refusal(full.rollback("orders", versions[1], "ops", kWall)).find("no longer kept"),
            std::string::npos);
  EXPECT_EQ(changes(full.rollback("orders", versions[2], "ops", kWall)).size(), 1u);
  EXPECT_EQ(value_of(full, "orders", "k"), "2");

  auto cut = restored(2, 4);  // versions[1..4] given, the last 2 kept
  EXPECT_EQ(cut.history("orders").size(), 2u);
  EXPECT_NE(refusal(cut.rollback("orders", versions[1], "ops", kWall)).find("no longer kept"),
            std::string::npos);
  EXPECT_EQ(changes(cut.rollback("orders", versions[2], "ops", kWall)).size(), 1u);
  EXPECT_EQ(value_of(cut, "orders", "k"), "2");
}

}  // namespace
}  // namespace cascade::hub
