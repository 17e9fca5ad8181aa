#pragma once
// Listen addresses ("127.0.0.1:8500", "[::1]:8600") and CIDR ranges
// ("10.0.0.0/8", "fd00::/8") for the agent's local interfaces (HTTP, DNS):
// parsed once when the options are read, with errors that say what is wrong.

#include <netinet/in.h>
#include <sys/socket.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

namespace cascade {

// The bytes of a numeric IPv4 or IPv6 address, its family and its length in bytes.
struct IpAddress {
  int family = AF_UNSPEC;
  unsigned char bytes[16]{};
  std::size_t size() const { return family == AF_INET ? 4 : 16; }
  bool is_loopback() const;  // 127.0.0.0/8 or ::1
};

// "10.0.0.1" or "fd00::1" (no brackets, no port); nullopt for anything else.
std::optional<IpAddress> parse_ip(std::string_view host);

// A numeric IPv4 or IPv6 address and a port (host names are not resolved:
// a listen address names an interface of this host).
struct SocketAddress {
  sockaddr_storage storage{};
  socklen_t length = 0;

  // "host:port" or "[v6]:port"; port 0 asks the kernel for a free one.
  static std::variant<SocketAddress, std::string> parse(std::string_view text);
  static SocketAddress from(const sockaddr* address, socklen_t length);

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&storage); }
  int family() const { return storage.ss_family; }
  std::uint16_t port() const;
  bool is_loopback() const;
  std::string host() const;       // "127.0.0.1", "::1"
  std::string to_string() const;  // "127.0.0.1:8500", "[::1]:8600"
};

// An address range: a network address and a prefix length.
class Cidr {
 public:
  // "10.0.0.0/8", "192.0.2.7" (a single address), "fd00::/8".
  static std::variant<Cidr, std::string> parse(std::string_view text);
  bool contains(const sockaddr* address) const;
  const std::string& text() const { return text_; }

 private:
  int family_ = AF_INET;
  unsigned char network_[16]{};  // the address's bytes (4 for IPv4)
  unsigned prefix_ = 0;
  std::string text_;
};

// The value of a listen flag (`--http 127.0.0.1:8500`) into `out`, left
// alone when `text` is empty; "" or the error, naming the flag.
std::string parse_listen_flag(std::string_view flag, const std::string& text,
                              std::optional<SocketAddress>& out);
// The values of a repeatable range flag (`--http-allow 10.0.0.0/8`) appended
// to `out`; "" or the error, naming the flag.
std::string parse_range_flags(std::string_view flag, const std::vector<std::string>& texts,
                              std::vector<Cidr>& out);

}  // namespace cascade
