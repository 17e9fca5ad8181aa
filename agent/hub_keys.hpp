#pragma once
// The CurveZMQ keys an agent connects to its hubs with (docs/security.md):
// its own key pair, and the public key of each hub. Plain strings in Z85 (as
// `cascadectl keygen` writes them; common/curve_keys.hpp reads the files).

#include <map>
#include <string>

namespace cascade::agent {

struct HubKeys {
  std::string public_key;  // this process's key pair; empty secret_key: plain text
  std::string secret_key;
  std::string hub_public_key;                             // of every hub not in per_hub
  std::map<std::string, std::string> per_hub_public_key;  // by hub endpoint, where hubs differ

  bool enabled() const { return !secret_key.empty(); }
  // The public key of the hub at `endpoint`; "" when none is known.
  const std::string& hub_key_for(const std::string& endpoint) const {
    const auto it = per_hub_public_key.find(endpoint);
    return it != per_hub_public_key.end() ? it->second : hub_public_key;
  }
};

}  // namespace cascade::agent
