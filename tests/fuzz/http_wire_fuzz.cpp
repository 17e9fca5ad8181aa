// Fuzz target: the HTTP server on the wire (http/connection.cpp, Boost.Beast's
// parser, http/url.cpp). Each input is written raw to a real server on
// loopback, then the client closes its sending side and reads to the end.
// Properties: the server never crashes (ASan and UBSan watch its threads);
// whatever it writes is a sequence of HTTP/1.1 answers with a status it
// gives (no garbage, no half a head); and it still answers a good request on
// a new connection afterwards. Seeds: tests/fuzz/corpus/http_wire/.

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <string_view>

#include "cascade/http/router.hpp"
#include "cascade/http/server.hpp"
#include "cascade/tests/fuzz/fuzz_support.hpp"

namespace cascade::fuzz {
namespace {

struct WireServer {
  http::Router router;
  std::unique_ptr<http::Server> server;
  WireServer() {
    router.add("GET", "/hello/{who}",
               [](const http::Request& r, const http::PathParams& p, const http::ResponderPtr&) {
                 return http::Response::json(200, "\"" + p.at("who") + r.path + "\"");
               });
    router.add("PUT", "/echo",
               [](const http::Request& r, const http::PathParams&, const http::ResponderPtr&) {
                 return http::Response::json(200, r.body);
               });
    // Answered through the Responder before the Handler returns.
    router.add("GET", "/later",
               [](const http::Request&, const http::PathParams&, const http::ResponderPtr& later) {
                 later->respond(http::Response::json(200, "\"later\""));
                 return http::Reply{};
               });
    http::ServerConfig config;
    config.listen = std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:0"));
    config.max_body_bytes = 1024;
    config.threads = 1;
    server = std::make_unique<http::Server>(config, router);
  }
};

WireServer& wire() {
  static WireServer instance;
  return instance;
}

// A new loopback source address for each connection (127.a.b.c): thousands
// of connections a second leave tens of thousands in TIME_WAIT, which from
// one source address would run out of ports within seconds.
SocketAddress next_source() {
  static std::uint32_t n = 0;
  ++n;
  const auto text = "127." + std::to_string(1 + n / 65536 % 250) + "." +
                    std::to_string(n / 254 % 256) + "." + std::to_string(1 + n % 254) + ":0";
  return std::get<SocketAddress>(SocketAddress::parse(text));
}

// Why the last exchange ended without the server closing (for a report).
std::string last_error;

// poll(2) for `events`, again when a signal interrupts it (libFuzzer's
// timeout timer sends SIGALRM every few seconds).
bool wait_for(int fd, short events, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  for (;;) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    pollfd p{fd, events, 0};
    const int ready = ::poll(&p, 1, static_cast<int>(std::max<std::int64_t>(left.count(), 0)));
    if (ready > 0) return true;
    if (ready == 0 || errno != EINTR) return false;
  }
}

// A connection from a new source address; a connect a signal interrupted
// goes on in the background, so its end is waited for.
int connect_to_server() {
  const auto& address = wire().server->local_address();
  const int fd = ::socket(address.family(), SOCK_STREAM, 0);
  const auto source = next_source();
  CASCADE_FUZZ_CHECK(fd >= 0 && ::bind(fd, source.get(), source.length) == 0,
                     "cannot bind to " + source.to_string() + ": " + std::strerror(errno));
  if (::connect(fd, address.get(), address.length) != 0) {
    CASCADE_FUZZ_CHECK(errno == EINTR && wait_for(fd, POLLOUT, std::chrono::seconds(5)),
                       "cannot connect from " + source.to_string() + ": " + std::strerror(errno));
    int error = 0;
    socklen_t length = sizeof(error);
    ::getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &length);
    CASCADE_FUZZ_CHECK(error == 0, "cannot connect: " + std::string(std::strerror(error)));
  }
  return fd;
}

// Writes `input`, closes the sending side, reads until the server closes.
std::string exchange(std::string_view input) {
  const int fd = connect_to_server();
  if (!input.empty()) (void)::send(fd, input.data(), input.size(), MSG_NOSIGNAL);
  ::shutdown(fd, SHUT_WR);
  std::string out;
  last_error.clear();
  char buffer[16384];
  for (;;) {
    if (!wait_for(fd, POLLIN, std::chrono::seconds(5))) {
      last_error = "no answer and no close in 5 s";
      break;
    }
    const auto got = ::recv(fd, buffer, sizeof(buffer), 0);
    if (got < 0 && errno == EINTR) continue;
    if (got < 0) last_error = std::string("recv: ") + std::strerror(errno);
    if (got <= 0) break;
    out.append(buffer, static_cast<std::size_t>(got));
  }
  ::close(fd);
  return out;
}

// Every answer starts "HTTP/1.1 NNN " with a status the server gives, and has
// a whole head.
void check_answers(std::string_view out) {
  static const std::set<std::string_view> kStatuses = {"100", "200", "400", "404", "405",
                                                       "413", "431", "500", "503"};
  std::size_t at = 0;
  while (at < out.size()) {
    const auto rest = out.substr(at);
    CASCADE_FUZZ_CHECK(rest.substr(0, 9) == "HTTP/1.1 ", std::string(rest.substr(0, 40)));
    CASCADE_FUZZ_CHECK(kStatuses.contains(rest.substr(9, 3)), std::string(rest.substr(0, 40)));
    const auto head_end = rest.find("\r\n\r\n");
    CASCADE_FUZZ_CHECK(head_end != std::string_view::npos, "an answer without a whole head");
    const auto next = rest.find("HTTP/1.1 ", head_end);
    at = next == std::string_view::npos ? out.size() : at + next;
  }
}

}  // namespace
}  // namespace cascade::fuzz

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace cascade::fuzz;
  check_answers(exchange({reinterpret_cast<const char*>(data), size}));
  const auto good = exchange("GET /hello/again HTTP/1.1\r\nHost: f\r\n\r\n");
  CASCADE_FUZZ_CHECK(good.find("\"again/hello/again\"") != std::string::npos,
                     good + " (" + last_error + ")");
  return 0;
}
