// A hub with keys, on real sockets in this process: who gets in, who gets
// nothing, and what a reload of the authorised keys changes (and does not).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <thread>

#include "cascade/common/codec.hpp"
#include "cascade/common/curve_keys.hpp"
#include "cascade/common/digest.hpp"
#include "cascade/hub/hub_server.hpp"
#include "cascade/hub/proxy_server.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/tests/common/builders.hpp"
#include "cascade/tests/store/temp_dir.hpp"

namespace cascade::hub {
namespace {

using store_test::TempDir;

// A DEALER as an agent or tool would have it: Curve with `own` (or plain
// text without), one request, one reply.
class TestClient {
 public:
  TestClient(zmq::context_t& context, const std::string& endpoint,
             const std::optional<curve::KeyPair>& own, const std::string& server_public)
      : socket_(context, zmq::socket_type::dealer) {
    socket_.set(zmq::sockopt::linger, 0);
    if (own) curve::make_curve_client(socket_, *own, server_public);
    socket_.connect(endpoint);
  }
  std::optional<proto::Message> request(const proto::Message& m,
                                        Duration timeout = Duration{1500}) {
    const auto bytes = proto::encode(m);
    socket_.send(zmq::buffer(bytes), zmq::send_flags::dontwait);
    return receive(timeout);
  }
  // The next message the hub sends this client (a reply or a push).
  std::optional<proto::Message> receive(Duration timeout = Duration{1500}) {
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, timeout);
    zmq::message_t reply;
    if (!(item.revents & ZMQ_POLLIN) || !socket_.recv(reply)) return std::nullopt;
    return std::get<proto::Message>(proto::decode_frame(reply.to_string_view()).items.at(0));
  }
  std::optional<proto::StatusReply> status() {
    auto reply = request(proto::StatusRequest{++request_id_});
    if (!reply || !std::holds_alternative<proto::StatusReply>(*reply)) return std::nullopt;
    return std::get<proto::StatusReply>(*reply);
  }

 private:
  zmq::socket_t socket_;
  std::uint64_t request_id_ = 0;
};

std::uint64_t counter(const proto::StatusReply& status, std::string_view name) {
  for (const auto& [key, value] : status.counters)
    if (key == name) return value;
  ADD_FAILURE() << "no counter " << name;
  return 0;
}

class CurveHubTest : public ::testing::Test {
 protected:
  CurveHubTest() {
    curve::write_key_files(dir.path(), "hub", server_keys);
    authorize({{alice, "alice agent"}, {bob, "bob agent"}, {ops, "ops operator"}});
    HubConfig config;
    config.listen = "tcp://127.0.0.1:*";
    config.flush_interval = Duration{5};
    config.security.secret_key = dir.path() / "hub.key";
    config.security.authorized_keys = dir.path() / "authorized_keys";
    store = SqliteHubStore::open(dir.path() / "data", sqlite::Synchronous::kNormal);
    server = std::make_unique<HubServer>(config, clock, *store, context);
    endpoint = server->bind();
    thread = std::thread([this] { server->run(stop, &reload); });
  }
  ~CurveHubTest() override {
    stop = true;
    thread.join();
  }
  void authorize(const std::vector<std::pair<curve::KeyPair, std::string>>& lines) {
    std::ofstream out(dir.path() / "authorized_keys", std::ios::trunc);
    out << "# written by the test\n";
    for (const auto& [keys, rest] : lines)
      out << keys.public_z85 << " " << rest << "\n";
  }
  TestClient client(const std::optional<curve::KeyPair>& own) {
    return TestClient(context, endpoint, own, server_keys.public_z85);
  }

  TempDir dir;
  const curve::KeyPair server_keys = curve::generate_key_pair();
  const curve::KeyPair alice = curve::generate_key_pair();
  const curve::KeyPair bob = curve::generate_key_pair();
  const curve::KeyPair ops = curve::generate_key_pair();
  SystemClock clock;
  zmq::context_t context{1};
  std::unique_ptr<SqliteHubStore> store;
  std::unique_ptr<HubServer> server;
  std::string endpoint;
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};
  std::thread thread;
};

TEST_F(CurveHubTest, AuthorisedKeyIsServedAndStatusSaysCurve) {
  auto alice_client = client(alice);
  const auto status = alice_client.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->security, "curve");
  EXPECT_GE(counter(*status, "zap_accepted"), 1u);
  EXPECT_EQ(counter(*status, "zap_refused"), 0u);
}

