#pragma once
// This host's name, the default identity of a hub (and, with the pid, of an agent).

#include <unistd.h>

#include <string>

namespace cascade {

inline std::string host_name() {
  char host[256] = {};
  if (::gethostname(host, sizeof(host) - 1) != 0 || host[0] == '\0') return "host";
  return host;
}

}  // namespace cascade
