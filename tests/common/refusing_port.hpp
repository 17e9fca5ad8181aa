#pragma once
// A loopback TCP port that is bound (so no other process can take it) but not
// listening: connections to it are refused, as to a hub that is not running.
// Shared by the integration and cascadectl tests.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <stdexcept>
#include <string>

namespace cascade::test_support {

class RefusingPort {
 public:
  RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    if (fd_ < 0) throw std::runtime_error("socket() failed");
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
      ::close(fd_);
      throw std::runtime_error("bind() failed");
    }
    endpoint_ = "tcp://127.0.0.1:" + std::to_string(ntohs(addr.sin_port));
  }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  ~RefusingPort() { ::close(fd_); }

  // "tcp://127.0.0.1:PORT".
  const std::string& endpoint() const { return endpoint_; }

 private:
  int fd_;
  std::string endpoint_;
};

}  // namespace cascade::test_support
