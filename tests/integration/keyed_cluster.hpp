#pragma once
// The integration fixture with CurveZMQ keys (issue 12): key pairs made in the
// test's directory, authorised-keys files written from them, and hubs,
// agents, cascadectl and probes that speak Curve as a named key.
//
// A key is known by the name of its files (DIR/NAME.key, DIR/NAME.pub). The
// name an authorised-keys line gives it is usually the same; a rotation gives
// two key files one name (authorize_keys).

#include <filesystem>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cascade/tests/integration/cluster.hpp"

namespace cascade::integration {

// cascadectl's exit codes for a refused key (cascadectl --help).
inline constexpr int kExitUnauthenticated = 5;
inline constexpr int kExitForbidden = 6;

class KeyedClusterTest : public ClusterTest {
 protected:
  // Makes DIR/NAME.key and DIR/NAME.pub; returns the public key.
  std::string keygen(const std::string& name);
  std::string key_file(const std::string& name) const;
  std::string public_key_file(const std::string& name) const;
  std::filesystem::path keys_file(const std::string& file) const { return dir() / file; }

  // Writes DIR/`file`: one line per entry, the public key of the key file
  // `first` followed by `second`, "NAME ROLE [register=..] [query=..]".
  void authorize_keys(const std::vector<std::pair<std::string, std::string>>& lines,
                      const std::string& file = "authorized_keys");
  // The same where each line's NAME is also its key file's name:
  // {"agent-1 agent", "reader reader"}.
  void authorize(const std::vector<std::string>& lines,
                 const std::string& file = "authorized_keys");

  // A hub with the key pair `key` that admits the keys in DIR/`file`.
  RunningHub start_keyed_hub(HubOptions options = {}, const std::string& key = "hub",
                             const std::string& file = "authorized_keys");

  // The flags that make an agent or cascadectl speak Curve as `name` to the
  // hub whose key pair is `hub_key`.
  std::vector<std::string> as(const std::string& name, const std::string& hub_key = "hub") const;
  // cascade-agent as key `key`, node id `id`, registering `registration`.
  Process& start_keyed_provider(const std::string& endpoint, const std::string& key,
                                const std::string& id, const std::string& registration,
                                const std::string& hub_key = "hub");
  Process& start_keyed_provider(const RunningHub& hub, const std::string& id,
                                const std::string& registration) {
    return start_keyed_provider(hub.endpoint, id, id, registration);
  }
  // cascadectl as key `name` against `hub`.
  CtlResult ctl_as(const std::string& name, const RunningHub& hub, std::vector<std::string> args);
  // Polls cascadectl resolve as `reader` until `address` is listed.
  bool wait_until_resolved(const RunningHub& hub, const std::string& reader,
                           const std::string& service, const std::string& address);
  // The test's own client as key `name` (HubProbe), e.g. a reader that checks
  // what the hub serves, or a hostile client.
  std::unique_ptr<HubProbe> probe_as(const std::string& name, const std::string& endpoint,
                                     const std::string& hub_key = "hub") const;
};

}  // namespace cascade::integration
