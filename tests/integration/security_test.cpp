// Issue 12, authorisation: the attacks, made with keys the hub knows
// by a client written from schemas/protocol-v1.md (HubProbe as that key),
// against the real hub, agents and cascadectl. Every attack is refused while
// a legitimate agent (a real cascade-agent with its own key) keeps its lease
// and stays listed at its own address for longer than a lease. On a hub that
// took every message as it came, each of these tests fails.
#include <gmock/gmock.h>

#include <csignal>
#include <functional>
#include <memory>

#include "cascade/common/sqlite_db.hpp"
#include "cascade/tests/integration/keyed_cluster.hpp"

namespace cascade::integration {
namespace {

// The victim: a real agent, key "web", node "web-1", one instance. Tests
// register made-up addresses only; hubs run with liveness probes off.
const std::string kService = "web";
const std::string kVictimNode = "web-1";
const std::string kVictimAddress = "10.0.0.1:8080";
const std::string kVictimRegistration = kService + "=" + kVictimAddress;
// Where an attacker would like the victim's traffic to go.
const std::string kAttackerAddress = "10.6.6.6:666";
// The attacker repeated its Deregister every 2.5 beats.
constexpr Millis kAttackInterval{kBeat.count() * 5 / 2};
// Long enough that a lease runs out if a refusal were not one.
constexpr Millis kAttackDuration = 3 * kLease;

// An agent's epoch is its start time in µs (agent/client.cpp): "now" is a
// newer incarnation than the victim's, a plausible restart, not 2^63.
std::uint64_t plausible_new_epoch() {
  return static_cast<std::uint64_t>(std::chrono::duration_cast<std::chrono::microseconds>(
                                        std::chrono::system_clock::now().time_since_epoch())
                                        .count());
}

proto::Registration registration(const std::string& service, const std::string& address) {
  proto::Registration r;
  r.service.name = service;
  r.instance.id = address;  // as cascade-agent names an instance without an id
  r.instance.address = address;
  return r;
}

// A beat for `node` carrying a full set of `registrations`.
proto::UpBeat beat_for(const std::string& node, std::vector<proto::Registration> registrations,
                       std::uint32_t sender_tier = 0) {
  proto::UpBeat beat;
  beat.node_id = node;
  beat.epoch = plausible_new_epoch();
  beat.seq = 1;
  beat.registrations = std::move(registrations);
  beat.sender_tier = sender_tier;
  return beat;
}

proto::Deregister deregister(const std::string& node) {
  proto::Deregister d;
  d.node_id = node;
  d.epoch = plausible_new_epoch();
  d.seq = 1;
  return d;
}

proto::Query query_for(const std::string& service) {
  proto::Query q;
  q.node_id = "attacker";
  q.service.name = service;
  return q;
}

bool is_error(const std::optional<proto::Message>& reply, proto::ErrorCode code) {
  const auto* error = reply ? std::get_if<proto::ErrorReply>(&*reply) : nullptr;
  return error != nullptr && error->code == code;
}

bool is_forbidden(const std::optional<proto::Message>& reply) {
  return is_error(reply, proto::ErrorCode::kForbidden);
}

// One row of admin_audit (hub/sqlite_store.hpp).
struct AuditRow {
  std::string op;
  std::string actor;
  std::string key_name;
  std::string peer;
  bool ok = false;
};

// Read with its own connection, as an operator's sqlite3 shell would while
// the hub runs.
std::vector<AuditRow> audit_rows(const std::filesystem::path& data) {
  sqlite::Db db(data / "hub.db", {});
  sqlite::Statement select(db,
                           "SELECT op, actor, key_name, peer, ok FROM admin_audit ORDER BY rowid");
  std::vector<AuditRow> rows;
  while (select.step())
    rows.push_back({select.column_text(0), select.column_text(1), select.column_text(2),
                    select.column_text(3), select.column_int64(4) != 0});
  return rows;
}

class IntegrationSecurity : public KeyedClusterTest {
 protected:
  void SetUp() override {
    // mallory and bob: agent keys of attackers (bob a second one).
    for (const char* name : {"hub", "web", "mallory", "bob", "ops", "reader"})
      keygen(name);
  }

