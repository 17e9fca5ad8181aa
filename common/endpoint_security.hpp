#pragma once
// Secure by default (docs/security.md): an endpoint other processes could
// reach over a network is never served or dialled in plain text unless the
// operator said --insecure. Shared by cascade-hub, the proxy and cascade-agent.

#include <string>
#include <string_view>

namespace cascade {

// True when only this host can use `endpoint`: tcp:// on 127.x.x.x, ::1,
// localhost or the `lo` interface; ipc:// (a file) and inproc:// (this
// process). False for tcp://*, 0.0.0.0, any other address or host name.
bool is_loopback_endpoint(std::string_view endpoint);

// "" when `endpoint` may be used as configured, else why not: a non-loopback
// endpoint with no keys, without --insecure. `flag` names the option that
// gave the endpoint, `key_flags` the options that would secure it.
std::string check_secure_by_default(std::string_view flag, std::string_view endpoint, bool has_keys,
                                    bool insecure, std::string_view key_flags);

}  // namespace cascade
