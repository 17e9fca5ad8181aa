#pragma once
// A real hub on its own thread for the agent library's tests: the client
// talks to it over tcp loopback exactly as it would in production.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <zmq.hpp>

#include "cascade/common/clock.hpp"
#include "cascade/hub/hub_server.hpp"
#include "cascade/hub/sqlite_store.hpp"

namespace cascade::agent::testing {

// Runs `server.run(stop)` on its own thread until destroyed.
template <typename Server>
class RunInBackground {
 public:
  explicit RunInBackground(Server& server) : thread_([this, &server] { server.run(stop_); }) {}
  ~RunInBackground() {
    stop_ = true;
    thread_.join();
  }

 private:
  std::atomic<bool> stop_{false};  // before thread_: it must exist when the thread starts
  std::thread thread_;
};

// A hub server on an ephemeral loopback port, its state in `dir`.
class RunningHub {
 public:
  // `adjust` changes the hub's config (keys, limits) before it starts.
  RunningHub(std::filesystem::path dir, std::string id, Duration beat_interval,
             const std::function<void(hub::HubConfig&)>& adjust = {})
      : dir_(std::move(dir)) {
    hub::HubConfig config;
    config.id = std::move(id);
    config.listen = "tcp://127.0.0.1:*";
    config.data_dir = dir_;
    config.beat_interval = beat_interval;
    if (adjust) adjust(config);
    store_ = hub::SqliteHubStore::open(dir_, sqlite::Synchronous::kNormal);
    server_ = std::make_unique<hub::HubServer>(config, clock_, *store_, context_);
    endpoint_ = server_->bind();
    run_ = std::make_unique<RunInBackground<hub::HubServer>>(*server_);
  }
  const std::string& endpoint() const { return endpoint_; }

 private:
  std::filesystem::path dir_;
  SystemClock clock_;
  zmq::context_t context_{1};
  std::unique_ptr<hub::SqliteHubStore> store_;
  std::unique_ptr<hub::HubServer> server_;
  std::string endpoint_;
  std::unique_ptr<RunInBackground<hub::HubServer>> run_;  // declared last: stops first
};

// Polls `pred` every 10 ms until it holds or `within` passes.
template <typename Pred>
bool eventually(Pred pred, Duration within = Duration{3000}) {
  const auto deadline = std::chrono::steady_clock::now() + within;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(Duration{10});
  }
  return pred();
}

}  // namespace cascade::agent::testing