  // A keyed hub that knows the victim's key, an attacker's agent key
  // (mallory), an operator, a reader and `more` lines; the victim registered
  // and listed; the reader's probe ready.
  RunningHub start_with_victim(const std::vector<std::string>& more = {}, HubOptions options = {}) {
    std::vector<std::string> lines = {"web agent", "mallory agent", "bob agent", "ops operator",
                                      "reader reader"};
    lines.insert(lines.end(), more.begin(), more.end());
    authorize(lines);
    auto hub = start_keyed_hub(options);
    victim_ = &start_keyed_provider(hub.endpoint, "web", kVictimNode, kVictimRegistration);
    reader_ = probe_as("reader", hub.endpoint);
    EXPECT_TRUE(wait_until_listed(*reader_, kService, kVictimAddress));
    return hub;
  }

  // The reader sees the victim's service, with the victim's instance at its
  // own address and nothing else.
  bool victim_listed_alone() {
    const auto reply = reader_->query(kService, 1s);
    return reply && reply->instances.size() == 1 && reply->instances[0].address == kVictimAddress;
  }

  // Runs `attack` every kAttackInterval for kAttackDuration; `attack` says
  // whether the hub refused as it should. Expects every attack refused and
  // the victim listed alone at its address all along.
  void expect_refused_while_victim_stays(const std::function<bool()>& attack) {
    int attacks = 0;
    int refused = 0;
    auto next_attack = SteadyClock::now();
    const bool held = holds_for(
        [&] {
          if (SteadyClock::now() >= next_attack) {
            next_attack += kAttackInterval;
            ++attacks;
            refused += attack() ? 1 : 0;
          }
          return victim_listed_alone();
        },
        kAttackDuration);
    EXPECT_TRUE(held) << "the victim was not listed alone at " << kVictimAddress
                      << " during the attack";
    EXPECT_GE(attacks, 3);
    EXPECT_EQ(refused, attacks);
  }

