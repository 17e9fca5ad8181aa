// Consul's TTL checks as a state machine (agent/api/ttl_checks.hpp), on a
// FakeClock: nothing sleeps, time moves when the test says.

#include "cascade/agent/api/ttl_checks.hpp"

#include <gtest/gtest.h>

namespace cascade::agent::api {
namespace {

using namespace std::chrono_literals;

TtlCheckSpec ttl_check(std::string id, Duration ttl) {
  TtlCheckSpec spec;
  spec.id = std::move(id);
  spec.ttl = ttl;
  return spec;
}

class TtlChecksTest : public ::testing::Test {
 protected:
  MonoTime now() const { return clock_.now(); }
  FakeClock clock_;
  TtlChecks checks_;
};

TEST_F(TtlChecksTest, ANewCheckIsCriticalUntilItsFirstReport) {
  checks_.set("web-1", {ttl_check("service:web-1", 10s)}, now());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kCritical);
  ASSERT_NE(checks_.report("service:web-1", CheckStatus::kPassing, "ok", now()), nullptr);
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kPassing);
  EXPECT_EQ(checks_.find("service:web-1")->output, "ok");
}

TEST_F(TtlChecksTest, AServiceWithoutChecksIsPassing) {
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kPassing);
  checks_.set("web-1", {}, now());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kPassing);
}

TEST_F(TtlChecksTest, AnInitialPassingStatusHoldsUntilTheTtlRunsOut) {
  auto spec = ttl_check("c", 10s);
  spec.initial = CheckStatus::kPassing;
  checks_.set("web-1", {spec}, now());
  clock_.advance(9'999ms);
  EXPECT_TRUE(checks_.expire(now()).changed.empty());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kPassing);
  clock_.advance(1ms);
  EXPECT_EQ(checks_.expire(now()).changed, std::vector<std::string>{"web-1"});
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kCritical);
  EXPECT_EQ(checks_.find("c")->output, "TTL expired");
}

TEST_F(TtlChecksTest, EveryReportRestartsTheTtl) {
  checks_.set("web-1", {ttl_check("c", 10s)}, now());
  clock_.advance(8s);
  checks_.report("c", CheckStatus::kPassing, "", now());
  clock_.advance(8s);  // 16 s after registering, 8 s after the report
  EXPECT_TRUE(checks_.expire(now()).changed.empty());
  checks_.report("c", CheckStatus::kWarning, "slow", now());
  clock_.advance(9s);
  EXPECT_TRUE(checks_.expire(now()).changed.empty());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kWarning);
  clock_.advance(1s);
  EXPECT_EQ(checks_.expire(now()).changed, std::vector<std::string>{"web-1"});
}

TEST_F(TtlChecksTest, AServiceIsAsHealthyAsItsWorstCheck) {
  checks_.set("web-1", {ttl_check("a", 10s), ttl_check("b", 10s)}, now());
  checks_.report("a", CheckStatus::kPassing, "", now());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kCritical) << "b was never reported";
  checks_.report("b", CheckStatus::kWarning, "", now());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kWarning);
  checks_.report("b", CheckStatus::kPassing, "", now());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kPassing);
}

TEST_F(TtlChecksTest, ExpiryNamesEachServiceWhoseStatusChangedOnce) {
  checks_.set("web-1", {ttl_check("a", 1s), ttl_check("b", 1s)}, now());
  checks_.set("web-2", {ttl_check("c", 1s)}, now());
  checks_.set("web-3", {ttl_check("d", 1s)}, now());
  for (const auto* id : {"a", "b", "c"})
    checks_.report(id, CheckStatus::kPassing, "", now());
  clock_.advance(1s);
  EXPECT_EQ(checks_.expire(now()).changed, (std::vector<std::string>{"web-1", "web-2"}))
      << "web-3's check was critical already";
  EXPECT_TRUE(checks_.expire(now()).changed.empty()) << "nothing changes twice";
}

TEST_F(TtlChecksTest, ANextDeadlineIsTheNearestTtlOfACheckNotCriticalYet) {
  EXPECT_EQ(checks_.next_deadline(), std::nullopt);
  checks_.set("web-1", {ttl_check("a", 5s), ttl_check("b", 3s)}, now());
  EXPECT_EQ(checks_.next_deadline(), std::nullopt) << "both are critical: nothing to expire";
  const auto start = now();
  checks_.report("a", CheckStatus::kPassing, "", now());
  EXPECT_EQ(checks_.next_deadline(), start + 5s);
  clock_.advance(1s);
  checks_.report("b", CheckStatus::kPassing, "", now());
  EXPECT_EQ(checks_.next_deadline(), start + 4s);
}

