// A subscriber's copy of its config groups (common/config_copy.hpp): what its
// beats declare, and how replies and pushes change it.

#include "cascade/common/config_copy.hpp"

#include <gtest/gtest.h>

namespace cascade::proto {
namespace {

constexpr Duration kTtl{60'000};
const MonoTime kT0{Duration{1'000}};

ConfigEntry entry(const std::string& key, const std::string& value, std::uint32_t tier = 1) {
  return {key, value, {tier, tier == 1 ? "hub-l1" : "hub-l2", 5}};
}

ConfigUpdate full(const std::string& group, std::uint64_t version,
                  std::vector<ConfigEntry> upserts) {
  return {group, 0, version, UpdateKind::kFull, std::move(upserts), {}};
}

ConfigUpdate delta(const std::string& group, std::uint64_t from, std::uint64_t version,
                   std::vector<ConfigEntry> upserts, std::vector<std::string> removed = {}) {
  return {group, from, version, UpdateKind::kDelta, std::move(upserts), std::move(removed)};
}

TEST(ConfigCopy, AFollowedGroupIsDeclaredAtVersionZeroUntilTheHubAnswers) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 0}}));
  EXPECT_FALSE(copy.find("orders")->received);
  const auto applied = copy.apply(kT0, {full("orders", 7, {entry("a", "1")})});
  EXPECT_EQ(applied.changed, std::vector<std::string>{"orders"});
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 7}}));
  EXPECT_EQ(copy.find("orders")->entries.at("a").value, "1");
}

TEST(ConfigCopy, ADeltaAppliesOnlyOnTheVersionHeldElseTheWholeGroupIsAskedFor) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.apply(kT0, {full("orders", 7, {entry("a", "1"), entry("b", "2")})});
  auto applied = copy.apply(kT0, {delta("orders", 7, 8, {entry("a", "9")}, {"b"})});
  EXPECT_EQ(applied.changed, std::vector<std::string>{"orders"});
  EXPECT_FALSE(applied.missed_base);
  EXPECT_EQ(copy.find("orders")->entries.size(), 1u);
  EXPECT_EQ(copy.find("orders")->entries.at("a").value, "9");

  applied = copy.apply(kT0, {delta("orders", 10, 11, {entry("c", "3")})});
  EXPECT_TRUE(applied.missed_base);
  EXPECT_TRUE(applied.changed.empty());
  EXPECT_FALSE(copy.find("orders")->entries.contains("c"))
      << "a delta on another base is not applied";
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 0}})) << "asks for the whole group";
  copy.apply(kT0, {full("orders", 11, {entry("a", "9"), entry("c", "3")})});
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 11}}));
}

TEST(ConfigCopy, GoneEmptiesTheGroupAndAnUnchangedFullChangesNothing) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.apply(kT0, {full("orders", 7, {entry("a", "1")})});
  EXPECT_TRUE(copy.apply(kT0, {full("orders", 9, {entry("a", "1")})}).changed.empty());
  EXPECT_EQ(copy.find("orders")->version, 9u);
  const auto applied = copy.apply(kT0, {{"orders", 9, 12, UpdateKind::kGone, {}, {}}});
  EXPECT_EQ(applied.changed, std::vector<std::string>{"orders"});
  EXPECT_TRUE(copy.find("orders")->gone);
  EXPECT_TRUE(copy.find("orders")->entries.empty());
}

TEST(ConfigCopy, AGroupGoneBecauseItsKeysWereRemovedComesBackWithADelta) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.apply(kT0, {full("orders", 7, {entry("a", "1")})});
  copy.apply(kT0, {delta("orders", 7, 8, {}, {"a"})});
  EXPECT_TRUE(copy.find("orders")->gone) << "every key removed";
  const auto applied = copy.apply(kT0, {delta("orders", 8, 9, {entry("a", "2")})});
  EXPECT_EQ(applied.changed, std::vector<std::string>{"orders"});
  EXPECT_FALSE(copy.find("orders")->gone);
  EXPECT_EQ(copy.find("orders")->entries.at("a").value, "2");
}

