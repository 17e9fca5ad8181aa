#include "cascade/hub/proxy_core.hpp"

#include <gtest/gtest.h>

#include "cascade/common/codec.hpp"
#include "cascade/hub/hub_core.hpp"
#include "cascade/tests/hub/hub_test_util.hpp"

namespace cascade::hub {
namespace {

using namespace cascade::hub::testing;

constexpr Duration kDelay{20};
constexpr Duration kReplyTimeout{5000};

proto::Query query(std::uint64_t request_id, const std::string& service) {
  proto::Query q;
  q.request_id = request_id;
  q.service.name = service;
  return q;
}

proto::DownBeat down_for(const proto::UpBeat& b) {
  proto::DownBeat d;
  d.hub_id = "hub-a";
  d.node_id = b.node_id;
  d.ack_seq = b.seq;
  return d;
}

class ProxyCoreTest : public ::testing::Test {
 protected:
  static ProxyCoreConfig config(std::size_t max_batch = 4) {
    ProxyCoreConfig c;
    c.max_batch = max_batch;
    c.max_delay = kDelay;
    c.reply_timeout = kReplyTimeout;
    return c;
  }
  FakeClock clock;
  ProxyCore proxy{config()};

  ProxyActions send(PeerToken peer, proto::Message msg) {
    return proxy.accept(clock.now(), peer, std::move(msg));
  }
  // Flushes whatever is pending by firing the batch timer at its deadline.
  std::vector<proto::Message> flush() {
    clock.advance(kDelay);
    auto actions = proxy.on_timer(clock.now());
    EXPECT_EQ(actions.upstream_batches.size(), 1u);
    return actions.upstream_batches.empty() ? std::vector<proto::Message>{}
                                            : actions.upstream_batches.front();
  }
};

TEST_F(ProxyCoreTest, FullBatchFlushesImmediately) {
  for (std::uint64_t seq = 1; seq <= 3; ++seq)
    EXPECT_TRUE(send(seq, beat("n" + std::to_string(seq), seq, 0)).upstream_batches.empty());
  auto actions = send(4, beat("n4", 4, 0));
  ASSERT_EQ(actions.upstream_batches.size(), 1u);
  EXPECT_EQ(actions.upstream_batches[0].size(), 4u);
  EXPECT_EQ(std::get<proto::UpBeat>(actions.upstream_batches[0][0]).node_id, "n1");
  EXPECT_EQ(proxy.pending_count(), 0u);
  EXPECT_EQ(proxy.counters().batches, 1u);
  EXPECT_EQ(proxy.counters().forwarded, 4u);
}

TEST_F(ProxyCoreTest, PartialBatchFlushesExactlyAtMaxDelayNotBefore) {
  EXPECT_EQ(proxy.next_deadline(), std::nullopt);
  const MonoTime first = clock.now();
  send(1, beat("n1", 1, 0));
  clock.advance(Duration{5});
  send(2, beat("n2", 1, 0));
  EXPECT_EQ(proxy.next_deadline(), first + kDelay) << "the oldest message sets the deadline";
  clock.set(first + kDelay - Duration{1});
  EXPECT_TRUE(proxy.on_timer(clock.now()).upstream_batches.empty());
  clock.set(first + kDelay);
  auto actions = proxy.on_timer(clock.now());
  ASSERT_EQ(actions.upstream_batches.size(), 1u);
  EXPECT_EQ(actions.upstream_batches[0].size(), 2u);
  EXPECT_EQ(proxy.next_deadline(), first + kDelay + kReplyTimeout) << "now the reply timeout";
}

TEST_F(ProxyCoreTest, BatchOfOneMessageIsSent) {
  send(9, beat("n1", 1, 0));
  EXPECT_EQ(flush().size(), 1u);
}

TEST_F(ProxyCoreTest, RepliesRouteBackToTheRightPeersByNodeId) {
  auto b1 = beat("n1", 10, 0);
  auto b2 = beat("n2", 20, 0);
  proto::Deregister dereg{"n3", 1, 30};
  send(101, b1);
  send(102, b2);
  send(103, dereg);
  flush();
  auto actions = proxy.on_upstream_reply(
      clock.now(), {down_for(b1), down_for(b2), proto::DeregisterAck{"n3", 30, 2}});
  ASSERT_EQ(actions.downstream.size(), 3u);
  EXPECT_EQ(actions.downstream[0].peer, 101u);
  EXPECT_EQ(std::get<proto::DownBeat>(actions.downstream[0].message).node_id, "n1");
  EXPECT_EQ(actions.downstream[1].peer, 102u);
  EXPECT_EQ(actions.downstream[2].peer, 103u);
  EXPECT_EQ(proxy.in_flight_count(), 0u);
  EXPECT_EQ(proxy.counters().replies_routed, 3u);
}

TEST_F(ProxyCoreTest, ReplyFrameWithADifferentCountIsMatchedByIdentity) {
  auto b1 = beat("n1", 10, 0);
  auto b2 = beat("n2", 20, 0);
  send(101, b1);
  send(102, b2);
  flush();
  auto actions = proxy.on_upstream_reply(clock.now(), {down_for(b2)});
  ASSERT_EQ(actions.downstream.size(), 1u);
  EXPECT_EQ(actions.downstream[0].peer, 102u);
  actions = proxy.on_upstream_reply(clock.now(), {down_for(b1)});
  ASSERT_EQ(actions.downstream.size(), 1u);
  EXPECT_EQ(actions.downstream[0].peer, 101u);
}

TEST_F(ProxyCoreTest, ReplyThatFailsPositionalValidationFallsBackToIdentity) {
  auto b1 = beat("n1", 10, 0);
  auto b2 = beat("n2", 20, 0);
  send(101, b1);
  send(102, b2);
  flush();
  // Same count, but swapped: each is still delivered to its own peer.
  auto actions = proxy.on_upstream_reply(clock.now(), {down_for(b2), down_for(b1)});
  ASSERT_EQ(actions.downstream.size(), 2u);
  EXPECT_EQ(actions.downstream[0].peer, 102u);
  EXPECT_EQ(actions.downstream[1].peer, 101u);
}

TEST_F(ProxyCoreTest, CollidingRequestIdsFromTwoPeersAreRewrittenAndRestored) {
  send(1, query(7, "a"));
  send(2, query(7, "b"));
  auto batch = flush();
  ASSERT_EQ(batch.size(), 2u);
  const auto up_a = std::get<proto::Query>(batch[0]).request_id;
  const auto up_b = std::get<proto::Query>(batch[1]).request_id;
  EXPECT_NE(up_a, up_b) << "upstream ids are proxy-unique";
  proto::QueryReply ra;
  ra.request_id = up_a;
  ra.service.name = "a";
  proto::QueryReply rb;
  rb.request_id = up_b;
  rb.service.name = "b";
  // Answered out of order and in separate frames: identity still finds each.
  auto actions = proxy.on_upstream_reply(clock.now(), {rb});
  actions.downstream.push_back(proxy.on_upstream_reply(clock.now(), {ra}).downstream.at(0));
  ASSERT_EQ(actions.downstream.size(), 2u);
  EXPECT_EQ(actions.downstream[0].peer, 2u);
  EXPECT_EQ(std::get<proto::QueryReply>(actions.downstream[0].message).request_id, 7u);
  EXPECT_EQ(std::get<proto::QueryReply>(actions.downstream[0].message).service.name, "b");
  EXPECT_EQ(actions.downstream[1].peer, 1u);
  EXPECT_EQ(std::get<proto::QueryReply>(actions.downstream[1].message).request_id, 7u);
}

TEST_F(ProxyCoreTest, ErrorReplyForARequestIsRoutedByPositionWithItsIdRestored) {
  send(1, beat("n1", 5, 0));
  send(2, proto::StatusRequest{99});
  auto batch = flush();
  const auto up = std::get<proto::StatusRequest>(batch[1]).request_id;
  auto actions = proxy.on_upstream_reply(
      clock.now(), {proto::ErrorReply{proto::ErrorCode::kInvalid, "bad beat", 5},
                    proto::ErrorReply{proto::ErrorCode::kInvalid, "bad request", up}});
  ASSERT_EQ(actions.downstream.size(), 2u);
  EXPECT_EQ(actions.downstream[0].peer, 1u);
  EXPECT_EQ(std::get<proto::ErrorReply>(actions.downstream[0].message).ref, 5u);
  EXPECT_EQ(actions.downstream[1].peer, 2u);
  EXPECT_EQ(std::get<proto::ErrorReply>(actions.downstream[1].message).ref, 99u);
}

TEST_F(ProxyCoreTest, WholeFrameRejectionReachesEveryPeerOfTheBatch) {
  send(1, beat("n1", 1, 0));
  send(2, beat("n2", 1, 0));
  flush();
  auto actions = proxy.on_upstream_reply(
      clock.now(), {proto::ErrorReply{proto::ErrorCode::kTooLarge, "frame too large", 0}});
  ASSERT_EQ(actions.downstream.size(), 2u);
  EXPECT_EQ(actions.downstream[0].peer, 1u);
  EXPECT_EQ(actions.downstream[1].peer, 2u);
  EXPECT_EQ(proxy.in_flight_count(), 0u);
}

// A hub past its queue bound sheds a batch unread (protocol section 5.18):
// each agent learns its own beat or query was shed, and when to ask again.
TEST_F(ProxyCoreTest, ShedBatchTellsEveryPeerWhichOfItsMessagesWasShed) {
  send(1, beat("n1", 7, 0));
  send(2, proto::StatusRequest{99});
  flush();
  auto actions = proxy.on_upstream_reply(
      clock.now(), {proto::ErrorReply{proto::ErrorCode::kBusy, "hub overloaded", 0, 4000}});
  ASSERT_EQ(actions.downstream.size(), 2u);
  const auto& to_agent = std::get<proto::ErrorReply>(actions.downstream[0].message);
  const auto& to_tool = std::get<proto::ErrorReply>(actions.downstream[1].message);
  EXPECT_EQ(actions.downstream[0].peer, 1u);
  EXPECT_EQ(to_agent.ref, 7u);  // the beat's seq
  EXPECT_EQ(to_agent.retry_after_ms, 4000u);
  EXPECT_EQ(actions.downstream[1].peer, 2u);
  EXPECT_EQ(to_tool.ref, 99u);  // the tool's own request id, not the proxy's
  EXPECT_EQ(to_tool.code, proto::ErrorCode::kBusy);
  EXPECT_EQ(proxy.in_flight_count(), 0u);
}

TEST_F(ProxyCoreTest, ReplyForAnUnknownRequestIsCountedNotDelivered) {
  proto::QueryReply stray;
  stray.request_id = 12345;
  auto actions = proxy.on_upstream_reply(clock.now(), {stray, down_for(beat("ghost", 1, 0))});
  EXPECT_TRUE(actions.downstream.empty());
  EXPECT_EQ(proxy.counters().unmatched_replies, 2u);
  EXPECT_EQ(proxy.counters().replies_routed, 0u);
}

TEST_F(ProxyCoreTest, InFlightEntriesExpireAfterReplyTimeout) {
  auto b = beat("n1", 1, 0);
  send(1, b);
  send(2, query(3, "svc"));
  auto batch = flush();
  const MonoTime sent = clock.now();
  clock.set(sent + kReplyTimeout - Duration{1});
  proxy.on_timer(clock.now());
  EXPECT_EQ(proxy.in_flight_count(), 2u);
  clock.set(sent + kReplyTimeout);
  proxy.on_timer(clock.now());
  EXPECT_EQ(proxy.in_flight_count(), 0u);
  EXPECT_EQ(proxy.counters().timed_out, 2u);
  EXPECT_EQ(proxy.next_deadline(), std::nullopt);
  // The answer that finally arrives is expired: counted, not delivered.
  proto::QueryReply late;
  late.request_id = std::get<proto::Query>(batch[1]).request_id;
  auto actions = proxy.on_upstream_reply(clock.now(), {down_for(b), late});
  EXPECT_TRUE(actions.downstream.empty());
  EXPECT_EQ(proxy.counters().unmatched_replies, 2u);
}

TEST_F(ProxyCoreTest, UnsupportedMessageTypesGetAnErrorReply) {
  auto actions = send(5, proto::DownBeat{});
  ASSERT_EQ(actions.downstream.size(), 1u);
  EXPECT_EQ(actions.downstream[0].peer, 5u);
  EXPECT_EQ(std::get<proto::ErrorReply>(actions.downstream[0].message).code,
            proto::ErrorCode::kUnknownType);
  EXPECT_TRUE(actions.upstream_batches.empty());
  EXPECT_EQ(proxy.pending_count(), 0u);
  EXPECT_EQ(proxy.counters().rejected, 1u);
  EXPECT_EQ(proxy.counters().forwarded, 0u);
}

TEST(ProxyCoreConfigTest, BatchesNeverExceedKMaxBatchMessages) {
  ProxyCoreConfig c;
  c.max_batch = proto::kMaxBatchMessages + 1;
  EXPECT_NE(check_proxy_config(c), "");
  EXPECT_TRUE(std::holds_alternative<std::string>(ProxyCore::create(c)));

  c.max_batch = proto::kMaxBatchMessages;
  auto created = ProxyCore::create(c);
  ASSERT_TRUE(std::holds_alternative<ProxyCore>(created));
  ProxyCore& proxy = std::get<ProxyCore>(created);
  FakeClock clock;
  std::size_t sent = 0;
  const std::size_t total = 2 * proto::kMaxBatchMessages + 5;
  for (std::uint64_t i = 1; i <= total; ++i) {
    for (auto& batch : proxy.accept(clock.now(), i, beat("n", i, 0)).upstream_batches) {
      EXPECT_LE(batch.size(), proto::kMaxBatchMessages);
      sent += batch.size();
    }
  }
  EXPECT_EQ(sent, 2 * proto::kMaxBatchMessages);
  EXPECT_EQ(proxy.pending_count(), 5u);
}

TEST(ProxyCoreConfigTest, DelayOverFiftyMsIsRejected) {
  ProxyCoreConfig c;
  EXPECT_EQ(check_proxy_config(c), "") << "defaults are valid";
  c.max_delay = kMaxProxyDelay + Duration{1};
  EXPECT_NE(check_proxy_config(c), "");
  c.max_delay = kMaxProxyDelay;
  EXPECT_EQ(check_proxy_config(c), "");
  c.reply_timeout = c.max_delay;
  EXPECT_NE(check_proxy_config(c), "");
}

// A ProxyCore in front of a real HubCore, every frame through the codec.
TEST(ProxyCoreEndToEndTest, EachAgentGetsItsOwnDownBeatThroughARealHub) {
  FakeClock clock;
  HubCore hub{HubCoreConfig{"hub-a", 1, Duration{6000}}, /*epoch=*/7, clock.now()};
  ProxyCoreConfig c;
  c.max_batch = 16;  // more than the test sends: the timer flushes
  c.max_delay = kDelay;
  ProxyCore proxy{c};

  std::vector<proto::UpBeat> beats;
  for (int agent = 0; agent < 5; ++agent) {
    const std::string node = "node-" + std::to_string(agent);
    beats.push_back(
        beat_with_set(node, 100 + agent, {reg("svc", node, "10.0.0." + std::to_string(agent))}));
  }
  beats.push_back(beat_with_set("node-2", 200, {reg("svc", "node-2", "10.0.0.2")}));  // resent
  for (std::size_t i = 0; i < beats.size(); ++i)
    proxy.accept(clock.now(), /*peer=*/1000 + i, beats[i]);
  proxy.accept(clock.now(), 2000, query(1, "svc"));
  proxy.accept(clock.now(), 2001, query(1, "svc"));
  clock.advance(kDelay);
  auto actions = proxy.on_timer(clock.now());
  ASSERT_EQ(actions.upstream_batches.size(), 1u);

  // Proxy -> wire -> hub -> wire -> proxy.
  const proto::Bytes frame = proto::encode_batch(actions.upstream_batches[0]);
  auto decoded = proto::decode_frame(frame);
  ASSERT_TRUE(decoded.batched);
  std::vector<proto::Message> hub_replies;
  for (auto& item : decoded.items)
    hub_replies.push_back(hub.handle(clock.now(), std::get<proto::Message>(item)).reply);
  auto reply_frame = proto::decode_frame(proto::encode_batch(hub_replies));
  std::vector<proto::Message> replies;
  for (auto& item : reply_frame.items)
    replies.push_back(std::get<proto::Message>(item));

  auto routed = proxy.on_upstream_reply(clock.now(), std::move(replies));
  ASSERT_EQ(routed.downstream.size(), beats.size() + 2);
  for (std::size_t i = 0; i < beats.size(); ++i) {
    EXPECT_EQ(routed.downstream[i].peer, 1000 + i);
    const auto& down = std::get<proto::DownBeat>(routed.downstream[i].message);
    EXPECT_EQ(down.node_id, beats[i].node_id);
    EXPECT_EQ(down.ack_seq, beats[i].seq);
  }
  for (std::size_t i : {beats.size(), beats.size() + 1}) {
    EXPECT_EQ(routed.downstream[i].peer, 2000 + (i - beats.size()));
    const auto& q = std::get<proto::QueryReply>(routed.downstream[i].message);
    EXPECT_EQ(q.request_id, 1u);
    EXPECT_TRUE(q.found);
    EXPECT_EQ(q.instances.size(), 5u);
  }
  EXPECT_EQ(proxy.in_flight_count(), 0u);
  EXPECT_EQ(proxy.counters().unmatched_replies, 0u);
  EXPECT_EQ(hub.node_count(), 5u);
}

// ---------------------------------------------------------------- keys

class KeyedProxyCoreTest : public ProxyCoreTest {
 protected:
  access::Principal agent{"web-7", access::Role::kAgent, access::ServiceScope({"web*"}),
                          access::ServiceScope({"orders"})};
  access::Principal reader{"dash", access::Role::kReader, {}, {}};

