// The config centre and the store ("nothing acknowledged is lost"): an
// operator's edit is answered once its batch committed, so the batch carries
// the change's history records, stamped with the commit's wall time (which
// `config history` then shows too). On a fake clock.

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

  for (const auto& change : view(hub, ConfigView::kHistory, "orders").history)
    EXPECT_EQ(change.wall_ms, clock.wall_ms()) << "restamped by the commit that took";
}

}  // namespace
}  // namespace cascade::hub
