#pragma once
// A raw TCP client for the HTTP server's tests: writes bytes as given (bad
// requests, pipelined ones, half a request) and reads what comes back, with
// a deadline, or resets the connection as a client that gave up does.

#include <gtest/gtest.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <string_view>

#include "cascade/common/net_address.hpp"

namespace cascade::testing {

class RawClient {
 public:
  explicit RawClient(const SocketAddress& server, std::string_view request = {}) {
    fd_ = ::socket(server.family(), SOCK_STREAM, 0);
    if (::connect(fd_, server.get(), server.length) != 0) ADD_FAILURE() << "connect failed";
    if (!request.empty()) write(request);
  }
  ~RawClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawClient(const RawClient&) = delete;
  RawClient& operator=(const RawClient&) = delete;

  void write(std::string_view bytes) {
    EXPECT_EQ(::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL),
              static_cast<ssize_t>(bytes.size()));
  }
  // Reads until `enough` says the text read so far is complete, the server
  // closes, or `patience` ends; returns what was read.
  template <typename Enough>
  std::string read_until(Enough enough,
                         std::chrono::milliseconds patience = std::chrono::seconds(5)) {
    const auto deadline = std::chrono::steady_clock::now() + patience;
    while (!enough(text_)) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          deadline - std::chrono::steady_clock::now());
      pollfd p{fd_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) break;
      char buffer[65536];
      const auto got = ::recv(fd_, buffer, sizeof(buffer), 0);
      if (got <= 0) {
        closed_ = true;
        break;
      }
      text_.append(buffer, static_cast<std::size_t>(got));
    }
    return text_;
  }
  // Until `count` occurrences of `needle` were read.
  std::string read_until_seen(std::string_view needle, std::size_t count = 1) {
    return read_until([&](const std::string& text) { return occurrences(text, needle) >= count; });
  }
  // Until the server closes (or `patience` ends).
  std::string read_to_close(std::chrono::milliseconds patience = std::chrono::seconds(5)) {
    return read_until([](const std::string&) { return false; }, patience);
  }
  bool closed_by_server() const { return closed_; }
  void reset() {
    const linger abort{1, 0};
    ::setsockopt(fd_, SOL_SOCKET, SO_LINGER, &abort, sizeof(abort));
    ::close(fd_);
    fd_ = -1;
  }
  int fd() const { return fd_; }

  static std::size_t occurrences(std::string_view text, std::string_view needle) {
    std::size_t n = 0;
    for (auto at = text.find(needle); at != std::string_view::npos;
         at = text.find(needle, at + needle.size()))
      ++n;
    return n;
  }

 private:
  int fd_ = -1;
  std::string text_;
  bool closed_ = false;
};

}  // namespace cascade::testing
