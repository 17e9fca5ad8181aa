// The config centre across a restart ("nothing acknowledged is lost"): an
// operator's edit is answered once its batch committed, so the batch carries
// the change's history records, stamped with the commit's wall time (which
// `config history` then shows too); a restarted hub serves this hub's keys
// again with their origins, lists their history and rolls back to versions
// of the previous incarnation. Through the SQLite store, on a fake clock.

#include <gtest/gtest.h>

#include "cascade/hub/hub_core.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::hub {
namespace {

using proto::AdminOp;
using proto::ConfigView;

constexpr Duration kLease{6000};
const std::string kBinary("\0\xff\x80", 3);

HubCoreConfig config() {
  return {"hub-a", 1, kLease};
}

class ConfigPersistenceTest : public ::testing::Test {
 protected:
  FakeClock clock;
  HubCore hub{config(), /*epoch=*/7, clock.now()};
  store_test::TempDir tmp;

  proto::AdminReply admin(HubCore& h, proto::AdminRequest request) {
    request.request_id = 9;
    request.actor = "alice@ops-1";
    request.service = proto::ServiceKey{"", ""};
    auto r = h.handle(clock.now(), request);
    EXPECT_TRUE(r.durable) << "an operator's reply must wait for the commit";
    auto* reply = std::get_if<proto::AdminReply>(&r.reply);
    EXPECT_NE(reply, nullptr) << "not an AdminReply";
    return reply ? *reply : proto::AdminReply{};
  }
  proto::AdminReply edit(HubCore& h, const std::string& group,
                         std::vector<proto::ConfigEdit> edits) {
    proto::AdminRequest r;
    r.op = AdminOp::kConfigEdit;
    r.config_group = group;
    r.config_edits = std::move(edits);
    return admin(h, std::move(r));
  }
  proto::AdminReply rollback(HubCore& h, const std::string& group, std::uint64_t version) {
    proto::AdminRequest r;
    r.op = AdminOp::kConfigRollback;
    r.config_group = group;
    r.config_version = version;
    return admin(h, std::move(r));
  }
  proto::ConfigReply view(HubCore& h, ConfigView what, const std::string& group) {
    auto r = h.handle(clock.now(), proto::ConfigRequest{3, what, group, ""});
    auto* reply = std::get_if<proto::ConfigReply>(&r.reply);
    EXPECT_NE(reply, nullptr) << "not a ConfigReply";
    return reply ? *reply : proto::ConfigReply{};
  }
  std::unique_ptr<SqliteHubStore> store() const {
    return SqliteHubStore::open(tmp.path(), sqlite::Synchronous::kNormal);
  }
  // Commits what the hub would persist now, as the server does: the batch is
  // taken with the wall time of the commit.
  PersistBatch commit(HubCore& h) {
    auto batch = h.take_persist_batch(clock.wall_ms());
    store()->apply(batch);
    return batch;
  }
  // A new incarnation of the hub restored from the store.
  std::unique_ptr<HubCore> restart() {
    auto h = std::make_unique<HubCore>(config(), /*epoch=*/8, clock.now());
    h->restore(store()->load(), clock.now());
    return h;
  }
  std::uint64_t served_version(HubCore& h, const std::string& group) {
    return view(h, ConfigView::kGet, group).version;
  }
};

TEST_F(ConfigPersistenceTest,
       AnEditsBatchCarriesItsRecordsStampedWithTheCommitTimeWhichHistoryShows) {
  ASSERT_TRUE(edit(hub, "orders", {{"timeout_ms", "300"}, {"blob", kBinary}}).ok);
  const auto version = served_version(hub, "orders");
  EXPECT_EQ(view(hub, ConfigView::kHistory, "orders").history.at(0).wall_ms, 0)
      << "not committed yet: no time";

  clock.advance(Duration{20});
  const auto batch = hub.take_persist_batch(clock.wall_ms());
  EXPECT_EQ(batch.wall_ms, clock.wall_ms());
  EXPECT_EQ(batch.audit.size(), 1u);
  ASSERT_EQ(batch.config_changes.size(), 2u);
  EXPECT_EQ(batch.rows(), 3u);
  for (const auto& r : batch.config_changes) {
    EXPECT_EQ(r.group, "orders");
    EXPECT_EQ(r.version, version);
    EXPECT_EQ(r.author, "alice@ops-1");
    EXPECT_EQ(r.wall_ms, clock.wall_ms());
  }
  for (const auto& change : view(hub, ConfigView::kHistory, "orders").history)
    EXPECT_EQ(change.wall_ms, clock.wall_ms()) << change.key;
  EXPECT_TRUE(hub.take_persist_batch(clock.wall_ms()).empty()) << "records are taken once";
}

TEST_F(ConfigPersistenceTest, AFailedCommitRequeuesTheRecordsAndTheNextBatchWritesThemFirst) {
  ASSERT_TRUE(edit(hub, "orders", {{"a", "1"}}).ok);
  const auto failed = hub.take_persist_batch(clock.wall_ms());
  ASSERT_EQ(failed.config_changes.size(), 1u);
  hub.requeue(failed);  // the disk said no

  clock.advance(Duration{1000});
  ASSERT_TRUE(edit(hub, "orders", {{"a", "2"}}).ok);
  const auto next = commit(hub);
  ASSERT_EQ(next.config_changes.size(), 2u);
  EXPECT_EQ(next.config_changes[0].new_value, "1");
  EXPECT_EQ(next.config_changes[1].new_value, "2");
  EXPECT_EQ(next.audit.size(), 2u);

  const auto stored = store()->load();
  ASSERT_EQ(stored.config_history.size(), 2u);
  EXPECT_EQ(stored.config_history[0].wall_ms, clock.wall_ms()) << "the time of the commit";
  EXPECT_EQ(stored.config_entries,
            (std::vector<ConfigEntryRecord>{{"orders", "a", "2", served_version(hub, "orders")}}));
  for (const auto& change : view(hub, ConfigView::kHistory, "orders").history)
    EXPECT_EQ(change.wall_ms, clock.wall_ms()) << "restamped by the commit that took";
}

TEST_F(ConfigPersistenceTest, ARestartedHubServesTheSameValuesWithTheirOriginsAndHistory) {
  ASSERT_TRUE(edit(hub, "orders", {{"timeout_ms", "300"}, {"blob", kBinary}}).ok);
  const auto first = served_version(hub, "orders");
  const auto first_commit = commit(hub).wall_ms;
  clock.advance(Duration{60'000});
  ASSERT_TRUE(edit(hub, "orders", {{"timeout_ms", "250"}}).ok);
  const auto second = served_version(hub, "orders");
  commit(hub);
  const auto before = view(hub, ConfigView::kGet, "orders");
  const auto history_before = view(hub, ConfigView::kHistory, "orders").history;

  auto after = restart();

  const auto served = view(*after, ConfigView::kGet, "orders");
  ASSERT_TRUE(served.ok) << served.message;
  EXPECT_EQ(served.entries, before.entries) << "values and origins (tier, hub, version there)";
  EXPECT_EQ(served.entries.at(0).value, kBinary);
  EXPECT_EQ(served.entries.at(0).origin, (proto::ConfigOrigin{1, "hub-a", first}));
  EXPECT_EQ(served.entries.at(1).origin.version, second);
  EXPECT_EQ(served.version >> 40, 8u) << "served under a version of the new incarnation";

  const auto history = view(*after, ConfigView::kHistory, "orders").history;
  EXPECT_EQ(history, history_before);
  ASSERT_EQ(history.size(), 3u);  // newest first
  EXPECT_EQ(history[0].wall_ms, clock.wall_ms());
  EXPECT_EQ(history[2].wall_ms, first_commit);
  EXPECT_EQ(history[2].version, first);

  // A follower that held the previous incarnation's version gets the group whole.
  auto b = testing::beat("n1", 1, 0);
  b.configs = {{"orders", second}};
  const auto down = std::get<proto::DownBeat>(after->handle(clock.now(), b).reply);
  ASSERT_EQ(down.config_updates.size(), 1u);
  EXPECT_EQ(down.config_updates[0].kind, proto::UpdateKind::kFull);
  EXPECT_EQ(down.config_updates[0].upserts.size(), 2u);
  EXPECT_TRUE(after->take_persist_batch(clock.wall_ms()).config_changes.empty())
      << "restoring writes nothing back";
}

TEST_F(ConfigPersistenceTest, ARestartedHubRollsBackToAVersionOfThePreviousIncarnation) {
  ASSERT_TRUE(edit(hub, "orders", {{"timeout_ms", "300"}}).ok);
  const auto good = served_version(hub, "orders");
  ASSERT_TRUE(edit(hub, "orders", {{"timeout_ms", "5"}, {"retries", "9"}}).ok);
  commit(hub);

  auto after = restart();
  const auto reply = rollback(*after, "orders", good);
  ASSERT_TRUE(reply.ok) << reply.message;
  const auto served = view(*after, ConfigView::kGet, "orders");
  ASSERT_EQ(served.entries.size(), 1u);
  EXPECT_EQ(served.entries[0].value, "300");
  EXPECT_EQ(served.entries[0].origin.version >> 40, 8u) << "a rollback is a new change";

  // The rollback is persisted like any change, and survives the next restart.
  commit(*after);
  auto again = std::make_unique<HubCore>(config(), /*epoch=*/9, clock.now());
  again->restore(store()->load(), clock.now());
  EXPECT_EQ(view(*again, ConfigView::kGet, "orders").entries, served.entries);
  EXPECT_EQ(view(*again, ConfigView::kHistory, "orders").history.size(), 5u);
}

TEST_F(ConfigPersistenceTest, ARollbackBeyondTheRestoredHistoryIsRefused) {
  ASSERT_TRUE(edit(hub, "orders", {{"k", "first"}}).ok);
  const auto first = served_version(hub, "orders");
  for (std::size_t i = 0; i < kConfigHistoryRestored; ++i)
    ASSERT_TRUE(edit(hub, "orders", {{"k", std::to_string(i)}}).ok);
  commit(hub);

  auto after = restart();
  EXPECT_EQ(view(*after, ConfigView::kHistory, "orders").history.size(), kConfigHistoryRestored);
  const auto reply = rollback(*after, "orders", first);
  EXPECT_FALSE(reply.ok);
  EXPECT_NE(reply.message.find("is no longer kept"), std::string::npos) << reply.message;
  EXPECT_EQ(view(*after, ConfigView::kGet, "orders").entries.at(0).value,
            std::to_string(kConfigHistoryRestored - 1));
}

}  // namespace
}  // namespace cascade::hub
