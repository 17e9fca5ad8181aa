// The hub server's I/O shell with a store that can be told to fail: replies
// that acknowledge a change wait for the commit, and never go out without it.
#include "cascade/hub/hub_server.hpp"

#include <gtest/gtest.h>

#include <deque>
#include <thread>
#include <utility>

#include "cascade/common/codec.hpp"
#include "cascade/common/message_parts.hpp"
#include "cascade/tests/hub/hub_server_fixture.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

// What `cascadectl config set orders timeout_ms 300` sends.
proto::AdminRequest set_orders_timeout(std::uint64_t request_id) {
  auto edit = test_support::config_edit("orders", {{"timeout_ms", "300"}});
  edit.request_id = request_id;
  edit.actor = "alice@ops-1";
  return edit;
}

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

TEST_F(HubServerTest, OperatorIsAnsweredOnlyOnceTheAuditRecordCommittedWithTheWallTime) {
  proto::AdminRequest mark;
  mark.request_id = 5;
  mark.op = proto::AdminOp::kMarkOutOfService;
  mark.actor = "alice@ops-1";
  mark.service = proto::ServiceKey{"svc", "default"};
  mark.instance_id = "i1";
  store.failing = true;
  EXPECT_FALSE(request(mark, Duration{300}));
  EXPECT_EQ(store.audit_written.load(), 0u);

  store.failing = false;
  const WallMs before = clock.wall_ms();
  auto reply = request(mark);
  ASSERT_TRUE(reply);
  EXPECT_EQ(std::get<proto::AdminReply>(*reply).request_id, 5u);
  EXPECT_TRUE(std::get<proto::AdminReply>(*reply).ok);
  EXPECT_EQ(store.audit_written.load(), 2u) << "the record of the failed batch is written too";
  EXPECT_GE(store.audit_wall_ms.load(), before - 1000);
  EXPECT_LE(store.audit_wall_ms.load(), clock.wall_ms());
}

TEST_F(HubServerTest, AConfigEditIsAnsweredOnceItsRecordsCommittedAndHistoryShowsTheCommitTime) {
  const auto edit = set_orders_timeout(6);
  const WallMs before = clock.wall_ms();
  auto reply = request(edit);
  ASSERT_TRUE(reply);
  EXPECT_TRUE(std::get<proto::AdminReply>(*reply).ok);
  EXPECT_EQ(store.config_written.load(), 1u);
  EXPECT_EQ(store.config_wall_ms.load(), store.audit_wall_ms.load()) << "one commit, one time";
  EXPECT_GE(store.config_wall_ms.load(), before - 1000);
  EXPECT_LE(store.config_wall_ms.load(), clock.wall_ms());

  auto history = request(proto::ConfigRequest{7, proto::ConfigView::kHistory, "orders", ""});
  ASSERT_TRUE(history);
  const auto& changes = std::get<proto::ConfigReply>(*history).history;
  ASSERT_EQ(changes.size(), 1u);
  EXPECT_EQ(changes[0].wall_ms, store.config_wall_ms.load());
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

// Protocol section 3.12: an empty batch is valid and answered by an empty batch
// (a proxy probing the hub gets its answer, not a timeout).
TEST_F(HubServerTest, EmptyBatchIsAnsweredByAnEmptyBatch) {
  const auto bytes = proto::encode_batch({});
  client.send(zmq::buffer(bytes), zmq::send_flags::none);
  const auto reply = receive();
  ASSERT_TRUE(reply) << "no answer to an empty batch";
  EXPECT_TRUE(reply->batched);
  EXPECT_TRUE(reply->items.empty());
}

// A service larger than a frame (protocol section 5.13): before, the 6 MB
// reply broke the consumer ("frame of 6000867 bytes"); now the reply and the
// pushes after it each fit a part and together carry the whole list.
TEST_F(HubServerTest, AServiceLargerThanAFrameReachesItsConsumerInParts) {
  // 20,000 instances of ~270 bytes (two metadata entries): a 5.3 MB list,
  // few enough instances for a sanitizer build to register them quickly.
  constexpr int kProviders = 4;
  constexpr int kEach = 5'000;
  const std::string build(100, 'b');
  for (int p = 0; p < kProviders; ++p) {
    std::vector<proto::Registration> regs;
    for (int i = 0; i < kEach; ++i) {
      const auto n = p * kEach + i;
      regs.push_back(
          reg("orders", "orders-" + std::to_string(n),
              "10.1." + std::to_string(n / 250 % 250) + "." + std::to_string(n % 250) + ":8080"));
      regs.back().instance.metadata = {{"build", build}, {"image", build}};
    }
    ASSERT_TRUE(request(beat_with_set("provider-" + std::to_string(p), 1, regs), Duration{5000}));
  }
  auto consumer = beat_with_set("consumer", 1, {});
  consumer.uses = {{{"orders", "default"}, 0}};
  const auto bytes = proto::encode(consumer);
  client.send(zmq::buffer(bytes), zmq::send_flags::none);

  proto::PartAssembler parts;
  std::size_t frames = 0;
  std::optional<proto::ServiceUpdate> whole;
  while (!whole) {
    zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, Duration{5000});
    zmq::message_t frame;
    ASSERT_TRUE((item.revents & ZMQ_POLLIN) && client.recv(frame))
        << "the list stopped after " << frames << " frames";
    ++frames;
    EXPECT_LE(frame.size(), proto::kMaxPartBytes);
    const auto decoded = proto::decode_frame(frame.to_string_view());
    const auto& down = std::get<proto::DownBeat>(std::get<proto::Message>(decoded.items.at(0)));
    EXPECT_EQ(down.push, frames > 1) << "the reply first, then pushes";
    for (const auto& update : down.updates)
      if (const auto* applied = parts.add(update)) whole = *applied;
  }
  EXPECT_GT(frames, 4u) << "a list over 4 MiB in parts of at most 1 MiB";
  EXPECT_EQ(whole->kind, proto::UpdateKind::kFull);
  EXPECT_EQ(whole->upserts.size(), static_cast<std::size_t>(kProviders * kEach));
}

