// The HTTP server against libcurl on loopback:
// routing, errors, limits, tokens, peers, and requests parked without a thread.
#include "cascade/http/server.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "cascade/http/router.hpp"
#include "cascade/tests/common/curl_client.hpp"
#include "cascade/tests/http/raw_client.hpp"

namespace cascade::http {
namespace {

using ::testing::HasSubstr;
using testing::http;
using testing::http_all;
using testing::http_get;
using testing::HttpCall;
using testing::RawClient;

SocketAddress loopback_any_port() {
  return std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:0"));
}

// A router whose /park requests wait until release() answers them all.
class ParkingRouter {
 public:
  ParkingRouter() {
    router.add("GET", "/hello/{who}", [](const Request&, const PathParams& p, const ResponderPtr&) {
      return Response::json(200, "{\"hello\":\"" + p.at("who") + "\"}");
    });
    router.add("PUT", "/echo", [](const Request& r, const PathParams&, const ResponderPtr&) {
      return Response::json(200, r.body);
    });
    router.add("GET", "/whoami", [](const Request& r, const PathParams&, const ResponderPtr&) {
      return Response::json(200, "\"" + r.token_name + "\"");
    });
    router.add("GET", "/throw",
               [](const Request&, const PathParams&, const ResponderPtr&) -> Reply {
                 throw std::runtime_error("boom");
               });
    router.add("GET", "/park",
               [this](const Request&, const PathParams&, const ResponderPtr& later) {
                 std::lock_guard lock(mu);
                 parked.push_back(later);
                 return Reply{};
               });
  }
  void release(const std::string& body) {
    std::vector<ResponderPtr> all;
    {
      std::lock_guard lock(mu);
      all.swap(parked);
    }
    for (auto& p : all)
      p->respond(Response::json(200, body));
  }
  std::size_t parked_count() {
    std::lock_guard lock(mu);
    return parked.size();
  }

