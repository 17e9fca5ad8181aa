#pragma once
// An instance's address ("10.0.0.7:8080", "[fd00::7]:8080", "orders.internal:8080",
// "http://10.0.0.7:8080/api") as DNS serves it: a host, numeric or a name,
// and a port when the address has one. Registrations carry free text
// ("host:port or URL", common/protocol.hpp), so anything else is no host at
// all and the instance shows in TXT answers only.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "cascade/common/net_address.hpp"

namespace cascade::agent::dns {

struct InstanceHost {
  std::string host;                   // as written, without brackets
  std::optional<IpAddress> ip;        // set when the host is a numeric address
  std::optional<std::uint16_t> port;  // nullopt: the address names none
};

// nullopt when the address names no usable host (empty, a bad port, spaces).
std::optional<InstanceHost> parse_instance_host(std::string_view address);

}  // namespace cascade::agent::dns
