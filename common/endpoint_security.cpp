#include "cascade/common/endpoint_security.hpp"

#include <algorithm>
#include <cctype>

namespace cascade {

namespace {

// 127.0.0.0/8 written as a dotted quad (not a host name that starts "127.").
bool is_ipv4_loopback(std::string_view host) {
  if (!host.starts_with("127.")) return false;
  return std::all_of(host.begin(), host.end(), [](char c) {
    return c == '.' || std::isdigit(static_cast<unsigned char>(c));
  });
}

}  // namespace

bool is_loopback_endpoint(std::string_view endpoint) {
  if (endpoint.starts_with("ipc://") || endpoint.starts_with("inproc://")) return true;
  constexpr std::string_view kTcp = "tcp://";
  if (!endpoint.starts_with(kTcp)) return false;
  auto address = endpoint.substr(kTcp.size());
  // "tcp://SOURCE;DESTINATION" (connect with a source address): the
  // destination is where the traffic goes.
  if (const auto semicolon = address.rfind(';'); semicolon != std::string_view::npos)
    address = address.substr(semicolon + 1);
  const auto colon = address.rfind(':');
  if (colon == std::string_view::npos) return false;
  const auto host = address.substr(0, colon);
  return host == "localhost" || host == "lo" || host == "[::1]" || is_ipv4_loopback(host);
}

std::string check_secure_by_default(std::string_view flag, std::string_view endpoint, bool has_keys,
                                    bool insecure, std::string_view key_flags) {
  if (has_keys || insecure || is_loopback_endpoint(endpoint)) return {};
  return std::string(flag) + " " + std::string(endpoint) +
         " is reachable from other hosts and no keys are given: refusing to run in plain "
         "text. Give " +
         std::string(key_flags) +
         " (cascadectl keygen makes keys), use a loopback endpoint, or say --insecure to run "
         "unauthenticated and unencrypted on purpose";
}

}  // namespace cascade
