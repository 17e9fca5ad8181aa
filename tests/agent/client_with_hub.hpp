#pragma once
// The fixture of the agent library's tests against a real hub: a hub running
// for each test, Clients pointed at it, and the service most tests use.

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "cascade/agent/client.hpp"
#include "cascade/tests/agent/running_hub.hpp"

namespace cascade::agent::testing {

// An empty path under the temp directory, "cascade-<tag>-<pid>-<random>".
inline std::filesystem::path fresh_dir(const std::string& tag) {
  auto dir =
      std::filesystem::temp_directory_path() /
      ("cascade-" + tag + "-" + std::to_string(::getpid()) + "-" + std::to_string(std::rand()));
  std::filesystem::remove_all(dir);
  return dir;
}

// `name` tells the tests' hubs apart: its directory is fresh_dir(name + "-hub"),
// its id name + "-test-hub". The hub stops and its directory goes at TearDown.
class ClientWithHubTest : public ::testing::Test {
 protected:
  static constexpr Duration kBeat{100};

  explicit ClientWithHubTest(const std::string& name)
      : hub_dir(fresh_dir(name + "-hub")),
        hub(std::make_unique<RunningHub>(hub_dir, name + "-test-hub", kBeat)) {}

  // A Client's options with the hub as its only hub, node id `id`.
  ClientOptions options(const std::string& id) {
    ClientOptions o;
    o.node_id = id;
    o.hubs = {hub->endpoint()};
    o.beat_interval = kBeat;
    o.query_timeout = Duration{500};
    o.shutdown_timeout = Duration{1000};
    return o;
  }
  void TearDown() override {
    hub.reset();
    std::filesystem::remove_all(hub_dir);
  }

  std::filesystem::path hub_dir;
  std::unique_ptr<RunningHub> hub;  // reset() to stop the hub mid-test
  const proto::ServiceKey orders{"orders", "default"};
};

}  // namespace cascade::agent::testing