TEST_F(TtlChecksTest, RegisteringAgainKeepsTheStateOfTheChecksItStillDefines) {
  checks_.set("web-1", {ttl_check("a", 10s), ttl_check("b", 10s)}, now());
  checks_.report("a", CheckStatus::kPassing, "fine", now());
  clock_.advance(5s);
  checks_.set("web-1", {ttl_check("a", 10s)}, now());
  EXPECT_EQ(checks_.find("b"), nullptr) << "a check no longer defined is dropped";
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kPassing);
  EXPECT_EQ(checks_.find("a")->output, "fine");
  clock_.advance(5s);
  EXPECT_EQ(checks_.expire(now()).changed, std::vector<std::string>{"web-1"})
      << "the TTL runs from the last report, not from the second registration";
}

TEST_F(TtlChecksTest, RegisteringAgainWithAStatusSetsItAndRestartsTheTtl) {
  checks_.set("web-1", {ttl_check("a", 10s)}, now());
  checks_.report("a", CheckStatus::kPassing, "", now());
  clock_.advance(5s);
  auto spec = ttl_check("a", 10s);
  spec.initial = CheckStatus::kWarning;
  checks_.set("web-1", {spec}, now());
  EXPECT_EQ(checks_.status_of("web-1"), CheckStatus::kWarning);
  clock_.advance(9s);
  EXPECT_TRUE(checks_.expire(now()).changed.empty());
}

TEST_F(TtlChecksTest, AServiceCriticalForLongerThanDeregisterAfterIsDueForDeregistration) {
  auto spec = ttl_check("a", 1s);
  spec.initial = CheckStatus::kPassing;
  spec.deregister_after = 30s;
  checks_.set("web-1", {spec}, now());
  const auto start = now();
  clock_.advance(1s);
  EXPECT_TRUE(checks_.expire(now()).to_deregister.empty()) << "critical only now";
  EXPECT_EQ(checks_.next_deadline(), start + 31s);
  clock_.advance(29'999ms);
  EXPECT_TRUE(checks_.expire(now()).to_deregister.empty());
  clock_.advance(1ms);
  EXPECT_EQ(checks_.expire(now()).to_deregister, std::vector<std::string>{"web-1"});
}

TEST_F(TtlChecksTest, AReportThatIsNotCriticalStopsTheWayToDeregistration) {
  auto spec = ttl_check("a", 60s);
  spec.deregister_after = 30s;
  checks_.set("web-1", {spec}, now());
  clock_.advance(20s);
  checks_.report("a", CheckStatus::kPassing, "", now());
  clock_.advance(20s);
  EXPECT_TRUE(checks_.expire(now()).to_deregister.empty());
  checks_.report("a", CheckStatus::kCritical, "down", now());
  clock_.advance(29s);
  EXPECT_TRUE(checks_.expire(now()).to_deregister.empty()) << "critical for 29 s only";
  checks_.report("a", CheckStatus::kCritical, "still down", now());
  clock_.advance(1s);
  EXPECT_EQ(checks_.expire(now()).to_deregister, std::vector<std::string>{"web-1"})
      << "critical since the first critical report, however many followed";
}

TEST_F(TtlChecksTest, AReportOfAnUnknownCheckChangesNothing) {
  checks_.set("web-1", {ttl_check("a", 1s)}, now());
  EXPECT_EQ(checks_.report("b", CheckStatus::kPassing, "", now()), nullptr);
  EXPECT_EQ(checks_.owner_of("a"), "web-1");
  EXPECT_EQ(checks_.owner_of("b"), std::nullopt);
  checks_.drop("web-1");
  EXPECT_EQ(checks_.report("a", CheckStatus::kPassing, "", now()), nullptr);
  EXPECT_TRUE(checks_.all().empty());
}

TEST(CheckStatusNames, AreConsulsAndParseBack) {
  for (const auto status : {CheckStatus::kPassing, CheckStatus::kWarning, CheckStatus::kCritical})
    EXPECT_EQ(parse_check_status(to_string(status)), status);
  EXPECT_EQ(to_string(CheckStatus::kWarning), "warning");
  EXPECT_EQ(parse_check_status("PASSING"), std::nullopt) << "Consul's statuses are lower case";
  EXPECT_EQ(worst(CheckStatus::kWarning, CheckStatus::kPassing), CheckStatus::kWarning);
  EXPECT_EQ(worst(CheckStatus::kWarning, CheckStatus::kCritical), CheckStatus::kCritical);
}

}  // namespace
}  // namespace cascade::agent::api
