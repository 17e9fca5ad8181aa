// A HubServer past its queue bound (protocol section 5.18): frames that
// waited too long in the hub's queue are answered busy, unread, naming their
// message; the others are served. Time is a clock that moves a millisecond
// every time it is read, so the frames of one burst wait longer and longer
// whatever the machine's speed.
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "cascade/common/codec.hpp"
#include "cascade/hub/hub_server.hpp"
#include "cascade/tests/hub/hub_server_fixture.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

class SteppingClock final : public Clock {
 public:
  MonoTime now() const override { return MonoTime{Duration{ms_.fetch_add(1) + 1}}; }
  WallMs wall_ms() const override { return 1'700'000'000'000 + ms_.load(); }

 private:
  mutable std::atomic<std::int64_t> ms_{0};
};

constexpr int kFrames = 40;
constexpr Duration kShedAfter{10};

class SheddingServerTest : public ::testing::Test {
 protected:
  SheddingServerTest() {
    HubConfig config;
    config.listen = "tcp://127.0.0.1:*";
    config.inbound.shed_after = kShedAfter;
    config.inbound.standing_for = kShedAfter;
    config.inbound.min_depth = 0;  // the burst is a few dozen frames
    server = std::make_unique<HubServer>(config, clock, store, context);
    client.set(zmq::sockopt::linger, 0);
    client.connect(server->bind());
  }
  ~SheddingServerTest() override {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  // The frames reach the hub's socket before it serves: its first read
  // takes them all at once.
  void send_burst_then_serve() {
    for (int i = 1; i <= kFrames; ++i) {
      const auto bytes = proto::encode(beat_with_set(
          "n" + std::to_string(i), static_cast<std::uint64_t>(i), {reg("svc", "i", "a:1")}));
      client.send(zmq::buffer(bytes), zmq::send_flags::none);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    thread = std::thread([this] { server->run(stop); });
  }
  std::optional<proto::Message> receive() {
    zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(5000));
    zmq::message_t frame;
    if (!(item.revents & ZMQ_POLLIN) || !client.recv(frame)) return std::nullopt;
    auto decoded = proto::decode_frame(frame.to_string_view());
    if (decoded.batched || decoded.items.size() != 1) return std::nullopt;
    auto* message = std::get_if<proto::Message>(&decoded.items[0]);
    return message ? std::optional(*message) : std::nullopt;
  }

  SteppingClock clock;
  ScriptedStore store;
  zmq::context_t context{1};
  std::unique_ptr<HubServer> server;
  std::atomic<bool> stop{false};
  std::thread thread;
  zmq::socket_t client{context, zmq::socket_type::dealer};
};

TEST_F(SheddingServerTest, FramesPastTheBoundAreAnsweredBusyByNameAndTheRestServed) {
  send_burst_then_serve();
  int served = 0, shed = 0;
  std::set<std::uint64_t> answered;
  for (int i = 0; i < kFrames; ++i) {
    const auto reply = receive();
    ASSERT_TRUE(reply) << "frame " << i << " got no reply";
    if (const auto* down = std::get_if<proto::DownBeat>(&*reply)) {
      ++served;
      answered.insert(down->ack_seq);
      continue;
    }
    const auto& busy = std::get<proto::ErrorReply>(*reply);
    EXPECT_EQ(busy.code, proto::ErrorCode::kBusy);
    EXPECT_EQ(busy.retry_after_ms, 2000u) << "the hub's interval, unstretched";
    answered.insert(busy.ref);  // the beat's seq, read without decoding the frame
    ++shed;
  }
  EXPECT_GE(served, 1) << "the oldest frame waited no longer than the bound";
  EXPECT_GE(shed, 1) << "the later frames of the burst waited past it";
  EXPECT_EQ(answered.size(), static_cast<std::size_t>(kFrames)) << "each beat named once";
  EXPECT_EQ(*answered.begin(), 1u);
  EXPECT_EQ(*answered.rbegin(), static_cast<std::uint64_t>(kFrames));
  stop = true;  // the core is the serving thread's: read it once that has ended
  thread.join();
  EXPECT_EQ(server->core().counters().frames_shed, static_cast<std::uint64_t>(shed));
  EXPECT_EQ(server->core().counters().beats, static_cast<std::uint64_t>(served));
}

TEST_F(SheddingServerTest, ABatchIsShedWholeWithOneBusyForItsProxy) {
  std::vector<proto::Message> beats;
  for (int i = 1; i <= 8; ++i)
    beats.emplace_back(beat_with_set("b" + std::to_string(i), 1, {reg("svc", "i", "a:1")}));
  const auto batch = proto::encode_batch(beats);
  for (int i = 0; i < kFrames; ++i)
    client.send(zmq::buffer(batch), zmq::send_flags::none);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  thread = std::thread([this] { server->run(stop); });
  int shed = 0;
  for (int i = 0; i < kFrames; ++i) {
    zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(5000));
    zmq::message_t frame;
    ASSERT_TRUE((item.revents & ZMQ_POLLIN) && client.recv(frame)) << "frame " << i;
    const auto decoded = proto::decode_frame(frame.to_string_view());
    if (decoded.batched) {
      EXPECT_EQ(decoded.items.size(), beats.size()) << "a served batch: a reply per beat";
      continue;
    }
    ASSERT_EQ(decoded.items.size(), 1u);
    const auto& busy = std::get<proto::ErrorReply>(std::get<proto::Message>(decoded.items[0]));
    EXPECT_EQ(busy.code, proto::ErrorCode::kBusy);
    EXPECT_EQ(busy.ref, 0u) << "a batch names no single message";
    ++shed;
  }
  EXPECT_GE(shed, 1);
}

}  // namespace
}  // namespace cascade::hub
