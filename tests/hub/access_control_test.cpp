// What each key may make a hub do (hub/access_rules.hpp, HubCore): every
// role against every message type, node ownership bound to the key that
// registered it (also across a restart), epochs within reason, reports
// signed by their key, operator commands by operators only, and what a proxy
// may vouch for. Each test replays an attack a hostile client made on a hub
// that trusted every packet (issue 12), and shows it refused.

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>

#include "cascade/common/clock.hpp"
#include "cascade/hub/access_rules.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::hub {
namespace {

using access::Principal;
using access::Role;
using access::ServiceScope;
using testing::beat;
using testing::beat_with_set;
using testing::digest;
using ::testing::HasSubstr;
using testing::reg;
using testing::use;

constexpr Duration kLease{6000};

Principal key(std::string name, Role role, std::vector<std::string> register_globs = {},
              std::vector<std::string> query_globs = {}) {
  return Principal{std::move(name), role, ServiceScope(std::move(register_globs)),
                   ServiceScope(std::move(query_globs))};
}

proto::Query query(const std::string& service, std::uint64_t id = 1) {
  proto::Query q;
  q.request_id = id;
  q.service.name = service;
  return q;
}

proto::FailureReport report(const std::string& service, const std::string& address,
                            const std::string& reporter) {
  proto::FailureSignal signal;
  signal.service.name = service;
  signal.address = address;
  signal.kind = proto::FailureKind::kTimeout;
  signal.reporter = reporter;
  return proto::FailureReport{9, {signal}, 0};
}

proto::AdminRequest eviction_protection_off() {
  proto::AdminRequest r;
  r.request_id = 5;
  r.op = proto::AdminOp::kEvictionProtection;
  r.actor = "mallory@laptop";
  r.enabled = false;
  return r;
}

proto::UpBeat hub_beat(const std::string& node, std::uint32_t tier,
                       std::vector<proto::Registration> regs) {
  auto b = beat_with_set(node, 1, std::move(regs));
  b.sender_tier = tier;
  return b;
}

// ---------------------------------------------------------------- the matrix

// One message of each kind, as a well-behaved sender of it would send it.
std::vector<std::pair<std::string, proto::Message>> one_of_each() {
  return {{"agent beat", beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")})},
          {"hub beat", hub_beat("l1-a", 1, {reg("svc", "i2", "10.0.0.2:80")})},
          {"query", query("svc")},
          {"deregister", proto::Deregister{"n1", 1, 2}},
          {"status", proto::StatusRequest{3}},
          {"services", proto::ServicesRequest{4}},
          {"report", report("svc", "10.0.0.1:80", "")},
          {"admin", eviction_protection_off()}};
}

struct RoleCase {
  Role role;
  std::set<std::string> allowed;
};

// Allowed: exactly these; every other kind is refused as forbidden.
const RoleCase kRoleCases[] = {
    {Role::kAgent, {"agent beat", "query", "deregister", "status", "services", "report"}},
    {Role::kHub, {"hub beat", "query", "deregister", "status", "services", "report"}},
    {Role::kProxy, {"query", "status", "services"}},  // the rest only on behalf of an agent
    {Role::kOperator, {"query", "status", "services", "report", "admin"}},
    {Role::kReader, {"query", "status", "services"}},
};

TEST(AccessRules, EveryRoleMaySendExactlyItsMessageTypes) {
  for (const auto& role_case : kRoleCases) {
    const auto principal = key("k", role_case.role);
    for (const auto& [kind, message] : one_of_each()) {
      const auto who = caller_of(&principal, message);
      ASSERT_TRUE(std::holds_alternative<Caller>(who));
      const auto refusal = check_message(std::get<Caller>(who), message, 2);
      const bool allowed = role_case.allowed.contains(kind);
      EXPECT_EQ(!refusal.has_value(), allowed)
          << access::to_string(role_case.role) << " sending " << kind;
      if (refusal) {
        EXPECT_EQ(refusal->code, proto::ErrorCode::kForbidden);
      }
    }
  }
}

TEST(AccessRules, WithoutKeysEveryMessageIsTakenAsItClaims) {
  for (const auto& [kind, message] : one_of_each()) {
    const auto who = caller_of(nullptr, message);
    ASSERT_TRUE(std::holds_alternative<Caller>(who)) << kind;
    EXPECT_FALSE(check_message(std::get<Caller>(who), message, 2)) << kind;
  }
}

TEST(AccessRules, ProxyActsAsTheAgentItVouchesForWithinItsOwnScopes) {
  const auto proxy = key("proxy-1", Role::kProxy, {"orders*"});
  auto b = beat_with_set("n1", 1, {reg("orders", "i1", "10.0.0.1:80")});
  b.on_behalf_of = "agent-7";
  const proto::Message in_scope = b;  // a Caller's name views the message: it must outlive it
  const auto who = caller_of(&proxy, in_scope);
  ASSERT_TRUE(std::holds_alternative<Caller>(who));
  EXPECT_EQ(std::get<Caller>(who).name, "agent-7");
  EXPECT_EQ(std::get<Caller>(who).role, Role::kAgent);
  EXPECT_FALSE(check_message(std::get<Caller>(who), in_scope, 1));

  b.registrations = {reg("payments", "i1", "10.0.0.1:80")};
  b.digest = digest(*b.registrations);
  const proto::Message out_of_scope = b;
  EXPECT_TRUE(check_message(std::get<Caller>(caller_of(&proxy, out_of_scope)), out_of_scope, 1))
      << "the proxy's register scope bounds its agents";
}

TEST(AccessRules, OnlyAProxyMayActOnBehalfOfAnotherKey) {
  for (const auto role : {Role::kAgent, Role::kHub, Role::kOperator, Role::kReader}) {
    const auto principal = key("k", role);
    auto q = query("svc");
    q.on_behalf_of = "victim";
    const auto who = caller_of(&principal, q);
    ASSERT_TRUE(std::holds_alternative<Refusal>(who)) << access::to_string(role);
    EXPECT_EQ(std::get<Refusal>(who).code, proto::ErrorCode::kForbidden);
  }
}

TEST(AccessRules, HubKeyMayClaimOnlyATierBelowAndInstancesOfItsOwnTier) {
  const auto l1 = key("l1-a", Role::kHub);
  const Caller caller{&l1, l1.name, l1.role};
  EXPECT_FALSE(check_message(caller, hub_beat("l1-a", 1, {}), 2));
  EXPECT_TRUE(check_message(caller, hub_beat("l1-a", 2, {}), 2)) << "its own tier";
  EXPECT_TRUE(check_message(caller, hub_beat("l1-a", 3, {}), 2)) << "a tier above";
  auto foreign = reg("svc", "i1", "10.0.0.1:80");
  foreign.instance.tier = 3;
  EXPECT_TRUE(check_message(caller, hub_beat("l1-a", 1, {foreign}), 2));
}

// ---------------------------------------------------------------- a hub with keys

class KeyedHubTest : public ::testing::Test {
 protected:
  static HubCoreConfig config() {
    HubCoreConfig c{"hub-a", 2, kLease};
    c.isolation.min_reporters = 2;
    c.isolation.min_reporters_for_volume = 2;
    c.isolation.max_isolated_share = 1.0;
    return c;
  }

  FakeClock clock;
  HubCore hub{config(), 1, clock.now()};
  Principal alice = key("alice", Role::kAgent);
  Principal bob = key("bob", Role::kAgent);
  Principal carol = key("carol", Role::kAgent);
  Principal ops = key("ops", Role::kOperator);
  Principal reader = key("dashboard", Role::kReader);
  Principal proxy = key("proxy-1", Role::kProxy);

  HandleResult send(const proto::Message& m, const Principal& k,
                    std::string_view address = "192.0.2.9") {
    return hub.handle(clock.now(), m, Peer{"", &k, address});
  }
  static proto::ErrorCode error_of(const HandleResult& r) {
    const auto* e = std::get_if<proto::ErrorReply>(&r.reply);
    return e ? e->code : proto::ErrorCode{0};
  }
  std::vector<proto::Instance> resolve(const std::string& service) {
    return std::get<proto::QueryReply>(hub.handle(clock.now(), query(service)).reply).instances;
  }
  std::string address_of(const std::string& service) {
    const auto list = resolve(service);
    return list.empty() ? "" : list.front().address;
  }
};

TEST_F(KeyedHubTest, BeatForAnotherKeysNodeIsRefusedAndItsInstanceStaysWhereItWas) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "10.0.0.1:80")};
  ASSERT_TRUE(
      std::holds_alternative<proto::DownBeat>(send(beat_with_set("n1", 1, set), alice).reply));

  auto hijack = beat_with_set("n1", 2, {reg("svc", "i1", "10.6.6.6:80")});
  EXPECT_EQ(error_of(send(hijack, bob)), proto::ErrorCode::kForbidden);
  hijack.epoch = 2;  // "a restart" changes nothing: the node is alice's
  EXPECT_EQ(error_of(send(hijack, bob)), proto::ErrorCode::kForbidden);
  EXPECT_EQ(address_of("svc"), "10.0.0.1:80");
  EXPECT_EQ(hub.counters().forbidden, 2u);

  clock.advance(kLease - Duration{1});
  EXPECT_TRUE(
      std::holds_alternative<proto::DownBeat>(send(beat("n1", 3, digest(set)), alice).reply));
  clock.advance(Duration{2});
  hub.tick(clock.now());
  EXPECT_EQ(address_of("svc"), "10.0.0.1:80") << "alice kept her lease";
}

