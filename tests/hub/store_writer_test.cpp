// The store writer: batches commit on its own thread, one at a time, and
// their outcome comes back through a poll item; and the hub server keeps
// serving while a commit is slow.
#include "cascade/hub/store_writer.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "cascade/tests/hub/hub_server_fixture.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

PersistBatch batch_of(std::string node_id) {
  PersistBatch batch;
  batch.node_upserts.push_back({std::move(node_id), 1, 2, ""});
  return batch;
}

// Waits for the writer's poll item, as the serving loop does.
bool poll_done(StoreWriter& writer, Duration timeout = Duration{2000}) {
  auto item = writer.poll_item();
  return zmq::poll(&item, 1, timeout) == 1;
}

TEST(StoreWriter, CommitsOnItsOwnThreadAndSaysSoThroughItsPollItem) {
  ScriptedStore store;
  StoreWriter writer(store);
  EXPECT_FALSE(writer.busy());
  const auto ticket = writer.submit(batch_of("n1"));
  EXPECT_TRUE(writer.busy());
  ASSERT_TRUE(poll_done(writer));
  auto outcome = writer.take_outcome();
  ASSERT_TRUE(outcome);
  EXPECT_EQ(outcome->ticket, ticket);
  EXPECT_FALSE(outcome->error);
  EXPECT_EQ(outcome->batch.node_upserts.at(0).node_id, "n1");
  EXPECT_FALSE(writer.busy());
  EXPECT_EQ(store.commits.load(), 1);
  EXPECT_NE(store.applied_on.load(), std::this_thread::get_id());
  EXPECT_EQ(writer.submit(batch_of("n2")), ticket + 1);
}

TEST(StoreWriter, NoOutcomeWhileTheCommitIsUnderWay) {
  ScriptedStore store;
  store.stalled = true;
  StoreWriter writer(store);
  writer.submit(batch_of("n1"));
  EXPECT_FALSE(poll_done(writer, Duration{50}));
  EXPECT_FALSE(writer.take_outcome());
  EXPECT_TRUE(writer.busy());
  store.stalled = false;
  ASSERT_TRUE(poll_done(writer));
  EXPECT_TRUE(writer.take_outcome());
}

TEST(StoreWriter, AFailedCommitReturnsTheBatchWithTheStoresError) {
  ScriptedStore store;
  store.failing = true;
  StoreWriter writer(store);
  writer.submit(batch_of("n1"));
  const auto outcome = writer.wait();
  ASSERT_TRUE(outcome.error);
  EXPECT_EQ(*outcome.error, "disk full");
  EXPECT_EQ(outcome.batch.node_upserts.at(0).node_id, "n1") << "to requeue";
  EXPECT_FALSE(writer.busy());
}

TEST(StoreWriter, StoppingCommitsTheBatchInHandFirst) {
  ScriptedStore store;
  {
    StoreWriter writer(store);
    writer.submit(batch_of("n1"));
  }
  EXPECT_EQ(store.commits.load(), 1);
}

// A slow commit (here: one that waits until released) no longer stops the
// hub: beats that change nothing are answered meanwhile, a change is
// acknowledged only once the batch holding it committed, and a change made
// during the commit goes in the next batch.
TEST_F(HubServerTest, BeatsAreAnsweredWhileACommitIsSlowAndAcksWaitForTheirOwnBatch) {
  ASSERT_TRUE(request(beat_with_set("n0", 1, {reg("svc", "i0", "a:0")})));
  const int commits_before = store.commits.load();
  store.stalled = true;
  EXPECT_FALSE(request(beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}), Duration{200}))
      << "acknowledged before its commit";
  ASSERT_GE(store.entered.load(), commits_before + 1) << "the batch is with the writer";

  const auto steady = request(beat("n0", 2, digest({reg("svc", "i0", "a:0")})), Duration{500});
  ASSERT_TRUE(steady) << "a renewal waited for the disk";
  EXPECT_EQ(std::get<proto::DownBeat>(*steady).node_id, "n0");
  EXPECT_FALSE(request(beat_with_set("n2", 1, {reg("svc", "i2", "a:2")}), Duration{100}));

  store.stalled = false;
  std::vector<std::string> acked;
  while (auto frame = receive())
    acked.push_back(
        std::get<proto::DownBeat>(std::get<proto::Message>(frame->items.at(0))).node_id);
  EXPECT_EQ(acked, (std::vector<std::string>{"n1", "n2"}));
  EXPECT_EQ(store.commits.load(), commits_before + 2) << "n2's change went in the next batch";
  EXPECT_EQ(store.instances_written.load(), 3u);
}

}  // namespace
}  // namespace cascade::hub