TEST(ConfigCopy, ADeltaToTheVersionAlreadyHeldIsAPushThatCrossedTheBeat) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.apply(kT0, {full("orders", 7, {entry("a", "1")})});
  copy.apply(kT0, {delta("orders", 7, 8, {entry("a", "2")})});  // the push
  const auto applied = copy.apply(kT0 + Duration{5}, {delta("orders", 7, 8, {entry("a", "2")})});
  EXPECT_FALSE(applied.missed_base) << "no need for the whole group";
  EXPECT_TRUE(applied.changed.empty());
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 8}}));
  EXPECT_EQ(copy.find("orders")->confirmed_at, kT0 + Duration{5});
}

TEST(ConfigCopy, UpdatesForGroupsNoLongerFollowedAreIgnored) {
  ConfigCopy copy(kTtl);
  EXPECT_TRUE(copy.apply(kT0, {full("orders", 7, {entry("a", "1")})}).changed.empty());
  EXPECT_EQ(copy.size(), 0u);
}

TEST(ConfigCopy, UnusedGroupsExpireAfterTheTtlButPinnedOnesStay) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.pin(kT0, "switches");
  copy.use(kT0 + Duration{30'000}, "billing");
  EXPECT_EQ(copy.expire(kT0 + kTtl), std::vector<std::string>{"orders"});
  EXPECT_TRUE(copy.follows("switches"));
  EXPECT_TRUE(copy.follows("billing"));
  EXPECT_EQ(copy.expire(kT0 + kTtl + Duration{30'000}), std::vector<std::string>{"billing"});
  EXPECT_TRUE(copy.follows("switches"));
}

TEST(ConfigCopy, AReplyConfirmsTheGroupsItsBeatDeclaredAtTheVersionHeld) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.apply(kT0, {full("orders", 7, {entry("a", "1")})});
  const MonoTime later = kT0 + Duration{5'000};
  copy.confirm(later, {{"orders", 6}});
  EXPECT_EQ(copy.find("orders")->confirmed_at, kT0) << "declared another version";
  copy.confirm(later, copy.uses());
  EXPECT_EQ(copy.find("orders")->confirmed_at, later);
}

TEST(ConfigCopy, ARestoredGroupServesItsValuesButAsksForTheWholeGroup) {
  ConfigCopy copy(kTtl);
  copy.restore(kT0, "orders", 7, {{"a", entry("a", "1")}});
  EXPECT_EQ(copy.find("orders")->entries.at("a").value, "1");
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 0}}));
}

TEST(ConfigCopy, DistrustedVersionsAreDeclaredAsZeroAndTheValuesKept) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.apply(kT0, {full("orders", 7, {entry("a", "1")})});
  copy.distrust();  // another hub answers from now on
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 0}}));
  EXPECT_EQ(copy.find("orders")->entries.at("a").value, "1");
  EXPECT_TRUE(copy.apply(kT0, {delta("orders", 7, 8, {entry("a", "2")})}).missed_base)
      << "a delta on the other hub's version does not apply";
  copy.apply(kT0, {full("orders", 31, {entry("a", "2")})});
  EXPECT_EQ(copy.uses(), (std::vector<ConfigUse>{{"orders", 31}}));
}

TEST(ConfigCopy, AGroupRemembersWhenItWasFirstFollowed) {
  ConfigCopy copy(kTtl);
  copy.use(kT0, "orders");
  copy.use(kT0 + Duration{500}, "orders");
  EXPECT_EQ(copy.find("orders")->followed_since, kT0);
  EXPECT_EQ(copy.find("orders")->last_used, kT0 + Duration{500});
}

TEST(ConfigCopy, ABeatDeclaresAtMostTheBoundMostRecentlyUsedFirst) {
  ConfigCopy copy(kTtl);
  for (std::size_t i = 0; i <= kMaxConfigUsesPerBeat; ++i)
    copy.use(kT0 + Duration{static_cast<std::int64_t>(i)}, "g" + std::to_string(10000 + i));
  const auto uses = copy.uses();
  ASSERT_EQ(uses.size(), kMaxConfigUsesPerBeat);
  EXPECT_EQ(uses.front().group, "g10001") << "the least recently used is left out";
}

}  // namespace
}  // namespace cascade::proto