TEST_F(KeyedHubTest, DeregisterForAnotherKeysNodeIsRefusedAndTheNodeStays) {
  const std::vector<proto::Registration> set{reg("svc", "i1", "10.0.0.1:80")};
  send(beat_with_set("n1", 1, set), alice);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(error_of(send(proto::Deregister{"n1", 1, 10}, bob)), proto::ErrorCode::kForbidden);
    clock.advance(Duration{2500});
    ASSERT_TRUE(
        std::holds_alternative<proto::DownBeat>(send(beat("n1", 2 + i, digest(set)), alice).reply))
        << "the victim is never refused";
  }
  EXPECT_EQ(resolve("svc").size(), 1u);
  EXPECT_TRUE(std::holds_alternative<proto::DeregisterAck>(
      send(proto::Deregister{"n1", 1, 20}, alice).reply));
  EXPECT_TRUE(resolve("svc").empty());
}

TEST_F(KeyedHubTest, NodeBindingSurvivesARestartOfTheHub) {
  store_test::TempDir dir;
  send(beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")}), alice);
  auto batch = hub.take_persist_batch();
  batch.wall_ms = clock.wall_ms();
  SqliteHubStore::open(dir.path(), sqlite::Synchronous::kNormal)->apply(batch);

  HubCore restarted{config(), 2, clock.now()};
  restarted.restore(SqliteHubStore::open(dir.path(), sqlite::Synchronous::kNormal)->load(),
                    clock.now());
  const auto hijack = beat_with_set("n1", 2, {reg("svc", "i1", "10.6.6.6:80")});
  EXPECT_EQ(error_of(restarted.handle(clock.now(), hijack, Peer{"", &bob})),
            proto::ErrorCode::kForbidden);
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(
      restarted.handle(clock.now(), hijack, Peer{"", &alice}).reply));
}

