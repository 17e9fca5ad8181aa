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
#include "cascade/common/codec.hpp"
#include "cascade/tests/agent/running_hub.hpp"
#include "cascade/tests/common/builders.hpp"

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

  // `adjust_hub` changes the hub's config before it starts (keys, limits).
  explicit ClientWithHubTest(const std::string& name,
                             const std::function<void(hub::HubConfig&)>& adjust_hub = {})
      : hub_dir(fresh_dir(name + "-hub")),
        hub(std::make_unique<RunningHub>(hub_dir, name + "-test-hub", kBeat, adjust_hub)) {}

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
  // An operator's edit of a config group at the hub, and its answer.
  proto::AdminReply set_config(const std::string& group, std::vector<proto::ConfigEdit> edits) {
    return admin(test_support::config_edit(group, std::move(edits)));
  }
  // An edit of one key, which the hub must accept.
  void set_config_key(const std::string& group, const std::string& key, const std::string& value) {
    ASSERT_TRUE(set_config(group, {{key, value}}).ok);
  }
  // What cascadectl sends for an operator command, and the hub's answer
  // (a failed test and an empty reply when none came within 3 s).
  proto::AdminReply admin(proto::AdminRequest request) {
    request.request_id = 77;
    request.actor = "test@localhost";
    zmq::context_t context(1);
    zmq::socket_t socket(context, zmq::socket_type::dealer);
    socket.set(zmq::sockopt::linger, 0);
    socket.connect(hub->endpoint());
    const auto bytes = proto::encode(request);
    socket.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::pollitem_t item{socket.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, std::chrono::milliseconds(3000));
    zmq::message_t frame;
    if (!(item.revents & ZMQ_POLLIN) || !socket.recv(frame, zmq::recv_flags::dontwait)) {
      ADD_FAILURE() << "the hub did not answer the AdminRequest";
      return {};
    }
    const auto decoded = proto::decode_frame(frame.to_string_view());
    const auto* message = std::get_if<proto::Message>(&decoded.items.at(0));
    const auto* reply = message != nullptr ? std::get_if<proto::AdminReply>(message) : nullptr;
    if (reply == nullptr) {
      ADD_FAILURE() << "the hub's answer is not an AdminReply";
      return {};
    }
    return *reply;
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
