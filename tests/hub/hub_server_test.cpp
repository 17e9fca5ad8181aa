// The hub server's I/O shell with a store that can be told to fail: replies
// that acknowledge a change wait for the commit, and never go out without it.
#include "hub/hub_server.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "common/codec.hpp"
#include "tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

class ScriptedStore final : public HubStore {
 public:
  std::uint64_t next_epoch() override { return 1; }
  HubSnapshot load() override { return {}; }
  void apply(const PersistBatch& batch) override {
    if (failing) throw std::runtime_error("disk full");
    ++commits;
    instances_written += batch.instance_upserts.size();
  }
  std::atomic<bool> failing{false};
  std::atomic<int> commits{0};
  std::atomic<std::size_t> instances_written{0};
};

class HubServerTest : public ::testing::Test {
 protected:
  HubServerTest() {
    HubConfig config;
    config.listen = "tcp://127.0.0.1:*";
    config.flush_interval = Duration{5};
    server = std::make_unique<HubServer>(config, clock, store, context);
    endpoint = server->bind();
    thread = std::thread([this] { server->run(stop); });
    client.set(zmq::sockopt::linger, 0);
    client.connect(endpoint);
  }
  ~HubServerTest() override {
    stop = true;
    thread.join();
  }
  std::optional<proto::Message> request(const proto::Message& m,
                                        Duration timeout = Duration{1000}) {
    const auto bytes = proto::encode(m);
    client.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, timeout);
    if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
    zmq::message_t reply;
    if (!client.recv(reply)) return std::nullopt;
    auto decoded = proto::decode_frame(reply.to_string_view());
    return std::get<proto::Message>(decoded.items.at(0));
  }

  SystemClock clock;
  ScriptedStore store;
  zmq::context_t context{1};
  std::unique_ptr<HubServer> server;
  std::string endpoint;
  std::atomic<bool> stop{false};
  std::thread thread;
  zmq::socket_t client{context, zmq::socket_type::dealer};
};

TEST_F(HubServerTest, RegistrationIsAcknowledgedOnlyAfterItsCommit) {
  auto reply = request(beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}));
  ASSERT_TRUE(reply);
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(*reply));
  EXPECT_GE(store.commits.load(), 1);
  EXPECT_EQ(store.instances_written.load(), 1u);
}

TEST_F(HubServerTest, NoAcknowledgementWhileTheStoreFailsAndTheChangeIsWrittenLater) {
  store.failing = true;
  EXPECT_FALSE(request(beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}), Duration{300}));
  // A beat that changes nothing is still answered at once: lease renewals never wait for disk.
  auto steady = request(beat("n1", 2, digest({reg("svc", "i1", "a:1")})));
  ASSERT_TRUE(steady);
  EXPECT_FALSE(std::get<proto::DownBeat>(*steady).send_full);
  store.failing = false;
  // The change that could not be written is written by a later flush.
  const auto deadline = std::chrono::steady_clock::now() + Duration{2000};
  while (store.instances_written.load() == 0 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(Duration{5});
  EXPECT_EQ(store.instances_written.load(), 1u);
}

TEST_F(HubServerTest, GarbageGetsATypedErrorAndTheHubKeepsServing) {
  client.send(zmq::str_buffer("\xc1 definitely not msgpack"), zmq::send_flags::none);
  zmq::message_t reply;
  ASSERT_TRUE(client.recv(reply));
  auto decoded = proto::decode_frame(reply.to_string_view());
  const auto& error = std::get<proto::ErrorReply>(std::get<proto::Message>(decoded.items.at(0)));
  EXPECT_EQ(error.code, proto::ErrorCode::kMalformed);
  auto status = request(proto::StatusRequest{7});
  ASSERT_TRUE(status);
  EXPECT_EQ(std::get<proto::StatusReply>(*status).request_id, 7u);
}

TEST_F(HubServerTest, BatchOfBeatsGetsABatchOfRepliesInOrder) {
  std::vector<proto::Message> beats;
  for (int i = 0; i < 10; ++i)
    beats.emplace_back(
        beat_with_set("n" + std::to_string(i), 1, {reg("svc", "i" + std::to_string(i), "a:1")}));
  const auto bytes = proto::encode_batch(beats);
  client.send(zmq::buffer(bytes), zmq::send_flags::none);
  zmq::message_t reply;
  ASSERT_TRUE(client.recv(reply));
  auto decoded = proto::decode_frame(reply.to_string_view());
  ASSERT_TRUE(decoded.batched);
  ASSERT_EQ(decoded.items.size(), 10u);
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(std::get<proto::DownBeat>(std::get<proto::Message>(decoded.items[i])).node_id,
              "n" + std::to_string(i));
}

}  // namespace
}  // namespace cascade::hub