TEST_F(CurveHubTest, UnknownKeyGetsNothingAndIsCounted) {
  auto stranger = client(curve::generate_key_pair());
  EXPECT_FALSE(stranger.request(proto::StatusRequest{1}, Duration{500}).has_value());
  const auto status = client(alice).status();
  ASSERT_TRUE(status.has_value());
  EXPECT_GE(counter(*status, "zap_refused"), 1u);
}

TEST_F(CurveHubTest, PlaintextClientGetsNothing) {
  auto plain = client(std::nullopt);
  EXPECT_FALSE(plain.request(proto::StatusRequest{1}, Duration{500}).has_value());
}

TEST_F(CurveHubTest, KeyRemovedBySighupReloadIsUnauthenticatedOthersKeepWorking) {
  auto alice_client = client(alice);
  auto bob_client = client(bob);
  ASSERT_TRUE(alice_client.status().has_value());
  ASSERT_TRUE(bob_client.status().has_value());
  authorize({{bob, "bob agent"}, {ops, "ops operator"}});
  reload = true;  // what SIGHUP does in cascade-hub
  for (int i = 0; i < 100 && reload; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds{10});
  const auto refused = alice_client.request(proto::StatusRequest{7});
  ASSERT_TRUE(refused.has_value());
  ASSERT_TRUE(std::holds_alternative<proto::ErrorReply>(*refused));
  EXPECT_EQ(std::get<proto::ErrorReply>(*refused).code, proto::ErrorCode::kUnauthenticated);
  const auto status = bob_client.status();  // the same connection as before the reload
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(counter(*status, "unauthenticated"), 1u);
}

TEST_F(CurveHubTest, ReloadCommandAddsAKeyWithoutDroppingAnyone) {
  auto alice_client = client(alice);
  ASSERT_TRUE(alice_client.status().has_value());
  const auto carol = curve::generate_key_pair();
  authorize({{alice, "alice agent"}, {ops, "ops operator"}, {carol, "carol agent"}});
  proto::AdminRequest reload_keys;
  reload_keys.request_id = 9;
  reload_keys.op = proto::AdminOp::kReloadKeys;
  reload_keys.actor = "test";
  reload_keys.service = {"", ""};
  const auto reply = client(ops).request(reload_keys);
  ASSERT_TRUE(reply.has_value());
  ASSERT_TRUE(std::holds_alternative<proto::AdminReply>(*reply));
  EXPECT_TRUE(std::get<proto::AdminReply>(*reply).ok);
  EXPECT_THAT(std::get<proto::AdminReply>(*reply).message, ::testing::HasSubstr("reloaded 3"));
  EXPECT_TRUE(client(carol).status().has_value());
  EXPECT_TRUE(alice_client.status().has_value());
}

TEST_F(CurveHubTest, BadFileOnReloadKeepsTheKeysInUseAndSaysWhy) {
  std::ofstream(dir.path() / "authorized_keys", std::ios::trunc) << "garbage line here\n";
  proto::AdminRequest reload_keys;
  reload_keys.request_id = 3;
  reload_keys.op = proto::AdminOp::kReloadKeys;
  reload_keys.actor = "test";
  reload_keys.service = {"", ""};
  auto ops_client = client(ops);
  const auto reply = ops_client.request(reload_keys);
  ASSERT_TRUE(reply.has_value());
  ASSERT_TRUE(std::holds_alternative<proto::AdminReply>(*reply));
  EXPECT_FALSE(std::get<proto::AdminReply>(*reply).ok);
  EXPECT_THAT(std::get<proto::AdminReply>(*reply).message,
              ::testing::HasSubstr("authorized_keys:1: bad key"));
  EXPECT_TRUE(client(bob).status().has_value());  // the old table still admits bob
  // The audit log has the request with its outcome, and the key that asked.
  const auto audit =
      SqliteHubStore::open(dir.path() / "data", sqlite::Synchronous::kNormal)->audit_log(1);
  ASSERT_EQ(audit.size(), 1u);
  EXPECT_EQ(audit[0].op, "reload_keys");
  EXPECT_EQ(audit[0].key, "ops");
  EXPECT_FALSE(audit[0].ok);
  EXPECT_THAT(audit[0].detail, ::testing::HasSubstr("authorized_keys:1: bad key"));
}

