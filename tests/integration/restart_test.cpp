// Crashes and restarts: a hub killed with -9 (or stopped with SIGTERM) comes
// back from its data directory with every registration (the dead ones expire
// after one lease of grace, the live ones renew within it, even after an
// outage of seconds), and a consumer restarted while no hub runs still
// resolves from its own snapshot, marked STALE, with the age of its data.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include <atomic>
#include <filesystem>
#include <optional>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "cascade/common/sqlite_db.hpp"
#include "cascade/tests/integration/cluster.hpp"
#include "cascade/tests/integration/hub_probe.hpp"

namespace cascade::integration {
namespace {

using ::testing::HasSubstr;

class IntegrationRestart : public ClusterTest {
 protected:
  // A consumer of "orders" with a snapshot directory of its own and short query
  // and shutdown timeouts. Started again with the same arguments, it finds the
  // snapshot the first run wrote.
  std::vector<std::string> snapshot_consumer_args(const RunningHub& hub) {
    return {"--hub",
            hub.endpoint,
            "--id",
            "consumer",
            "--use",
            "orders",
            "--data",
            fresh_path("consumer-data").string(),
            "--query-timeout-ms",
            "300",
            "--shutdown-timeout-ms",
            "300"};
  }
};

// The age in a "resolved" line ("... age 1234 ms ..."); nullopt when it has none.
std::optional<Millis> age_in(const std::string& line) {
  std::smatch match;
  if (!std::regex_search(line, match, std::regex("age ([0-9]+) ms"))) return std::nullopt;
  return Millis{std::stoll(match[1].str())};
}

// Whether the hub has committed an instance at `address` to its store, read
// with a connection of its own as an operator's sqlite3 shell would. Listed is
// not yet durable: a query answers from memory while the batch commits, and
// a hub killed then comes back without it (the agent was not acknowledged).
bool stored(const std::filesystem::path& data, const std::string& address) {
  sqlite::DbOptions options;
  options.read_only = true;
  sqlite::Db db(data / "hub.db", options);
  sqlite::Statement select(db, "SELECT count(*) FROM instances WHERE address = ?1");
  select.bind_text(1, address);
  return select.step() && select.column_int64(0) > 0;
}

constexpr Millis kSchedulingMargin{200};
constexpr Millis kRestartLease{1500};

TEST_F(IntegrationRestart,
       HubKilledAndRestartedOnItsDataServesRegistrationsAtOnceAndExpiresTheDead) {
  // A lease with room for the agent's reconnect and first failover backoff
  // (500 ms, not scaled to our short beats): the live provider must be back
  // within the grace even on a loaded machine. Long outages: see below.
  HubOptions options;
  options.lease = kRestartLease;
  const auto first = start_hub(options);
  auto& doomed = start_provider(first.endpoint, "doomed", "orders=10.0.0.1:8080");
  auto& live = start_provider(first.endpoint, "live", "orders=10.0.0.2:8080");
  std::uint64_t first_epoch = 0;
  {
    HubProbe probe(first.endpoint);
    ASSERT_TRUE(poll_until(
        [&] {
          const auto r = probe.query("orders", 1s);
          return r && r->instances.size() == 2;
        },
        kPatience));
    const auto status = probe.status(kPatience);
    ASSERT_TRUE(status);
    first_epoch = status->hub_epoch;
  }
  ASSERT_TRUE(poll_until(
      [&] { return stored(first.data, "10.0.0.1:8080") && stored(first.data, "10.0.0.2:8080"); },
      kPatience));

  // The provider dies first, then the hub; nobody will renew `doomed` again.
  doomed.kill_and_wait();
  first.process->kill_and_wait();

  HubOptions again = options;
  again.listen = first.endpoint;  // the same port: `live` keeps beating to it
  again.data = first.data;
  const auto restarted_at = SteadyClock::now();
  const auto second = start_hub(again);
  const auto up_at = SteadyClock::now();
  HubProbe probe(second.endpoint);

  // Restored from disk: resolvable before any lease could have been renewed.
  const auto right_after = probe.query("orders", kPatience);
  const auto asked_after = elapsed_since(restarted_at);
  ASSERT_TRUE(right_after) << "the restarted hub does not answer";
  EXPECT_TRUE(has_address(*right_after, "10.0.0.1:8080"))
      << "the dead provider's registration was not restored (asked " << asked_after.count()
      << " ms after the restart)";
  EXPECT_TRUE(has_address(*right_after, "10.0.0.2:8080"));
  EXPECT_LT(asked_after, kRestartLease) << "too slow to tell restore from re-registration";
  const auto status_after = probe.status(kPatience);
  ASSERT_TRUE(status_after);
  EXPECT_GT(status_after->hub_epoch, first_epoch) << "a restarted hub takes a new epoch";

  // One lease of grace from the restart, then the dead provider expires: no zombie.
  const bool dead_gone = poll_until(
      [&] {
        const auto r = probe.query("orders", 1s);
        return r && !has_address(*r, "10.0.0.1:8080");
      },
      kPatience, Millis{5});
  ASSERT_TRUE(dead_gone) << "the dead provider is still registered " << elapsed_since(up_at).count()
                         << " ms after the restart";
  EXPECT_GE(elapsed_since(restarted_at), kRestartLease) << "expired before the grace of one lease";
  EXPECT_LE(elapsed_since(up_at), kRestartLease + kBeat + kSchedulingMargin);

  // The live provider renewed its lease and stays, well past the grace.
  EXPECT_TRUE(holds_for([&] { return is_listed(probe, "orders", "10.0.0.2:8080"); }, kRestartLease))
      << "the live provider dropped out after the hub restart";
  EXPECT_TRUE(live.running());
  const auto status = probe.status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_EQ(counter(*status, "nodes_expired"), 1u);
  EXPECT_EQ(status->nodes, 1u);
  EXPECT_EQ(status->instances, 1u);
}

TEST_F(IntegrationRestart, LiveProviderRenewsWithinTheGraceAfterAHubOutageOfSeconds) {
  const auto first = start_hub();
  auto& live = start_provider(first.endpoint, "live", "orders=10.0.0.2:8080");
  ASSERT_TRUE(wait_until_listed(first.endpoint, "orders", "10.0.0.2:8080"));
  ASSERT_TRUE(poll_until([&] { return stored(first.data, "10.0.0.2:8080"); }, kPatience));
  first.process->kill_and_wait();
  // The scenario is the length of the outage (a slow restart, a deploy): the
  // time has to pass, there is nothing to poll for. 2.4 s: long enough that an
  // agent backing off 0.5, 1, 2 s... is into its 2 s backoff when the hub
  // returns, while the hub's grace is one lease (600 ms).
  constexpr Millis kOutage{2400};
  std::this_thread::sleep_for(kOutage);

  HubOptions again;
  again.listen = first.endpoint;
  again.data = first.data;
  const auto second = start_hub(again);
  HubProbe probe(second.endpoint);
  // Restored with one lease of grace: the live provider must renew within it,
  // however long it had to wait for the hub.
  EXPECT_TRUE(
      holds_for([&] { return is_listed(probe, "orders", "10.0.0.2:8080"); }, kLease + 2 * kBeat))
      << "the live provider expired after the hub came back: its failover backoff outgrew the "
         "hub's lease";
  const auto status = probe.status(kPatience);
  ASSERT_TRUE(status);
  EXPECT_EQ(counter(*status, "nodes_expired"), 0u);
  EXPECT_TRUE(live.running());
}

TEST_F(IntegrationRestart, HubStoppedWithSigtermExitsZeroAndKeepsItsRegistrations) {
  HubOptions options;
  options.lease = Millis{5000};  // the dead provider must not expire before the stop
  const auto first = start_hub(options);
  auto& provider = start_provider(first.endpoint, "provider", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_listed(first.endpoint, "orders", "10.0.0.1:8080"));
  // Without its provider, the registration can only come back from disk.
  provider.kill_and_wait();

  first.process->signal(SIGTERM);
  const auto exit = first.process->wait_for(kPatience);
  ASSERT_TRUE(exit) << "the hub ignored SIGTERM";
  EXPECT_TRUE(exit->exited_with(0)) << exit->describe();
  EXPECT_THAT(lines_containing(first.process->err(), "stopped"), ::testing::SizeIs(1));

  HubOptions again = options;
  again.data = first.data;
  const auto second = start_hub(again);
  HubProbe probe(second.endpoint);
  const auto restored = probe.query("orders", kPatience);
  ASSERT_TRUE(restored);
  EXPECT_TRUE(has_address(*restored, "10.0.0.1:8080"));
}

// A signal is delivered to whichever thread runs. A hub whose handler let it
// interrupt any system call died ("fatal: Interrupted system call") when a
// SIGTERM or SIGHUP landed in a ZeroMQ receive or send rather than in the
// poll that expected it. Signals sent in bursts while clients keep it busy
// must leave it serving, and the SIGTERM after them must stop it cleanly.
TEST_F(IntegrationRestart, HubSignalledInBurstsWhileBusyKeepsServingAndStopsCleanly) {
  const auto hub = start_hub();
  start_provider(hub.endpoint, "provider", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_listed(hub.endpoint, "orders", "10.0.0.1:8080"));
  std::atomic<bool> done{false};
  std::vector<std::thread> clients;
  for (int i = 0; i < 4; ++i)
    clients.emplace_back([&] {
      HubProbe probe(hub.endpoint);
      while (!done.load())
        probe.query("orders", Millis{500});
    });
  for (int i = 0; i < 5000 && hub.process->running(); ++i) {
    hub.process->signal(SIGHUP);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  done = true;
  for (auto& client : clients)
    client.join();
  ASSERT_TRUE(hub.process->running()) << "a signal ended the hub";
  HubProbe probe(hub.endpoint);
  const auto listed = probe.query("orders", kPatience);
  ASSERT_TRUE(listed);
  EXPECT_TRUE(has_address(*listed, "10.0.0.1:8080"));

  hub.process->signal(SIGTERM);
  const auto exit = hub.process->wait_for(kPatience);
  ASSERT_TRUE(exit) << "the hub ignored SIGTERM";
  EXPECT_TRUE(exit->exited_with(0)) << exit->describe();
}

TEST_F(IntegrationRestart, ConsumerRestartedWhileNoHubRunsResolvesStaleFromItsSnapshot) {
  const auto hub = start_hub();
  start_provider(hub.endpoint, "provider", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_listed(hub.endpoint, "orders", "10.0.0.1:8080"));

  const auto consumer_args = snapshot_consumer_args(hub);
  const auto first_started_at = SteadyClock::now();
  auto& first = start_agent("consumer", consumer_args);
  const auto fresh = wait_for_stdout_line(first, "resolved orders");
  ASSERT_TRUE(fresh);
  ASSERT_THAT(*fresh, HasSubstr("10.0.0.1:8080[UP]"));
  EXPECT_THAT(*fresh, ::testing::Not(HasSubstr("STALE")));

  hub.process->kill_and_wait();
  const auto hub_gone_at = SteadyClock::now();
  first.signal(SIGTERM);
  const auto first_exit = first.wait_for(kPatience);
  ASSERT_TRUE(first_exit);
  EXPECT_TRUE(first_exit->exited_with(0)) << first_exit->describe();

  const auto hubless_for = elapsed_since(hub_gone_at);
  auto& second = start_agent("consumer", consumer_args);
  const auto stale = wait_for_stdout_line(second, "resolved orders");
  const auto snapshot_at_most = elapsed_since(first_started_at);
  ASSERT_TRUE(stale) << "the restarted consumer printed no 'resolved' line";
  EXPECT_THAT(*stale, HasSubstr("(1 instances, STALE, age "));
  EXPECT_THAT(*stale, HasSubstr("10.0.0.1:8080[UP]"));

  const auto age = age_in(*stale);
  ASSERT_TRUE(age) << *stale;
  // The list was last confirmed while the hub ran, and after the first consumer started.
  // (The age is on the wall clock; allow a few ms against the test's steady clock.)
  EXPECT_GE(*age, hubless_for - Millis{50}) << *stale;
  EXPECT_LE(*age, snapshot_at_most + Millis{50}) << *stale;
  EXPECT_TRUE(lines_containing(second.out(), "unresolved").empty());
}

TEST_F(IntegrationRestart, RestartedConsumerReportsTheAgeSinceTheHubLastConfirmedItsList) {
  const auto hub = start_hub();
  HubProbe probe(hub.endpoint);
  start_provider(hub.endpoint, "provider", "orders=10.0.0.1:8080");
  ASSERT_TRUE(wait_until_listed(probe, "orders", "10.0.0.1:8080"));

  const auto consumer_args = snapshot_consumer_args(hub);
  auto& first = start_agent("consumer", consumer_args);
  ASSERT_TRUE(wait_for_stdout_line(first, "resolved orders"));
  // The list does not change, but the hub keeps confirming it: let the two
  // agents beat about eight times each (some 1.6 s).
  const auto beats = [&] {
    const auto s = probe.status(1s);
    return s ? counter(*s, "beats").value_or(0) : 0;
  };
  const auto beats_before = beats();
  ASSERT_TRUE(poll_until([&] { return beats() >= beats_before + 16; }, kPatience));

  hub.process->kill_and_wait();
  const auto hub_gone_at = SteadyClock::now();
  first.signal(SIGTERM);
  ASSERT_TRUE(first.wait_for(kPatience));
  auto& second = start_agent("consumer", consumer_args);
  const auto stale = wait_for_stdout_line(second, "resolved orders");
  const auto hubless_for = elapsed_since(hub_gone_at);
  ASSERT_TRUE(stale);
  const auto age = age_in(*stale);
  ASSERT_TRUE(age) << *stale;
  // Last confirmed by the beat before the hub died: at most a beat before that.
  EXPECT_LE(*age, hubless_for + kBeat + kSchedulingMargin)
      << *stale << "\nthe hub was gone for " << hubless_for.count()
      << " ms; the age counts from the first fetch, not from the last confirmation";
}

}  // namespace
}  // namespace cascade::integration