  Process* victim_ = nullptr;
  std::unique_ptr<HubProbe> reader_;
};

TEST_F(IntegrationSecurity, UnknownKeyGetsNoReplyAndIsCountedWhileAgentsKeepTheirLeases) {
  const auto hub = start_with_victim();
  keygen("stranger");  // never authorised
  auto stranger = probe_as("stranger", hub.endpoint);
  expect_refused_while_victim_stays([&] {
    const auto beat = stranger->exchange(
        beat_for(kVictimNode, {registration(kService, kAttackerAddress)}), Millis{200});
    const auto status = stranger->status(Millis{200});
    return !beat && !status;
  });
  const auto status = probe_as("ops", hub.endpoint)->status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_THAT(counter(*status, "zap_refused"), ::testing::Optional(::testing::Ge(1u)));
}

TEST_F(IntegrationSecurity, AgentKeyBeatingOrDeregisteringAnotherKeysNodeIsForbidden) {
  const auto hub = start_with_victim();
  auto mallory = probe_as("mallory", hub.endpoint);
  expect_refused_while_victim_stays([&] {
    const auto beat =
        mallory->exchange(beat_for(kVictimNode, {registration(kService, kAttackerAddress)}), 1s);
    const auto gone = mallory->exchange(deregister(kVictimNode), 1s);
    return is_forbidden(beat) && is_forbidden(gone);
  });
  EXPECT_THAT(victim_->err(), ::testing::Not(::testing::HasSubstr("forbidden")))
      << "the victim itself was never refused";
}

TEST_F(IntegrationSecurity, AgentKeyIsForbiddenOutsideItsScopesAndServedInside) {
  keygen("shop");
  const auto hub = start_with_victim({"shop agent register=orders-* query=users"});
  auto shop = probe_as("shop", hub.endpoint);
  expect_refused_while_victim_stays([&] {
    // Registering into the victim's service, or just looking at it.
    const auto beat =
        shop->exchange(beat_for("shop-1", {registration(kService, kAttackerAddress)}), 1s);
    const auto looked = shop->request(query_for(kService), 1s);
    return is_forbidden(beat) && is_forbidden(looked);
  });
  const auto inside =
      shop->exchange(beat_for("shop-2", {registration("orders-eu", "10.0.0.5:80")}), 1s);
  ASSERT_TRUE(inside);
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(*inside));
  EXPECT_TRUE(is_listed(*reader_, "orders-eu", "10.0.0.5:80"));
  const auto users = shop->request(query_for("users"), 1s);
  ASSERT_TRUE(users);
  EXPECT_TRUE(std::holds_alternative<proto::QueryReply>(*users));
}

TEST_F(IntegrationSecurity, AgentKeyClaimingToBeALowerTierHubIsForbidden) {
  // A tier-2 hub, where a tier-1 claim is plausible: only the key's role
  // tells it is not a hub.
  const auto hub = start_with_victim({}, {.extra = {"--tier", "2"}});
  std::vector<proto::Registration> fakes;
  for (int i = 0; i < 500; ++i)
    fakes.push_back(registration(
        kService, "10.9." + std::to_string(i / 250) + "." + std::to_string(i % 250) + ":80"));
  auto mallory = probe_as("mallory", hub.endpoint);
  expect_refused_while_victim_stays(
      [&] { return is_forbidden(mallory->exchange(beat_for("fake-hub", fakes, 1), 1s)); });
}

TEST_F(IntegrationSecurity, AgentKeyRunningOperatorCommandsIsForbiddenAndAudited) {
  const auto hub = start_with_victim();
  const auto protection_off =
      ctl_as("mallory", hub, {"eviction-protection", "off", "--actor", "root@ops-host"});
  EXPECT_TRUE(protection_off.status.exited_with(kExitForbidden))
      << protection_off.status.describe() << protection_off.err;
  const auto out_of_service =
      ctl_as("mallory", hub, {"mark-out-of-service", kService, kVictimAddress});
  EXPECT_TRUE(out_of_service.status.exited_with(kExitForbidden))
      << out_of_service.status.describe() << out_of_service.err;

  // Nothing changed: protection on, the victim up and listed past a lease.
  const auto status = reader_->status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_TRUE(status->eviction_protection);
  EXPECT_TRUE(holds_for(
      [&] {
        const auto reply = reader_->query(kService, 1s);
        return victim_listed_alone() && reply &&
               reply->instances[0].status == proto::InstanceStatus::kUp;
      },
      kLease + kBeat));

  const auto by_operator = ctl_as("ops", hub, {"mark-out-of-service", kService, kVictimAddress});
  EXPECT_TRUE(by_operator.status.exited_with(0))
      << by_operator.status.describe() << by_operator.err;
  EXPECT_TRUE(poll_until(
      [&] {
        const auto reply = reader_->query(kService, 1s);
        return reply && reply->instances.size() == 1 &&
               reply->instances[0].status == proto::InstanceStatus::kOutOfService;
      },
      kPatience));

  // The audit log is written with the hub's next flush.
  std::vector<AuditRow> rows;
  ASSERT_TRUE(poll_until(
      [&] {
        rows = audit_rows(hub.data);
        return rows.size() >= 3;
      },
      kPatience));
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].op, "eviction_protection");
  EXPECT_EQ(rows[0].key_name, "mallory") << "the key, whatever actor the tool declared";
  EXPECT_EQ(rows[0].actor, "root@ops-host");
  EXPECT_FALSE(rows[0].ok);
  EXPECT_EQ(rows[1].key_name, "mallory");
  EXPECT_FALSE(rows[1].ok);
  EXPECT_EQ(rows[2].op, "mark_out_of_service");
  EXPECT_EQ(rows[2].key_name, "ops");
  EXPECT_TRUE(rows[2].ok);
  for (const auto& row : rows)
    EXPECT_THAT(row.peer, ::testing::StartsWith("127.0.0.1"));
}

