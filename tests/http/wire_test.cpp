// The HTTP server on the wire, with raw sockets: what clients send that a
// library client would not (pipelined requests, malformed ones, half ones,
// HTTP/1.0), keep-alive after a parked request, answers larger than the
// socket's buffer, idle and connection limits, and how targets are decoded.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/socket.h>

#include <mutex>
#include <thread>

#include "cascade/http/router.hpp"
#include "cascade/http/server.hpp"
#include "cascade/http/url.hpp"
#include "cascade/tests/http/raw_client.hpp"

namespace cascade::http {
namespace {

using ::testing::HasSubstr;
using testing::RawClient;
using ::testing::StartsWith;

constexpr std::string_view kHeadEnd = "\r\n\r\n";

// Routes: /hello answers at once, /args echoes the decoded path and
// arguments, /park waits until release(), /big parks and is answered with
// `big_body`.
class WireTest : public ::testing::Test {
 protected:
  WireTest() {
    router.add("GET", "/hello", [](const Request&, const PathParams&, const ResponderPtr&) {
      return Response::json(200, "\"hello\"");
    });
    router.add("GET", "/args/{rest*}",
               [](const Request& r, const PathParams&, const ResponderPtr&) {
                 std::string text = r.path;
                 for (const auto& [name, value] : r.query)
                   text += "|" + name + "=" + value;
                 return Response::json(200, text);
               });
    router.add("PUT", "/echo", [](const Request& r, const PathParams&, const ResponderPtr&) {
      return Response::json(200, r.body);
    });
    router.add("GET", "/park",
               [this](const Request&, const PathParams&, const ResponderPtr& later) {
                 std::lock_guard lock(mu);
                 parked.push_back(later);
                 return Reply{};
               });
  }
  std::unique_ptr<Server> start(ServerConfig config = {}) {
    config.listen = std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:0"));
    return std::make_unique<Server>(std::move(config), router);
  }
  bool wait_parked(std::size_t n) {
    for (int i = 0; i < 1000; ++i) {
      {
        std::lock_guard lock(mu);
        if (parked.size() >= n) return true;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return false;
  }
  // Answers every parked request from another thread, as the watch board does.
  void release(const std::string& body) {
    std::vector<ResponderPtr> all;
    {
      std::lock_guard lock(mu);
      all.swap(parked);
    }
    std::thread([&] {
      for (auto& p : all)
        p->respond(Response::json(200, body));
    }).join();
  }

  Router router;
  std::mutex mu;
  std::vector<ResponderPtr> parked;
};

TEST_F(WireTest, AKeptAliveConnectionServesTheNextRequestAfterAParkedOne) {
  auto server = start();
  RawClient client(server->local_address(), "GET /park HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(wait_parked(1));
  release("\"woken\"");
  EXPECT_THAT(client.read_until_seen("\"woken\""), StartsWith("HTTP/1.1 200 OK\r\n"));
  client.write("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_THAT(client.read_until_seen("\"hello\""), HasSubstr("\"hello\""));
  EXPECT_FALSE(client.closed_by_server());
  EXPECT_EQ(server->counters().answered_later, 1u);
}

TEST_F(WireTest, OneSharedResponseAnswersEveryParkedRequestEachInItsOwnConnectionMode) {
  auto server = start();
  RawClient kept(server->local_address(), "GET /park HTTP/1.1\r\nHost: t\r\n\r\n");
  RawClient also_kept(server->local_address(), "GET /park HTTP/1.1\r\nHost: t\r\n\r\n");
  RawClient closing(server->local_address(), "GET /park HTTP/1.0\r\n\r\n");
  ASSERT_TRUE(wait_parked(3));
  Response woken = Response::json(200, "\"shared\"");
  woken.headers.emplace_back("X-Cascade-Index", "42");
  const auto shared = std::make_shared<const SharedResponse>(woken);
  std::vector<ResponderPtr> all;
  {
    std::lock_guard lock(mu);
    all.swap(parked);
  }
  std::thread([&] {
    for (auto& p : all)
      p->respond_shared(shared);
  }).join();
  for (auto* client : {&kept, &also_kept}) {
    const auto text = client->read_until_seen("\"shared\"");
    EXPECT_THAT(text, StartsWith("HTTP/1.1 200 OK\r\n"));
    EXPECT_THAT(text, HasSubstr("X-Cascade-Index: 42\r\n"));
    EXPECT_THAT(text, ::testing::Not(HasSubstr("Connection: close")));
  }
  const auto last = closing.read_to_close();
  EXPECT_THAT(last, HasSubstr("Connection: close\r\n"));
  EXPECT_THAT(last, HasSubstr("\"shared\""));
  EXPECT_EQ(server->counters().answered_later, 3u);
  kept.write("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_THAT(kept.read_until_seen("\"hello\""), HasSubstr("\"hello\""));
}

TEST_F(WireTest, PipelinedRequestsAreAnsweredInOrderEvenBehindAParkedOne) {
  auto server = start();
  RawClient client(server->local_address(),
                   "GET /park HTTP/1.1\r\nHost: t\r\n\r\n"
                   "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n"
                   "PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 4\r\n\r\nbody");
  ASSERT_TRUE(wait_parked(1));
  // Nothing is answered while the first request waits.
  EXPECT_EQ(client.read_until([](const std::string& t) { return !t.empty(); },
                              std::chrono::milliseconds(200)),
            "");
  release("\"first\"");
  const auto text = client.read_until_seen("HTTP/1.1 200", 3);
  const auto first = text.find("\"first\"");
  const auto second = text.find("\"hello\"");
  const auto third = text.find("body");
  ASSERT_NE(third, std::string::npos) << text;
  EXPECT_LT(first, second);
  EXPECT_LT(second, third);
}

TEST_F(WireTest, MalformedRequestsAre400AndHeadsOver8KiBAre431ThenClosed) {
  auto server = start();
  {
    RawClient garbage(server->local_address(), "this is not HTTP\r\n\r\n");
    const auto answer = garbage.read_to_close();
    EXPECT_THAT(answer, StartsWith("HTTP/1.1 400 Bad Request\r\n"));
    EXPECT_THAT(answer, HasSubstr("\"code\":\"bad_request\""));
    EXPECT_THAT(answer, HasSubstr("Connection: close"));
    EXPECT_TRUE(garbage.closed_by_server());

    RawClient huge(server->local_address(),
                   "GET /hello HTTP/1.1\r\nX-Big: " + std::string(9000, 'x') + "\r\n\r\n");
    EXPECT_THAT(huge.read_to_close(), StartsWith("HTTP/1.1 431 "));

    RawClient escape(server->local_address(), "GET /args/%zz HTTP/1.1\r\nHost: t\r\n\r\n");
    EXPECT_THAT(escape.read_to_close(), StartsWith("HTTP/1.1 400 "));
  }
  EXPECT_EQ(server->counters().bad_requests, 3u);
  // Each was closed by the server once its client closed too.
  for (int i = 0; i < 400 && server->counters().connections > 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_EQ(server->counters().connections, 0);
}

TEST_F(WireTest, TargetsAreDecodedWithPlusAsSpaceOnlyInArguments) {
  auto server = start();
  RawClient client(server->local_address(),
                   "GET /args/a%2Fb+c?x=1%202&y=a+b&flag HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_THAT(client.read_until_seen("flag="), HasSubstr("/args/a/b+c|flag=|x=1 2|y=a b"));
}

TEST_F(WireTest, AClientThatExpectsContinueIsToldToSendItsBody) {
  auto server = start();
  RawClient client(server->local_address(),
                   "PUT /echo HTTP/1.1\r\nHost: t\r\nContent-Length: 5\r\n"
                   "Expect: 100-continue\r\n\r\n");
  EXPECT_THAT(client.read_until_seen(kHeadEnd), StartsWith("HTTP/1.1 100 Continue\r\n\r\n"));
  client.write("hello");
  EXPECT_THAT(client.read_until_seen("hello"), HasSubstr("HTTP/1.1 200 OK"));
}

TEST_F(WireTest, AnHttp10RequestWithoutKeepAliveIsClosedAfterItsAnswer) {
  auto server = start();
  RawClient client(server->local_address(), "GET /hello HTTP/1.0\r\n\r\n");
  const auto answer = client.read_to_close();
  EXPECT_THAT(answer, HasSubstr("\"hello\""));
  EXPECT_THAT(answer, HasSubstr("Connection: close"));
  EXPECT_TRUE(client.closed_by_server());
}

TEST_F(WireTest, AnAnswerLargerThanTheSocketBufferIsWrittenAsTheClientReads) {
  auto server = start();
  RawClient client(server->local_address(), "GET /park HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(wait_parked(1));
  // More than the kernel buffers of both ends hold: the Responder's send
  // takes part of it, the loop writes the rest as the client reads.
  const std::string big(32 * 1024 * 1024, 'b');
  release("\"" + big + "\"");
  const auto text = client.read_until(
      [&](const std::string& t) { return t.size() > big.size() + 2 && t.back() == '"'; });
  EXPECT_EQ(RawClient::occurrences(text, big), 1u);
  client.write("GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
  const auto after = client.read_until_seen("\"hello\"");
  EXPECT_EQ(after.size() - text.size(), after.size() - after.find("HTTP/1.1 200", text.size()));
}

TEST_F(WireTest, AConnectionIdleLongerThanTheTimeoutIsClosedButAParkedOneIsNot) {
  ServerConfig config;
  config.idle_timeout = std::chrono::seconds(1);
  auto server = start(config);
  RawClient idle(server->local_address());
  RawClient waiting(server->local_address(), "GET /park HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(wait_parked(1));
  idle.read_to_close(std::chrono::seconds(5));
  EXPECT_TRUE(idle.closed_by_server());
  release("\"still here\"");
  EXPECT_THAT(waiting.read_until_seen("still here"), HasSubstr("200 OK"));
}

TEST_F(WireTest, ConnectionsOverTheLimitAreClosedAtOnce) {
  ServerConfig config;
  config.max_connections = 2;
  auto server = start(config);
  RawClient first(server->local_address(), "GET /park HTTP/1.1\r\nHost: t\r\n\r\n");
  RawClient second(server->local_address(), "GET /park HTTP/1.1\r\nHost: t\r\n\r\n");
  ASSERT_TRUE(wait_parked(2));
  RawClient third(server->local_address(), "GET /hello HTTP/1.1\r\nHost: t\r\n\r\n");
  EXPECT_EQ(third.read_to_close(), "");
  EXPECT_TRUE(third.closed_by_server());
  EXPECT_EQ(server->counters().over_connection_limit, 1u);
  release("\"ok\"");
  EXPECT_THAT(first.read_until_seen("\"ok\""), HasSubstr("200 OK"));
}

TEST(UrlTest, PercentDecodingRefusesCutAndNonHexEscapes) {
  EXPECT_EQ(percent_decode("a%20b+c", false), "a b+c");
  EXPECT_EQ(percent_decode("a%20b+c", true), "a b c");
  EXPECT_EQ(percent_decode("%41%6a", false), "Aj");
  EXPECT_EQ(percent_decode("%", false), std::nullopt);
  EXPECT_EQ(percent_decode("%4", false), std::nullopt);
  EXPECT_EQ(percent_decode("%g0", false), std::nullopt);
}

TEST(UrlTest, TargetsSplitIntoPathAndArgumentsAndMustBeAbsolute) {
  const auto target = parse_target("/v1/kv/a%2Fb?recurse&index=12&index=13&&q=%3D");
  ASSERT_TRUE(target);
  EXPECT_EQ(target->path, "/v1/kv/a/b");
  EXPECT_EQ(target->query.at("recurse"), "");
  EXPECT_EQ(target->query.at("index"), "13");
  EXPECT_EQ(target->query.at("q"), "=");
  EXPECT_FALSE(parse_target("v1/kv"));
  EXPECT_FALSE(parse_target("http://host/v1"));
  EXPECT_FALSE(parse_target("/a?b=%zz"));
}

}  // namespace
}  // namespace cascade::http