// Pushes flushed in the pass that changed the service, so a push and a
// durable reply are made in the same pass of the server loop.
class HubServerPushTest : public HubServerTest {
 protected:
  static HubConfig no_push_delay() {
    HubConfig config = default_config();
    config.push.delay = Duration{0};
    return config;
  }
  HubServerPushTest() : HubServerTest(no_push_delay()) {}
};

TEST_F(HubServerPushTest, PushLeavesAfterTheDurableReplyItBuildsOn) {
  ASSERT_TRUE(request(beat_with_set("provider", 1, {reg("svc", "i1", "a:1")})));
  const std::vector<proto::Registration> own{reg("own", "c1", "b:1")};
  auto first = beat_with_set("consumer", 1, own);
  first.uses = {use("svc", 0)};
  const auto answer = request(first);
  ASSERT_TRUE(answer);
  const auto& listed = std::get<proto::DownBeat>(*answer);
  ASSERT_EQ(listed.updates.size(), 1u);
  const auto held = listed.updates[0].version;

  // One frame: a beat carrying the set (its reply waits for the commit) and a
  // change to the service it follows (pushed in the same pass, from `held`).
  auto again = beat_with_set("consumer", 2, own);
  again.uses = {use("svc", held)};
  proto::AdminRequest routes;
  routes.request_id = 7;
  routes.op = proto::AdminOp::kSetRoutes;
  routes.actor = "alice@ops-1";
  routes.service = {"svc", "default"};
  routes.routes = {{"=> zone = dc1", 0, false, true}};
  const std::vector<proto::Message> batch{again, routes};
  const auto bytes = proto::encode_batch(batch);
  client.send(zmq::buffer(bytes), zmq::send_flags::none);

  const auto replies = receive();
  ASSERT_TRUE(replies);
  ASSERT_TRUE(replies->batched) << "the push overtook the replies";
  EXPECT_EQ(std::get<proto::DownBeat>(std::get<proto::Message>(replies->items.at(0))).ack_seq, 2u);
  const auto push = receive();
  ASSERT_TRUE(push);
  const auto& down = std::get<proto::DownBeat>(std::get<proto::Message>(push->items.at(0)));
  EXPECT_TRUE(down.push);
  ASSERT_EQ(down.updates.size(), 1u);
  EXPECT_EQ(down.updates[0].from_version, held);
}

TEST_F(HubServerPushTest, AConfigEditIsPushedToTheGroupsFollowerBetweenItsBeats) {
  auto beat = beat_with_set("consumer", 1, {});
  beat.configs = {{"orders", 0}};
  const auto answer = request(beat);
  ASSERT_TRUE(answer);
  const auto& first = std::get<proto::DownBeat>(*answer);
  ASSERT_EQ(first.config_updates.size(), 1u);
  EXPECT_EQ(first.config_updates[0].kind, proto::UpdateKind::kGone) << "nothing set yet";

  const auto bytes = proto::encode(set_orders_timeout(8));
  client.send(zmq::buffer(bytes), zmq::send_flags::none);
  std::optional<proto::DownBeat> push;
  for (int frames = 0; frames < 3 && !push; ++frames) {
    const auto got = receive();
    ASSERT_TRUE(got) << "no push";
    for (const auto& item : got->items)
      if (const auto* down = std::get_if<proto::DownBeat>(&std::get<proto::Message>(item)))
        push = *down;
  }
  ASSERT_TRUE(push);
  EXPECT_TRUE(push->push);
  ASSERT_EQ(push->config_updates.size(), 1u);
  EXPECT_EQ(push->config_updates[0].upserts.at(0).value, "300");
}

