#include "cascade/common/net_address.hpp"

#include <arpa/inet.h>

#include <charconv>
#include <cstring>

namespace cascade {

namespace {

std::optional<IpAddress> raw_of(const sockaddr* address) {
  IpAddress raw;
  raw.family = address->sa_family;
  if (raw.family == AF_INET) {
    std::memcpy(raw.bytes, &reinterpret_cast<const sockaddr_in*>(address)->sin_addr, 4);
  } else if (raw.family == AF_INET6) {
    const auto& v6 = reinterpret_cast<const sockaddr_in6*>(address)->sin6_addr;
    // An IPv4 peer on a dual-stack socket (::ffff:a.b.c.d) is that IPv4 address.
    if (IN6_IS_ADDR_V4MAPPED(&v6)) {
      raw.family = AF_INET;
      std::memcpy(raw.bytes, v6.s6_addr + 12, 4);
    } else {
      std::memcpy(raw.bytes, &v6, 16);
    }
  } else {
    return std::nullopt;
  }
  return raw;
}

std::optional<unsigned> parse_number(std::string_view text, unsigned max) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value > max)
    return std::nullopt;
  return value;
}

}  // namespace

std::optional<IpAddress> parse_ip(std::string_view host) {
  const std::string text(host);
  IpAddress raw;
  if (::inet_pton(AF_INET, text.c_str(), raw.bytes) == 1) {
    raw.family = AF_INET;
    return raw;
  }
  if (::inet_pton(AF_INET6, text.c_str(), raw.bytes) == 1) {
    raw.family = AF_INET6;
    return raw;
  }
  return std::nullopt;
}

std::variant<SocketAddress, std::string> SocketAddress::parse(std::string_view text) {
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos)
    return "'" + std::string(text) + "' is not HOST:PORT (a numeric address and a port)";
  auto host = text.substr(0, colon);
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']')
    host = host.substr(1, host.size() - 2);
  const auto port = parse_number(text.substr(colon + 1), 65535);
  if (!port) return "'" + std::string(text) + "': the port must be a number from 0 to 65535";
  const auto raw = parse_ip(host);
  if (!raw)
    return "'" + std::string(text) + "': '" + std::string(host) +
           "' is not a numeric IPv4 or IPv6 address";
  SocketAddress address;
  if (raw->family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&address.storage);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<std::uint16_t>(*port));
    std::memcpy(&v4->sin_addr, raw->bytes, 4);
    address.length = sizeof(sockaddr_in);
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&address.storage);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<std::uint16_t>(*port));
    std::memcpy(&v6->sin6_addr, raw->bytes, 16);
    address.length = sizeof(sockaddr_in6);
  }
  return address;
}

SocketAddress SocketAddress::from(const sockaddr* address, socklen_t length) {
  SocketAddress out;
  out.length = std::min<socklen_t>(length, sizeof(out.storage));
  std::memcpy(&out.storage, address, out.length);
  return out;
}

std::uint16_t SocketAddress::port() const {
  if (family() == AF_INET) return ntohs(reinterpret_cast<const sockaddr_in*>(get())->sin_port);
  if (family() == AF_INET6) return ntohs(reinterpret_cast<const sockaddr_in6*>(get())->sin6_port);
  return 0;
}

bool IpAddress::is_loopback() const {
  if (family == AF_INET) return bytes[0] == 127;
  static const unsigned char kLoopback6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return family == AF_INET6 && std::memcmp(bytes, kLoopback6, 16) == 0;
}

bool SocketAddress::is_loopback() const {
  const auto raw = raw_of(get());
  return raw && raw->is_loopback();
}

std::string SocketAddress::host() const {
  char text[INET6_ADDRSTRLEN] = {};
  if (family() == AF_INET)
    ::inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(get())->sin_addr, text,
                sizeof(text));
  else if (family() == AF_INET6)
    ::inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(get())->sin6_addr, text,
                sizeof(text));
  return text;
}

std::string SocketAddress::to_string() const {
  const auto port_text = std::to_string(port());
  return family() == AF_INET6 ? "[" + host() + "]:" + port_text : host() + ":" + port_text;
}

std::variant<Cidr, std::string> Cidr::parse(std::string_view text) {
  const auto slash = text.find('/');
  const auto raw = parse_ip(text.substr(0, slash));
  if (!raw)
    return "'" + std::string(text) + "' is not an address range such as 10.0.0.0/8 or fd00::/8";
  const unsigned bits = raw->family == AF_INET ? 32 : 128;
  auto prefix = std::optional<unsigned>(bits);
  if (slash != std::string_view::npos) prefix = parse_number(text.substr(slash + 1), bits);
  if (!prefix)
    return "'" + std::string(text) + "': the prefix length must be 0 to " + std::to_string(bits);
  Cidr cidr;
  cidr.family_ = raw->family;
  std::memcpy(cidr.network_, raw->bytes, raw->size());
  cidr.prefix_ = *prefix;
  cidr.text_ = std::string(text);
  return cidr;
}

bool Cidr::contains(const sockaddr* address) const {
  const auto raw = raw_of(address);
  if (!raw || raw->family != family_) return false;
  const unsigned whole = prefix_ / 8;
  if (std::memcmp(raw->bytes, network_, whole) != 0) return false;
  const unsigned rest = prefix_ % 8;
  if (rest == 0) return true;
  const auto mask = static_cast<unsigned char>(0xFF << (8 - rest));
  return (raw->bytes[whole] & mask) == (network_[whole] & mask);
}

std::string parse_listen_flag(std::string_view flag, const std::string& text,
                              std::optional<SocketAddress>& out) {
  if (text.empty()) return {};
  auto parsed = SocketAddress::parse(text);
  if (auto* error = std::get_if<std::string>(&parsed)) return std::string(flag) + ": " + *error;
  out = std::get<SocketAddress>(parsed);
  return {};
}

std::string parse_range_flags(std::string_view flag, const std::vector<std::string>& texts,
                              std::vector<Cidr>& out) {
  for (const auto& text : texts) {
    auto parsed = Cidr::parse(text);
    if (auto* error = std::get_if<std::string>(&parsed)) return std::string(flag) + ": " + *error;
    out.push_back(std::get<Cidr>(parsed));
  }
  return {};
}

}  // namespace cascade