TEST_F(KeyedHubTest, RegistrationUseAndQueryOutsideTheKeysScopesAreRefused) {
  const auto scoped = key("orders-app", Role::kAgent, {"orders"}, {"users", "pay*"});
  EXPECT_EQ(error_of(send(beat_with_set("n1", 1, {reg("users", "i1", "10.0.0.1:80")}), scoped)),
            proto::ErrorCode::kForbidden);
  EXPECT_EQ(error_of(send(beat("n1", 1, 0, {use("orders", 0)}), scoped)),
            proto::ErrorCode::kForbidden);
  EXPECT_EQ(error_of(send(query("orders"), scoped)), proto::ErrorCode::kForbidden);
  EXPECT_FALSE(hub.knows_node("n1"));

  auto fine = beat_with_set("n1", 1, {reg("orders", "i1", "10.0.0.1:80")});
  fine.uses = {use("users", 0), use("payments", 0)};
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(send(fine, scoped).reply));
  EXPECT_TRUE(std::holds_alternative<proto::QueryReply>(send(query("payments"), scoped).reply));
}

TEST_F(KeyedHubTest, ServiceListShowsOnlyWhatTheKeyMayQuery) {
  send(beat_with_set("n1", 1,
                     {reg("orders", "i1", "10.0.0.1:80"), reg("users", "u1", "10.0.0.1:81")}),
       alice);
  const auto limited = key("limited", Role::kReader, {}, {"users"});
  const auto reply = std::get<proto::ServicesReply>(send(proto::ServicesRequest{1}, limited).reply);
  ASSERT_EQ(reply.services.size(), 1u);
  EXPECT_EQ(reply.services[0].service.name, "users");
  EXPECT_EQ(
      std::get<proto::ServicesReply>(send(proto::ServicesRequest{2}, reader).reply).services.size(),
      2u);
}