// An L1 server under an L2 server, both real, on loopback.
class TieredHubServerTest : public ::testing::Test {
 protected:
  struct Running {
    std::unique_ptr<HubServer> server;
    std::string endpoint;
    std::thread thread;
  };
  Running start(HubConfig config) {
    Running r;
    config.listen = "tcp://127.0.0.1:*";
    r.server = std::make_unique<HubServer>(config, clock, stores.emplace_back(), context);
    r.endpoint = r.server->bind();
    r.thread = std::thread([this, s = r.server.get()] { s->run(stop); });
    return r;
  }
  ~TieredHubServerTest() override {
    stop = true;
    for (auto* r : {&l1, &l2})
      if (r->thread.joinable()) r->thread.join();
  }
  std::optional<proto::DecodedFrame> receive(zmq::socket_t& s, Duration timeout) {
    zmq::pollitem_t item{s.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, timeout);
    if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
    zmq::message_t m;
    if (!s.recv(m)) return std::nullopt;
    return proto::decode_frame(m.to_string_view());
  }

  SystemClock clock;
  std::deque<ScriptedStore> stores;
  zmq::context_t context{1};
  std::atomic<bool> stop{false};
  Running l2;
  Running l1;
};

TEST_F(TieredHubServerTest, BeatsInABatchAreAnsweredAtOnceAndAForwardedQueryLaterOnItsOwn) {
  HubConfig upper;
  upper.id = "l2";
  upper.tier = 2;
  l2 = start(upper);
  HubConfig lower;
  lower.id = "l1";
  lower.upstreams = {l2.endpoint};
  l1 = start(lower);

  zmq::socket_t agent{context, zmq::socket_type::dealer};
  agent.set(zmq::sockopt::linger, 0);
  agent.connect(l1.endpoint);
  proto::Query query;
  query.request_id = 77;
  query.service = test_support::key("elsewhere");
  const std::vector<proto::Message> batch{beat_with_set("n1", 1, {reg("svc", "i1", "a:1")}), query};
  const auto bytes = proto::encode_batch(batch);
  agent.send(zmq::buffer(bytes), zmq::send_flags::none);

  // Two frames, in either order: the beat's reply waits for its commit (slow
  // under a sanitizer), the query's for the upper tier's answer.
  auto first = receive(agent, Duration{3000});
  ASSERT_TRUE(first);
  auto second = receive(agent, Duration{3000});
  ASSERT_TRUE(second);
  if (!first->batched) std::swap(first, second);
  ASSERT_TRUE(first->batched);
  ASSERT_EQ(first->items.size(), 1u) << "the beat's reply does not wait for the upper tier";
  EXPECT_TRUE(std::holds_alternative<proto::DownBeat>(std::get<proto::Message>(first->items[0])));

  EXPECT_FALSE(second->batched) << "the forwarded query is answered on its own";
  const auto& reply = std::get<proto::QueryReply>(std::get<proto::Message>(second->items.at(0)));
  EXPECT_EQ(reply.request_id, 77u);
  EXPECT_FALSE(reply.found) << "L2 knows no such service";
  EXPECT_EQ(reply.source, proto::AnswerSource::kUpstream);
}

// The idle timeout spares trusted peers (a lower-tier hub, a proxy). With
// keys, trust comes from the key's role, never from what a frame claims.
TEST(PeerKindTest, AgentKeyIsNeverTrustedWhateverItsFramesClaim) {
  auto hub_like = testing::beat("n1", 1, 0);
  hub_like.sender_tier = 1;
  const proto::DecodedFrame claims_hub{false, {proto::Message{hub_like}}};
  const proto::DecodedFrame batch{true, {proto::Message{testing::beat("n1", 2, 0)}}};
  const access::Principal agent{"web", access::Role::kAgent, {}, {}};
  const access::Principal l1{"l1", access::Role::kHub, {}, {}};
  const access::Principal proxy{"p", access::Role::kProxy, {}, {}};

  EXPECT_EQ(peer_kind(claims_hub, &agent), PeerKind::kAgent);
  EXPECT_EQ(peer_kind(batch, &agent), PeerKind::kAgent);
  EXPECT_EQ(peer_kind(claims_hub, &l1), PeerKind::kTrusted);
  EXPECT_EQ(peer_kind(batch, &proxy), PeerKind::kTrusted);
  EXPECT_EQ(peer_kind(claims_hub), PeerKind::kTrusted) << "without keys, claims are all there is";
}

}  // namespace
}  // namespace cascade::hub
