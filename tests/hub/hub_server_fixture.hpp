#pragma once
// A HubServer on its own thread over tcp loopback, with a store that can be
// told to fail, and a DEALER client: for tests of the hub's I/O shell.

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <thread>

#include "cascade/common/codec.hpp"
#include "cascade/hub/hub_server.hpp"

namespace cascade::hub::testing {

class ScriptedStore final : public HubStore {
 public:
  std::uint64_t next_epoch() override { return 1; }
  HubSnapshot load() override { return {}; }
  void apply(const PersistBatch& batch) override {
    ++entered;
    applied_on = std::this_thread::get_id();
    while (stalled)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    if (failing) throw std::runtime_error("disk full");
    if (backing != nullptr) backing->apply(batch);
    ++commits;
    instances_written += batch.instance_upserts.size();
    audit_written += batch.audit.size();
    if (!batch.audit.empty()) audit_wall_ms = batch.wall_ms;
    config_written += batch.config_changes.size();
    if (!batch.config_changes.empty()) config_wall_ms = batch.config_changes.back().wall_ms;
  }
  // When set (before the server runs), what commits is written there too: a
  // real file whose audit log a test reads back.
  HubStore* backing = nullptr;
  std::atomic<bool> failing{false};
  // While set, apply() waits, as on a slow disk; `entered` counts the calls
  // that began.
  std::atomic<bool> stalled{false};
  std::atomic<int> entered{0};
  std::atomic<std::thread::id> applied_on{};
  std::atomic<int> commits{0};
  std::atomic<std::size_t> instances_written{0};
  std::atomic<std::size_t> audit_written{0};
  std::atomic<WallMs> audit_wall_ms{0};
  std::atomic<std::size_t> config_written{0};
  std::atomic<WallMs> config_wall_ms{0};  // as the core stamped the last config change
};

class HubServerTest : public ::testing::Test {
 protected:
  static HubConfig default_config() {
    HubConfig config;
    config.listen = "tcp://127.0.0.1:*";
    config.flush_interval = Duration{5};
    return config;
  }
  // Runs before the server's thread starts, for what must precede run(). It
  // is handed what it may touch: a derived fixture is not constructed yet.
  using Prepare = std::function<void(HubServer&, ScriptedStore&)>;
  // With `registry`, the server's metrics are registered there.
  explicit HubServerTest(const HubConfig& config = default_config(),
                         metrics::Registry* registry = nullptr, const Prepare& prepare = {}) {
    server = std::make_unique<HubServer>(config, clock, store, context);
    if (registry != nullptr) server->enable_metrics(*registry);
    endpoint = server->bind();
    if (prepare) prepare(*server, store);
    thread = std::thread([this] { server->run(stop, &reload); });
    client.set(zmq::sockopt::linger, 0);
    client.connect(endpoint);
  }
  ~HubServerTest() override { stop_server(); }
  // The server's run() returns (once; later calls do nothing).
  void stop_server() {
    stop = true;
    if (thread.joinable()) thread.join();
  }
  std::optional<proto::Message> request(const proto::Message& m,
                                        Duration timeout = Duration{1000}) {
    const auto bytes = proto::encode(m);
    client.send(zmq::buffer(bytes), zmq::send_flags::none);
    zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, timeout);
    if (!(item.revents & ZMQ_POLLIN)) return std::nullopt;
    zmq::message_t reply;
    if (!client.recv(reply)) return std::nullopt;
    auto decoded = proto::decode_frame(reply.to_string_view());
    return std::get<proto::Message>(decoded.items.at(0));
  }
  std::optional<proto::DecodedFrame> receive(Duration timeout = Duration{1000}) {
    zmq::pollitem_t item{client.handle(), 0, ZMQ_POLLIN, 0};
    zmq::poll(&item, 1, timeout);
    zmq::message_t frame;
    if (!(item.revents & ZMQ_POLLIN) || !client.recv(frame)) return std::nullopt;
    return proto::decode_frame(frame.to_string_view());
  }

  SystemClock clock;
  ScriptedStore store;
  zmq::context_t context{1};
  std::unique_ptr<HubServer> server;
  std::string endpoint;
  std::atomic<bool> stop{false};
  std::atomic<bool> reload{false};  // SIGHUP
  std::thread thread;
  zmq::socket_t client{context, zmq::socket_type::dealer};
};

}  // namespace cascade::hub::testing