TEST_F(IntegrationSecurity, FailureReportsFromOneKeyDoNotIsolateButTwoKeysDo) {
  const auto hub = start_with_victim();
  // A second instance: the isolation cap (half of a service's instances,
  // rounded down) isolates none of a service of one.
  start_keyed_provider(hub.endpoint, "web", "web-2", kService + "=10.0.0.2:8080");
  ASSERT_TRUE(wait_until_listed(*reader_, kService, "10.0.0.2:8080"));
  const auto victim_health = [&] {
    const auto reply = reader_->query(kService, 1s);
    if (reply)
      for (const auto& in : reply->instances)
        if (in.address == kVictimAddress) return in.health;
    return proto::Health::kUnconfirmed;  // not listed at all: neither ok nor isolated
  };
  const auto report_as = [&](const std::string& key, const std::string& reporter) {
    return ctl_as(key, hub,
                  {"report-failure", kService, kVictimAddress, "--kind", "timeout", "--reporter",
                   reporter, "--count", "10"});
  };
  // Many reports, many callers named: all one key.
  for (const char* reporter : {"caller-a", "caller-b", "caller-c", "caller-d"}) {
    const auto sent = report_as("mallory", reporter);
    EXPECT_TRUE(sent.status.exited_with(0)) << sent.status.describe() << sent.err;
  }
  EXPECT_TRUE(holds_for([&] { return victim_health() == proto::Health::kOk; }, kLease + kBeat));

  const auto second = report_as("bob", "caller-e");
  EXPECT_TRUE(second.status.exited_with(0)) << second.status.describe() << second.err;
  EXPECT_TRUE(poll_until([&] { return victim_health() == proto::Health::kIsolated; }, kPatience))
      << "two keys are a quorum";
}

TEST_F(IntegrationSecurity, RotatedKeyKeepsItsNodeAndTheRemovedKeyIsRefused) {
  keygen("web-b");  // the new key of the name "web"
  const auto hub = start_with_victim();
  // A connection still using the old key once it is removed.
  auto old_key = probe_as("web", hub.endpoint);
  ASSERT_TRUE(old_key->status(kPatience));

  authorize_keys({{"web", "web agent"},
                  {"web-b", "web agent"},
                  {"ops", "ops operator"},
                  {"reader", "reader reader"}});
  const auto added = ctl_as("ops", hub, {"reload-keys"});
  ASSERT_TRUE(added.status.exited_with(0)) << added.err;

  // The agent restarts with the new key and the same node id; the old
  // incarnation's lease bridges the restart.
  victim_->signal(SIGKILL);
  ASSERT_TRUE(victim_->wait_for(kPatience));
  auto& rotated = start_keyed_provider(hub.endpoint, "web-b", kVictimNode, kVictimRegistration);
  EXPECT_TRUE(holds_for([&] { return victim_listed_alone(); }, 3 * kLease))
      << "the instance must not disappear while its agent changes keys";
  EXPECT_THAT(rotated.err(), ::testing::Not(::testing::HasSubstr("forbidden")));

  authorize_keys({{"web-b", "web agent"}, {"ops", "ops operator"}, {"reader", "reader reader"}});
  const auto removed = ctl_as("ops", hub, {"reload-keys"});
  ASSERT_TRUE(removed.status.exited_with(0)) << removed.err;
  // The gate refuses before decoding: its ErrorReply names no request (ref 0).
  EXPECT_TRUE(is_error(old_key->exchange(proto::StatusRequest{}, kPatience),
                       proto::ErrorCode::kUnauthenticated));
  EXPECT_TRUE(ctl_as("web", hub, {"status"}).status.exited_with(kExitUnauthenticated));
  EXPECT_TRUE(holds_for([&] { return victim_listed_alone(); }, kLease + kBeat))
      << "the agent with the new key keeps going";
}