  Router router;
  std::mutex mu;
  std::vector<ResponderPtr> parked;
};

class HttpServerTest : public ::testing::Test {
 protected:
  std::unique_ptr<Server> start(ServerConfig config = {}) {
    config.listen = loopback_any_port();
    auto server = std::make_unique<Server>(std::move(config), routes.router);
    base = "http://" + server->local_address().to_string();
    return server;
  }
  bool wait_parked(std::size_t n) {
    for (int i = 0; i < 1000 && routes.parked_count() < n; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    return routes.parked_count() == n;
  }
  ParkingRouter routes;
  std::string base;
};

TEST_F(HttpServerTest, RoutesCaptureSegmentsAndAnswerJson) {
  auto server = start();
  const auto r = http_get(base + "/hello/world");
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body, "{\"hello\":\"world\"}");
  EXPECT_EQ(r.headers.at("content-type"), "application/json");
}

TEST_F(HttpServerTest, UnknownPathIs404AndWrongMethodIs405WithAllow) {
  auto server = start();
  const auto missing = http_get(base + "/nothing");
  EXPECT_EQ(missing.status, 404);
  EXPECT_THAT(missing.body, HasSubstr("\"code\":\"no_route\""));
  const auto wrong = http({"DELETE", base + "/hello/x"});
  EXPECT_EQ(wrong.status, 405);
  EXPECT_EQ(wrong.headers.at("allow"), "GET");
  EXPECT_THAT(wrong.body, HasSubstr("method_not_allowed"));
}

TEST_F(HttpServerTest, BodiesOverTheLimitAreRefusedWith413) {
  ServerConfig config;
  config.max_body_bytes = 1024;
  auto server = start(config);
  EXPECT_EQ(http({"PUT", base + "/echo", std::string(1000, 'a')}).body, std::string(1000, 'a'));
  const auto big = http({"PUT", base + "/echo", std::string(5000, 'a')});
  EXPECT_EQ(big.status, 413);
  EXPECT_THAT(big.body, HasSubstr("body_too_large"));
  // Chunked: no length declared, refused once the body passes the limit.
  const auto chunked =
      http({"PUT", base + "/echo", std::string(5000, 'b'), {"Transfer-Encoding: chunked"}});
  EXPECT_EQ(chunked.status, 413);
  EXPECT_EQ(server->counters().bodies_too_large, 2u);
}

TEST_F(HttpServerTest, AHandlerThatThrowsIsA500AndTheServerGoesOn) {
  auto server = start();
  const auto r = http_get(base + "/throw");
  EXPECT_EQ(r.status, 500);
  EXPECT_THAT(r.body, HasSubstr("boom"));
  EXPECT_EQ(http_get(base + "/hello/again").status, 200);
}

TEST_F(HttpServerTest, WithTokensARequestNeedsOneAndCarriesItsName) {
  ServerConfig config;
  config.tokens = std::make_shared<RequestTokens>(
      BearerTokens::of({{"ci", "0123456789abcdef0123"}, {"ops", "fedcba9876543210fedc"}}));
  auto server = start(config);
  const auto none = http_get(base + "/whoami");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.headers.at("www-authenticate"), "Bearer");
  EXPECT_EQ(
      http({"GET", base + "/whoami", "", {"Authorization: Bearer wrong-token-000000"}}).status,
      401);
  const auto bearer =
      http({"GET", base + "/whoami", "", {"Authorization: Bearer fedcba9876543210fedc"}});
  EXPECT_EQ(bearer.body, "\"ops\"");
  const auto consul = http({"GET", base + "/whoami", "", {"X-Consul-Token: 0123456789abcdef0123"}});
  EXPECT_EQ(consul.body, "\"ci\"");
  // python-consul 0.7 sends its token as an argument.
  EXPECT_EQ(http_get(base + "/whoami?token=fedcba9876543210fedc").body, "\"ops\"");
  EXPECT_EQ(http_get(base + "/whoami?token=nope").status, 401);
  EXPECT_EQ(server->counters().unauthorized, 3u);
}

TEST_F(HttpServerTest, TokensAskedOnlyWhereTheRuleSaysYetAWrongOneIsAlwaysRefused) {
  ServerConfig config;
  // As the hub's admin API: reads open, anything else needs a token.
  config.tokens =
      std::make_shared<RequestTokens>(BearerTokens::of({{"ops", "fedcba9876543210fedc"}}),
                                      [](const Request& r) { return r.method != "GET"; });
  auto server = start(config);
  const auto open_read = http_get(base + "/whoami");
  EXPECT_EQ(open_read.status, 200);
  EXPECT_EQ(open_read.body, "\"\"");
  EXPECT_EQ(http({"PUT", base + "/echo", "{}"}).status, 401);
  EXPECT_EQ(
      http({"PUT", base + "/echo", "{}", {"Authorization: Bearer fedcba9876543210fedc"}}).status,
      200);
  // A stale token on a read is refused, not ignored: its client learns at once.
  EXPECT_EQ(
      http({"GET", base + "/whoami", "", {"Authorization: Bearer stale-token-00000000"}}).status,
      401);
  EXPECT_EQ(server->counters().unauthorized, 2u);
}

TEST_F(HttpServerTest, ReloadedTokensApplyToTheNextRequestAndABadFileKeepsTheOldOnes) {
  const auto file =
      std::filesystem::temp_directory_path() / ("cascade-tokens-" + std::to_string(::getpid()));
  const auto write = [&](const std::string& text) {
    std::ofstream(file, std::ios::trunc) << text;
    std::filesystem::permissions(
        file, std::filesystem::perms::owner_read | std::filesystem::perms::owner_write);
  };
  auto tokens =
      std::make_shared<RequestTokens>(BearerTokens::of({{"old", "0123456789abcdef0123"}}));
  ServerConfig config;
  config.tokens = tokens;
  auto server = start(config);
  const auto whoami = [&](const std::string& token) {
    return http({"GET", base + "/whoami", "", {"Authorization: Bearer " + token}});
  };
  write("new fedcba9876543210fedc\n");
  EXPECT_EQ(tokens->reload(file.string()), "");
  EXPECT_EQ(whoami("fedcba9876543210fedc").body, "\"new\"");
  EXPECT_EQ(whoami("0123456789abcdef0123").status, 401);

  write("broken short\n");
  EXPECT_THAT(tokens->reload(file.string()), HasSubstr("shorter than"));
  EXPECT_EQ(whoami("fedcba9876543210fedc").status, 200);
  std::filesystem::remove(file);
}

TEST(PeerAllowedTest, LoopbackAlwaysOthersOnlyInsideAnAllowedRange) {
  auto at = [](const char* text) { return std::get<SocketAddress>(SocketAddress::parse(text)); };
  const std::vector<Cidr> none;
  const std::vector<Cidr> office = {std::get<Cidr>(Cidr::parse("10.20.0.0/16"))};
  EXPECT_TRUE(peer_allowed(at("127.0.0.1:5000").get(), none));
  EXPECT_TRUE(peer_allowed(at("[::1]:5000").get(), none));
  EXPECT_FALSE(peer_allowed(at("10.20.1.1:5000").get(), none));
  EXPECT_TRUE(peer_allowed(at("10.20.1.1:5000").get(), office));
  EXPECT_FALSE(peer_allowed(at("10.21.1.1:5000").get(), office));
  EXPECT_TRUE(peer_allowed(at("[::ffff:10.20.3.4]:5000").get(), office));
}

// A peer's address may come in an allocation of the address's own size
// (libmicrohttpd, the agent's first HTTP server, kept it so); reading a whole
// sockaddr_storage from it crashed the agent once a connection's address
// ended a heap page. Here it ends a page before a guard page.
TEST(PeerAllowedTest, ReadsAnIpv4PeerNoFurtherThanItsSize) {
  const auto page = static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
  void* pages = mmap(nullptr, 2 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(pages, MAP_FAILED);
  ASSERT_EQ(mprotect(static_cast<char*>(pages) + page, page, PROT_NONE), 0);
  auto* peer =
      reinterpret_cast<sockaddr_in*>(static_cast<char*>(pages) + page - sizeof(sockaddr_in));
  *peer = *reinterpret_cast<const sockaddr_in*>(
      std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:5000")).get());
  EXPECT_TRUE(peer_allowed(reinterpret_cast<const sockaddr*>(peer), {}));
  munmap(pages, 2 * page);
}

TEST_F(HttpServerTest, ParkedRequestsHoldNoThreadAndAreAnsweredFromAnotherThread) {
  ServerConfig config;
  config.threads = 1;  // one thread: if a parked request held it, /hello would hang
  auto server = start(config);
  std::vector<HttpCall> calls(300, HttpCall{"GET", base + "/park"});
  std::vector<testing::HttpResult> results;
  std::thread waiters([&] { results = http_all(calls); });
  ASSERT_TRUE(wait_parked(300));
  EXPECT_EQ(server->counters().parked, 300);
  EXPECT_EQ(http_get(base + "/hello/meanwhile").status, 200);
  std::thread([&] { routes.release("\"released\""); }).join();
  waiters.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.status, 200) << r.error;
    EXPECT_EQ(r.body, "\"released\"");
  }
  EXPECT_EQ(server->counters().parked, 0);
  EXPECT_EQ(server->counters().answered_later, 300u);
}

TEST_F(HttpServerTest, ClientsThatResetWhileParkedOrWithABodyRefusedEarlyLeaveTheServerServing) {
  ServerConfig config;
  config.max_body_bytes = 1024;
  auto server = start(config);
  std::vector<std::unique_ptr<RawClient>> clients;
  for (int i = 0; i < 200; ++i)
    clients.push_back(std::make_unique<RawClient>(server->local_address(),
                                                  "GET /park HTTP/1.1\r\nHost: t\r\n\r\n"));
  ASSERT_TRUE(wait_parked(200));
  for (auto& c : clients)
    c->reset();
  routes.release("\"to nobody\"");
  // A body refused at its declared length, sent anyway, then the connection reset.
  for (int i = 0; i < 50; ++i) {
    RawClient refused(
        server->local_address(),
        "PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'x'));
    refused.reset();
  }
  for (int i = 0; i < 200 && server->counters().parked > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server->counters().parked, 0);
  EXPECT_EQ(http_get(base + "/hello/still").status, 200);
}

TEST_F(HttpServerTest, StoppingAnswersParkedRequests503) {
  auto server = start();
  std::vector<testing::HttpResult> results;
  std::thread waiters([&] {
    results = http_all(std::vector<HttpCall>(20, {"GET", base + "/park"}));
  });
  ASSERT_TRUE(wait_parked(20));
  server.reset();
  waiters.join();
  for (const auto& r : results) {
    EXPECT_EQ(r.status, 503);
    EXPECT_THAT(r.body, HasSubstr("shutting_down"));
  }
  routes.release("\"too late\"");  // answering after the stop is ignored
}

TEST_F(HttpServerTest, AnAddressInUseIsAClearError) {
  auto first = start();
  ServerConfig config;
  config.listen = first->local_address();
  try {
    Server second(config, routes.router);
    FAIL() << "second server on the same port";
  } catch (const std::runtime_error& e) {
    EXPECT_THAT(e.what(), HasSubstr(first->local_address().to_string()));
  }
}

TEST(BearerTokensTest, AFileOfNamedTokensIsReadAndCheckedStrictly) {
  const auto dir =
      std::filesystem::temp_directory_path() / ("cascade-tokens-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const auto file = (dir / "tokens").string();
  auto write = [&](const std::string& text, std::filesystem::perms perms) {
    { std::ofstream(file) << text; }
    std::filesystem::permissions(file, perms);
  };
  using P = std::filesystem::perms;
  write("# comment\nci 0123456789abcdef0123\n\n", P::owner_read | P::owner_write);
  auto loaded = BearerTokens::load(file);
  ASSERT_TRUE(std::holds_alternative<BearerTokens>(loaded)) << std::get<std::string>(loaded);
  EXPECT_EQ(std::get<BearerTokens>(loaded).name_of("0123456789abcdef0123"), "ci");
  write("ci 0123456789abcdef0123\n", P::owner_read | P::group_read);
  EXPECT_THAT(std::get<std::string>(BearerTokens::load(file)), HasSubstr("chmod 600"));
  write("ci short\n", P::owner_read);
  EXPECT_THAT(std::get<std::string>(BearerTokens::load(file)),
              HasSubstr(":1: token 'ci' is shorter"));
  write("justonefield\n", P::owner_read);
  EXPECT_THAT(std::get<std::string>(BearerTokens::load(file)), HasSubstr("expected 'NAME TOKEN'"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace cascade::http
