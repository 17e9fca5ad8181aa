#pragma once
// A plain TCP connection to a hub's port, for tests that send bytes no
// ZeroMQ peer would, or nothing at all. Closed when destroyed.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdint>
#include <string>

#include "cascade/tests/integration/cluster.hpp"

namespace cascade::integration {

class RawConnection {
 public:
  explicit RawConnection(int port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    connected_ = fd_ >= 0 && ::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0;
  }
  ~RawConnection() {
    if (fd_ >= 0) ::close(fd_);
  }
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  bool connected() const { return connected_; }
  // Writes what the peer accepts; MSG_NOSIGNAL: a peer that hung up is no crash.
  void write(const std::string& bytes) {
    std::size_t done = 0;
    while (done < bytes.size()) {
      const auto n = ::send(fd_, bytes.data() + done, bytes.size() - done, MSG_NOSIGNAL);
      if (n <= 0) return;
      done += static_cast<std::size_t>(n);
    }
  }
  // Reads and discards until the peer closes or `timeout` passes; true on close.
  bool closed_by_peer_within(Millis timeout) {
    const auto deadline = SteadyClock::now() + timeout;
    char buffer[4096];
    for (;;) {
      const auto left = std::chrono::duration_cast<Millis>(deadline - SteadyClock::now());
      if (left.count() <= 0) return false;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      const auto n = ::recv(fd_, buffer, sizeof buffer, 0);
      if (n <= 0) return true;
    }
  }

 private:
  int fd_;
  bool connected_ = false;
};

}  // namespace cascade::integration