TEST_F(IntegrationSecurity, NodeBindingSurvivesAHubRestart) {
  // A longer lease: the restarted hub holds the restored victim while the
  // victim is paused, however slowly this machine restarts a hub.
  constexpr Millis kRestartLease{3000};
  auto hub = start_with_victim({}, {.lease = kRestartLease});
  // Paused: the first beat for web-1 after the restart is the attacker's.
  victim_->signal(SIGSTOP);
  hub.process->signal(SIGTERM);
  ASSERT_TRUE(hub.process->wait_for(kPatience));
  hub = start_keyed_hub({.listen = hub.endpoint, .data = hub.data, .lease = kRestartLease});

  auto mallory = probe_as("mallory", hub.endpoint);
  EXPECT_TRUE(is_forbidden(
      mallory->exchange(beat_for(kVictimNode, {registration(kService, kAttackerAddress)}), 1s)));
  EXPECT_TRUE(is_forbidden(mallory->exchange(deregister(kVictimNode), 1s)));
  victim_->signal(SIGCONT);
  EXPECT_TRUE(holds_for([&] { return victim_listed_alone(); }, kRestartLease + kBeat))
      << "the victim beats again past its restored lease";
  EXPECT_THAT(victim_->err(), ::testing::Not(::testing::HasSubstr("forbidden")));
}

// Two L1 hubs under an L2, a proxy in front of one of them, all with keys.
TEST_F(IntegrationSecurity, KeyedL1L2L1TopologyWithAProxyResolvesAcrossTiers) {
  for (const char* name : {"l2", "dc1", "dc2", "proxy"})
    keygen(name);
  authorize({"dc1 hub", "dc2 hub"}, "l2_keys");
  authorize({"proxy proxy register=web query=web"}, "dc1_keys");
  authorize({"reader reader"}, "dc2_keys");
  authorize({"web agent"}, "proxy_keys");
  // L2 holds an L1 for three of its beats, as in tiers_test.cpp.
  const auto l2 =
      start_keyed_hub({.id = "l2", .lease = 6 * kBeat, .extra = {"--tier", "2"}}, "l2", "l2_keys");
  const auto l1 = [&](const std::string& id) {
    return start_keyed_hub({.id = id,
                            .extra = {"--zone", id, "--upstream", l2.endpoint,
                                      "--upstream-public-key", public_key_file("l2")}},
                           id, id + "_keys");
  };
  const auto dc1 = l1("dc1");
  const auto dc2 = l1("dc2");

  // A proxy writes no endpoint file: its log says where it listens.
  auto& proxy = spawn_hub({.id = "proxy",
                           .extra = {"--proxy", "--upstream", dc1.endpoint, "--upstream-public-key",
                                     public_key_file("dc1"), "--secret-key", key_file("proxy"),
                                     "--authorized-keys", keys_file("proxy_keys").string()}});
  const std::string marker = "proxy listening on ";
  std::string proxy_endpoint;
  ASSERT_TRUE(poll_until(
      [&] {
        const auto lines = lines_containing(proxy.err(), marker);
        if (lines.empty()) return false;
        proxy_endpoint = lines.front().substr(lines.front().find(marker) + marker.size());
        return true;
      },
      kPatience))
      << proxy.err();

  start_keyed_provider(proxy_endpoint, "web", kVictimNode, kVictimRegistration, "proxy");
  auto consumer = probe_as("reader", dc2.endpoint, "dc2");
  ASSERT_TRUE(wait_until_listed(*consumer, kService, kVictimAddress));
  const auto reply = consumer->query(kService, 1s);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->tier, 2u) << "found through L2";
}

}  // namespace
}  // namespace cascade::integration