TEST_F(KeyedHubTest, AgentKeyDeclaringItselfALowerTierHubIsRefused) {
  auto fake = hub_beat("n1", 1, {reg("svc", "fake-1", "10.6.6.6:80")});
  EXPECT_EQ(error_of(send(fake, alice)), proto::ErrorCode::kForbidden);
  EXPECT_FALSE(hub.knows_node("n1"));
}

TEST_F(KeyedHubTest, OperatorCommandsNeedTheOperatorRoleAndEveryOneIsAuditedWithKeyAndPeer) {
  const auto refused = send(eviction_protection_off(), alice, "192.0.2.66");
  EXPECT_EQ(error_of(refused), proto::ErrorCode::kForbidden);
  EXPECT_TRUE(refused.durable) << "the refusal's audit record commits before the reply";
  const auto accepted = send(eviction_protection_off(), ops, "192.0.2.10");
  ASSERT_TRUE(std::holds_alternative<proto::AdminReply>(accepted.reply));
  EXPECT_TRUE(std::get<proto::AdminReply>(accepted.reply).ok);

  const auto audit = hub.take_persist_batch().audit;
  ASSERT_EQ(audit.size(), 2u);
  EXPECT_FALSE(audit[0].ok);
  EXPECT_EQ(audit[0].key, "alice");
  EXPECT_EQ(audit[0].peer, "192.0.2.66");
  EXPECT_EQ(audit[0].actor, "mallory@laptop") << "what the tool declared, kept beside the key";
  EXPECT_TRUE(audit[1].ok);
  EXPECT_EQ(audit[1].key, "ops");
  EXPECT_EQ(audit[1].peer, "192.0.2.10");
}

TEST_F(KeyedHubTest, IsolationQuorumCountsKeysNotTheReporterNamesTheyWrite) {
  send(beat_with_set("p1", 1, {reg("svc", "i1", "10.0.0.1:80"), reg("svc", "i2", "10.0.0.2:80")}),
       carol);
  for (int i = 0; i < 20; ++i)  // one key, pretending to be twenty callers
    send(report("svc", "10.0.0.1:80", "caller-" + std::to_string(i)), alice);
  EXPECT_EQ(hub.counters().isolations, 0u) << "one key alone isolates nothing";

  send(report("svc", "10.0.0.1:80", "alice"), bob);
  EXPECT_EQ(hub.counters().isolations, 1u) << "a second key makes the quorum";
}

TEST_F(KeyedHubTest, ProxyVouchedAgentOwnsItsNodeUnderItsOwnName) {
  auto via_proxy = beat_with_set("n1", 1, {reg("svc", "i1", "10.0.0.1:80")});
  via_proxy.on_behalf_of = "alice";
  ASSERT_TRUE(std::holds_alternative<proto::DownBeat>(send(via_proxy, proxy).reply));

  auto other = beat("n1", 2, via_proxy.digest);
  other.on_behalf_of = "bob";
  EXPECT_EQ(error_of(send(other, proxy)), proto::ErrorCode::kForbidden);
  EXPECT_EQ(error_of(send(beat("n1", 3, via_proxy.digest), proxy)), proto::ErrorCode::kForbidden)
      << "a proxy beats only on behalf of someone";
  EXPECT_TRUE(
      std::holds_alternative<proto::DownBeat>(send(beat("n1", 4, via_proxy.digest), alice).reply))
      << "alice, connected directly, is the same owner";
}

