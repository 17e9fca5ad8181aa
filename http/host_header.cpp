#include "cascade/http/host_header.hpp"

#include <algorithm>
#include <cctype>
#include <string>

#include "cascade/common/net_address.hpp"

namespace cascade::http {

namespace {

bool is_port(std::string_view text) {
  return !text.empty() && text.size() <= 5 && std::all_of(text.begin(), text.end(), [](char c) {
    return std::isdigit(static_cast<unsigned char>(c));
  });
}

// The host part of "HOST", "HOST:PORT", "[V6]" or "[V6]:PORT"; "" when the
// header is none of these.
std::string_view host_of(std::string_view header) {
  if (header.starts_with('[')) {
    const auto close = header.find(']');
    if (close == std::string_view::npos) return {};
    const auto rest = header.substr(close + 1);
    if (!rest.empty() && !(rest.front() == ':' && is_port(rest.substr(1)))) return {};
    return header.substr(1, close - 1);
  }
  const auto colon = header.find(':');
  if (colon == std::string_view::npos) return header;
  if (!is_port(header.substr(colon + 1))) return {};  // a second colon: a bare IPv6
  return header.substr(0, colon);
}

bool is_localhost(std::string_view host) {
  constexpr std::string_view kName = "localhost";
  return std::equal(host.begin(), host.end(), kName.begin(), kName.end(), [](char a, char b) {
    return std::tolower(static_cast<unsigned char>(a)) == b;
  });
}

}  // namespace

bool host_names_loopback(std::string_view host_header) {
  const auto host = host_of(host_header);
  if (host.empty()) return false;
  if (is_localhost(host)) return true;
  const auto ip = parse_ip(host);
  return ip && ip->is_loopback();
}

}  // namespace cascade::http
