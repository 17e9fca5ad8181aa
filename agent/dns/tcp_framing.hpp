#pragma once
// The bytes of one DNS-over-TCP connection in both directions: every
// message preceded by its length in two octets (RFC 1035 4.2.2), several
// messages per connection, replies in any order (RFC 7766 6.2.1.1).
// Plain buffers: the server reads and writes the socket.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <vector>

namespace cascade::agent::dns {

class TcpFraming {
 public:
  void received(std::span<const std::uint8_t> bytes);
  // The next whole message received (without its prefix), if there is one.
  std::optional<std::vector<std::uint8_t>> next_message();
  // Bytes received and not taken as messages yet.
  std::size_t buffered() const { return in_.size() - in_start_; }

  // Queues `message` (at most 65535 bytes) behind its length prefix.
  void queue(std::span<const std::uint8_t> message);
  std::span<const std::uint8_t> unsent() const;
  void sent(std::size_t count);  // the first `count` unsent bytes went out

 private:
  std::vector<std::uint8_t> in_;
  std::size_t in_start_ = 0;  // bytes of in_ already taken as messages
  std::vector<std::uint8_t> out_;
  std::size_t out_start_ = 0;  // bytes of out_ already sent
};

}  // namespace cascade::agent::dns