// A proxy with keys between agents and a hub with keys: the proxy admits the
// agents it knows, and dials the hub with its own key (role proxy there).
// Two contexts: one ZAP handler per context, as in two processes.
class CurveProxyTest : public CurveHubTest {
 protected:
  CurveProxyTest() {
    curve::write_key_files(dir.path(), "proxy", proxy_keys);
    authorize({{alice, "alice agent"}, {proxy_keys, "proxy-1 proxy"}});
    reload = true;  // the hub admits the proxy from now on
    for (int i = 0; i < 100 && reload; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    std::ofstream(dir.path() / "proxy_authorized_keys") << carol.public_z85 << " carol agent\n";
    ProxyServerConfig config;
    config.listen = "tcp://127.0.0.1:*";
    config.upstream = endpoint;
    config.security.secret_key = dir.path() / "proxy.key";
    config.security.authorized_keys = dir.path() / "proxy_authorized_keys";
    config.security.upstream_public_keys = {(dir.path() / "hub.pub").string()};
    proxy = std::make_unique<ProxyServer>(config, clock, proxy_context);
    proxy_endpoint = proxy->bind();
    proxy_thread = std::thread([this] { proxy->run(proxy_stop); });
  }
  ~CurveProxyTest() override {
    proxy_stop = true;
    proxy_thread.join();
  }
  TestClient proxy_client(const curve::KeyPair& own) {
    return TestClient(context, proxy_endpoint, own, proxy_keys.public_z85);
  }

  const curve::KeyPair proxy_keys = curve::generate_key_pair();
  const curve::KeyPair carol = curve::generate_key_pair();
  zmq::context_t proxy_context{1};
  std::unique_ptr<ProxyServer> proxy;
  std::string proxy_endpoint;
  std::atomic<bool> proxy_stop{false};
  std::thread proxy_thread;
};

TEST_F(CurveProxyTest, AgentKnownToTheProxyReachesTheHubThroughIt) {
  auto carol_client = proxy_client(carol);
  const auto status = carol_client.status();
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->security, "curve");  // the hub's, forwarded
}

TEST_F(CurveProxyTest, KeyUnknownToTheProxyGetsNothing) {
  auto alice_client = proxy_client(alice);  // known to the hub, not to the proxy
  EXPECT_FALSE(alice_client.request(proto::StatusRequest{1}, Duration{500}).has_value());
}

// A refused beat for another key's node must not move that node's route:
// pushes (between beats) keep going to the node's own connection.
TEST_F(CurveHubTest, RefusedBeatForAnotherKeysNodeDoesNotTakeItsPushes) {
  auto victim = client(alice);
  auto attacker = client(bob);
  proto::UpBeat provider;  // the service must exist for n1 to follow it
  provider.node_id = "p1";
  provider.epoch = 1;
  provider.seq = 1;
  provider.registrations = {test_support::reg("svc", "i1", "127.0.0.1:9")};
  provider.digest = proto::digest_of(*provider.registrations);
  ASSERT_TRUE(client(alice).request(provider).has_value());
  proto::UpBeat beat;
  beat.node_id = "n1";
  beat.epoch = 1;
  beat.seq = 1;
  beat.uses = {{{"svc", "default"}, 0}};
  ASSERT_TRUE(victim.request(beat).has_value());
  beat.seq = 2;
  const auto refused = attacker.request(beat);
  ASSERT_TRUE(refused && std::holds_alternative<proto::ErrorReply>(*refused));
  EXPECT_EQ(std::get<proto::ErrorReply>(*refused).code, proto::ErrorCode::kForbidden);

  proto::AdminRequest routes;  // consumers of svc get the new rules pushed
  routes.request_id = 1;
  routes.op = proto::AdminOp::kSetRoutes;
  routes.actor = "ops@test";
  routes.service = {"svc", "default"};
  routes.routes = {{"=> zone = dc1", 0, false, true}};
  ASSERT_TRUE(client(ops).request(routes).has_value());

  const auto push = victim.receive(Duration{3000});
  ASSERT_TRUE(push && std::holds_alternative<proto::DownBeat>(*push));
  EXPECT_TRUE(std::get<proto::DownBeat>(*push).push);
  EXPECT_FALSE(attacker.receive(Duration{300}).has_value());
}

}  // namespace
}  // namespace cascade::hub
