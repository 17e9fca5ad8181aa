#include "cascade/agent/dns/instance_address.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace cascade::agent::dns {

namespace {

// "http://host:port/path?q" -> "host:port": what follows a scheme and
// precedes a path, a query or a fragment. User information is dropped.
std::string_view authority_of(std::string_view address) {
  if (const auto scheme = address.find("://"); scheme != std::string_view::npos)
    address.remove_prefix(scheme + 3);
  address = address.substr(0, address.find_first_of("/?#"));
  if (const auto at = address.rfind('@'); at != std::string_view::npos)
    address.remove_prefix(at + 1);
  return address;
}

std::optional<std::uint16_t> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc() || end != text.data() + text.size() || value == 0 ||
      value > 65535)
    return std::nullopt;
  return static_cast<std::uint16_t>(value);
}

// A host name as DNS can carry it: letters, digits, '-', '_' and '.'.
bool is_host_name(std::string_view host) {
  return !host.empty() && std::all_of(host.begin(), host.end(), [](unsigned char c) {
    return std::isalnum(c) != 0 || c == '-' || c == '_' || c == '.';
  });
}

}  // namespace

std::optional<InstanceHost> parse_instance_host(std::string_view address) {
  const auto authority = authority_of(address);
  std::string_view host = authority;
  std::optional<std::string_view> port_text;
  if (authority.starts_with('[')) {  // "[v6]" or "[v6]:port"
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    host = authority.substr(1, close - 1);
    const auto rest = authority.substr(close + 1);
    if (!rest.empty()) {
      if (!rest.starts_with(':')) return std::nullopt;
      port_text = rest.substr(1);
    }
  } else if (std::count(authority.begin(), authority.end(), ':') == 1) {  // "host:port"
    const auto colon = authority.find(':');
    host = authority.substr(0, colon);
    port_text = authority.substr(colon + 1);
  }  // else "host", or a bare IPv6 address without a port
  InstanceHost out;
  out.host = std::string(host);
  out.ip = parse_ip(host);
  if (!out.ip && !is_host_name(host)) return std::nullopt;
  if (port_text) {
    out.port = parse_port(*port_text);
    if (!out.port) return std::nullopt;
  }
  return out;
}

}  // namespace cascade::agent::dns