  ProxyActions send_as(const access::Principal& key, proto::Message msg) {
    return proxy.accept(clock.now(), 1, std::move(msg), &key);
  }
  static proto::ErrorCode refused_with(const ProxyActions& actions) {
    if (actions.downstream.size() != 1) return proto::ErrorCode{0};
    const auto* e = std::get_if<proto::ErrorReply>(&actions.downstream[0].message);
    return e ? e->code : proto::ErrorCode{0};
  }
};

TEST_F(KeyedProxyCoreTest, ForwardedMessagesNameTheKeyTheyCameWith) {
  send_as(agent, beat_with_set("n1", 1, {reg("web", "w1", "10.0.0.1:80")}));
  send_as(agent, query(7, "orders"));
  send_as(agent, proto::Deregister{"n1", 1, 2});
  const auto batch = flush();
  ASSERT_EQ(batch.size(), 3u);
  EXPECT_EQ(std::get<proto::UpBeat>(batch[0]).on_behalf_of, "web-7");
  EXPECT_EQ(std::get<proto::Query>(batch[1]).on_behalf_of, "web-7");
  EXPECT_EQ(std::get<proto::Deregister>(batch[2]).on_behalf_of, "web-7");

  proto::FailureReport report;
  report.signals.push_back(
      {test_support::key("orders"), "10.0.0.9:80", proto::FailureKind::kTimeout, "anyone", 1});
  const auto now = send_as(agent, report);
  ASSERT_EQ(now.upstream_now.size(), 1u);
  EXPECT_EQ(std::get<proto::FailureReport>(now.upstream_now[0]).on_behalf_of, "web-7");
}

TEST_F(KeyedProxyCoreTest, WhatTheAgentsKeyMayNotSendIsRefusedHereAndNeverForwarded) {
  EXPECT_EQ(refused_with(send_as(agent, beat_with_set("n1", 1, {reg("payroll", "p1", "h:1")}))),
            proto::ErrorCode::kForbidden);
  EXPECT_EQ(refused_with(send_as(agent, query(8, "payroll"))), proto::ErrorCode::kForbidden);
  EXPECT_EQ(refused_with(send_as(reader, beat("n2", 1, 0))), proto::ErrorCode::kForbidden);
  auto forged = query(9, "orders");
  forged.on_behalf_of = "someone-else";  // only a proxy may vouch
  EXPECT_EQ(refused_with(send_as(agent, forged)), proto::ErrorCode::kForbidden);
  EXPECT_EQ(proxy.pending_count(), 0u);
  EXPECT_EQ(proxy.counters().forbidden, 4u);
}

}  // namespace
}  // namespace cascade::hub