TEST_F(KeyedHubTest, LowerTierHubsUsesOutsideItsScopeGoUnansweredButItsBeatIsTaken) {
  send(beat_with_set("p1", 1,
                     {reg("orders", "o1", "10.0.0.1:80"), reg("payroll", "x1", "10.0.0.2:80")}),
       alice);
  const auto l1 = key("l1-a", Role::kHub, {}, {"orders"});
  auto b = hub_beat("l1-a", 1, {reg("web", "w1", "10.1.0.1:80")});
  b.uses = {use("orders", 0), use("payroll", 0)};
  const auto reply = send(b, l1);
  ASSERT_TRUE(std::holds_alternative<proto::DownBeat>(reply.reply))
      << "one consumer's use must not refuse the tier's whole aggregate";
  const auto& updates = std::get<proto::DownBeat>(reply.reply).updates;
  ASSERT_EQ(updates.size(), 1u);
  EXPECT_EQ(updates[0].service.name, "orders");
  EXPECT_EQ(hub.counters().forbidden, 1u);
  EXPECT_EQ(resolve("web").size(), 1u);
}

// ---------------------------------------------------------------- epochs (no keys needed)

class EpochTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubCore hub{HubCoreConfig{"hub-a", 1, kLease}, 1, clock.now()};
  const std::vector<proto::Registration> set{reg("svc", "i1", "10.0.0.1:80")};
  static constexpr std::uint64_t kStart = 1'700'000'000'000'000;  // µs, as agents make them

  proto::Message send(const proto::Message& m) { return hub.handle(clock.now(), m).reply; }
  std::string address() {
    const auto reply = std::get<proto::QueryReply>(send(query("svc")));
    return reply.instances.empty() ? "" : reply.instances.front().address;
  }
};

TEST_F(EpochTest, BeatWithAnEpochFarAheadIsRefusedAndTheRealAgentKeepsItsNode) {
  send(beat_with_set("n1", 1, set, kStart));
  auto forged = beat_with_set("n1", 1, {reg("svc", "i1", "10.6.6.6:80")}, std::uint64_t{1} << 63);
  const auto reply = send(forged);
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(reply));
  EXPECT_THAT(std::get<proto::ErrorReply>(reply).message, HasSubstr("too far ahead"));
  EXPECT_EQ(hub.counters().epoch_jumps, 1u);
  EXPECT_TRUE(
      std::holds_alternative<proto::DownBeat>(send(beat("n1", 2, digest(set), {}, kStart))));
  EXPECT_EQ(address(), "10.0.0.1:80");
}

TEST_F(EpochTest, AgentRestartedAnHourLaterIsAdmittedWithItsNewEpoch) {
  send(beat_with_set("n1", 1, set, kStart));
  for (int i = 0; i < 600; ++i) {  // beating for an hour
    clock.advance(Duration{6000});
    send(beat("n1", 2 + i, digest(set), {}, kStart));
  }
  const std::uint64_t an_hour = 3'600'000'000;
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(
      send(beat_with_set("n1", 1, set, kStart + an_hour + 5'000'000))));
}

TEST_F(EpochTest, DeregisterWithAForgedEpochNeitherRemovesTheNodeNorLocksItOut) {
  send(beat_with_set("n1", 1, set, kStart));
  EXPECT_TRUE(std::holds_alternative<proto::ErrorReply>(
      send(proto::Deregister{"n1", std::uint64_t{1} << 63, 9})));
  EXPECT_EQ(address(), "10.0.0.1:80");

  // Unknown node: nothing is remembered, so its first beat is admitted.
  EXPECT_TRUE(std::holds_alternative<proto::DeregisterAck>(
      send(proto::Deregister{"n2", std::numeric_limits<std::uint64_t>::max(), 1})));
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(
      send(beat_with_set("n2", 1, {reg("other", "j1", "10.0.0.2:80")}, kStart))));
}

}  // namespace
}  // namespace cascade::hub
