#pragma once
// Real hubs inside a benchmark process, and a probe to ask them: the
// HubServer as the daemon runs it (its own thread, its own ZeroMQ context,
// SQLite on disk), so figures come from the product's transport and store
// while the program can read the hub thread's CPU and the hub's counters.
// Shared by cascade_hub_bench, cascade_tier_bench and cascade_fast_fail_bench.
// Header-only.

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>
#include <zmq.hpp>

#include "cascade/bench/bench_util.hpp"
#include "cascade/bench/thread_cpu.hpp"
#include "cascade/common/clock.hpp"
#include "cascade/common/codec.hpp"
#include "cascade/common/curve_keys.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/hub/hub_config.hpp"
#include "cascade/hub/hub_server.hpp"
#include "cascade/hub/sqlite_store.hpp"
#include "cascade/metrics/http_endpoint.hpp"

namespace cascade::bench {

// A benchmark client's CurveZMQ identity towards one hub: its own key pair
// (listed in the hub's authorised-keys file) and the hub's public key.
struct CurveClientKey {
  curve::KeyPair own;
  std::string server_public_z85;
};

// Makes `socket` a CurveZMQ client as `key` (call before connect); leaves it
// in plain text when `key` is nullptr.
inline void dial_as(zmq::socket_t& socket, const CurveClientKey* key) {
  if (key != nullptr) curve::make_curve_client(socket, key->own, key->server_public_z85);
}

struct InProcessHubOptions {
  std::string thread_name{};  // the hub thread's name; empty: "hub-" + the hub's id
  int io_prefix = 0;          // names the ZeroMQ I/O thread "N/ZMQbg/IO/0" (0: left unnamed)
  bool metrics = false;       // as --metrics 127.0.0.1:0: the hub's metrics and their endpoint
};

// A HubServer on its own thread with its own ZeroMQ context and SQLite store
// (in config.data_dir, synchronous NORMAL as the daemon opens it). Its
// threads are named so their CPU can be told from the program's.
class InProcessHub {
 public:
  explicit InProcessHub(const hub::HubConfig& config, const InProcessHubOptions& options = {})
      : io_prefix_(options.io_prefix) {
    if (io_prefix_ != 0) zmq_ctx_set(context_.handle(), ZMQ_THREAD_NAME_PREFIX, io_prefix_);
    store_ = hub::SqliteHubStore::open(config.data_dir, sqlite::Synchronous::kNormal);
    server_ = std::make_unique<hub::HubServer>(config, clock_, *store_, context_);
    if (options.metrics) serve_metrics();
    endpoint_ = server_->bind();
    const auto name = options.thread_name.empty() ? "hub-" + config.id : options.thread_name;
    thread_.start(name, [this] { server_->run(stop_); });
  }
  ~InProcessHub() {
    stop_.store(true);
    thread_.join();
    metrics_endpoint_.reset();  // before the server its scrapes ask
  }
  InProcessHub(const InProcessHub&) = delete;
  InProcessHub& operator=(const InProcessHub&) = delete;

  const std::string& endpoint() const { return endpoint_; }
  // "http://127.0.0.1:PORT/metrics" with InProcessHubOptions::metrics, else "".
  std::string metrics_url() const {
    return metrics_endpoint_ ? "http://" + metrics_endpoint_->address().to_string() + "/metrics"
                             : "";
  }
  int io_prefix() const { return io_prefix_; }
  // CPU of the hub thread (its ZeroMQ I/O thread not included).
  double cpu_seconds() const { return thread_.cpu_seconds(); }
  CpuTime cpu() const { return thread_.cpu(); }
  // CPU of its ZeroMQ I/O thread, where CurveZMQ encrypts and decrypts
  // (0 when the thread is unnamed: io_prefix 0).
  double io_cpu_seconds() const { return zmq_io_thread_cpu(io_prefix_); }

 private:
  void serve_metrics() {
    metrics_ = std::make_unique<metrics::Registry>();
    server_->enable_metrics(*metrics_);
    metrics::EndpointOptions endpoint;
    endpoint.listen = std::get<SocketAddress>(SocketAddress::parse("127.0.0.1:0"));
    metrics_endpoint_ = std::make_unique<metrics::HttpEndpoint>(endpoint, *metrics_);
  }

  int io_prefix_;
  zmq::context_t context_{1};
  SystemClock clock_;
  std::unique_ptr<hub::SqliteHubStore> store_;
  std::unique_ptr<hub::HubServer> server_;
  std::unique_ptr<metrics::Registry> metrics_;
  std::unique_ptr<metrics::HttpEndpoint> metrics_endpoint_;
  std::atomic<bool> stop_{false};
  std::string endpoint_;
  MeasuredThread thread_;  // last: starts after everything it uses
};

// A hub named `id` (its zone too) of tier `tier`, listening on a free tcp
// loopback port, its SQLite files in dir/id; everything else as shipped.
inline hub::HubConfig loopback_hub_config(const std::string& id, std::uint32_t tier,
                                          const std::filesystem::path& dir,
                                          std::vector<std::string> upstreams = {}) {
  hub::HubConfig c;
  c.id = id;
  c.tier = tier;
  c.zone = id;
  c.listen = "tcp://127.0.0.1:*";
  c.data_dir = dir / id;
  c.upstreams = std::move(upstreams);
  return c;
}

// Two tiers as the loopback benchmarks deploy them: an L2 and two L1s under
// it, dc1 and dc2, their SQLite files in one temp directory. `tune` adjusts
// each hub's configuration (beats, isolation); `io_prefixes` name the
// ZeroMQ I/O threads of l2, dc1 and dc2 (0: unnamed).
struct TwoTierHubs {
  using Tune = std::function<void(hub::HubConfig&)>;

  TwoTierHubs(const std::string& dir_prefix, const Tune& tune, std::array<int, 3> io_prefixes = {})
      : dir(dir_prefix),
        l2(config("l2", 2, {}, tune), {.io_prefix = io_prefixes[0]}),
        dc1(config("dc1", 1, {l2.endpoint()}, tune), {.io_prefix = io_prefixes[1]}),
        dc2(config("dc2", 1, {l2.endpoint()}, tune), {.io_prefix = io_prefixes[2]}) {}

  TempDir dir;
  InProcessHub l2;
  InProcessHub dc1;
  InProcessHub dc2;

 private:
  hub::HubConfig config(const std::string& id, std::uint32_t tier,
                        std::vector<std::string> upstreams, const Tune& tune) const {
    auto c = loopback_hub_config(id, tier, dir.path(), std::move(upstreams));
    tune(c);
    return c;
  }
};

namespace detail {

// The request id a reply names (an ErrorReply's `ref`), if any.
inline std::optional<std::uint64_t> request_id_of(const proto::Message& m) {
  return std::visit(
      [](const auto& v) -> std::optional<std::uint64_t> {
        using T = std::decay_t<decltype(v)>;
        if constexpr (std::is_same_v<T, proto::ErrorReply>)
          return v.ref;
        else if constexpr (requires { v.request_id; })
          return v.request_id;
        else
          return std::nullopt;
      },
      m);
}

}  // namespace detail

// A DEALER speaking the codec to one hub, one request in flight, on a
// ZeroMQ context of its own (its I/O thread is none of the measured ones);
// with `key`, as a CurveZMQ client.
class HubProbe {
 public:
  explicit HubProbe(const std::string& endpoint,
                    std::chrono::seconds timeout = std::chrono::seconds(5),
                    const CurveClientKey* key = nullptr)
      : socket_(context_, zmq::socket_type::dealer), timeout_(timeout) {
    socket_.set(zmq::sockopt::linger, 0);
    dial_as(socket_, key);
    socket_.connect(endpoint);
  }

  // Sends `m` under the next request id and returns the reply naming it
  // (other frames are dropped); throws when none came within the timeout.
  proto::Message request(proto::Message m) {
    const auto id = ++next_id_;
    std::visit(
        [id](auto& v) {
          if constexpr (requires { v.request_id; }) v.request_id = id;
        },
        m);
    const auto bytes = proto::encode(m);
    if (!socket_.send(zmq::buffer(bytes), zmq::send_flags::none))
      throw std::runtime_error("probe: send failed");
    const auto deadline = std::chrono::steady_clock::now() + timeout_;
    for (;;) {
      wait_readable(deadline);
      zmq::message_t frame;
      if (!socket_.recv(frame, zmq::recv_flags::dontwait)) continue;
      auto decoded = proto::decode_frame(frame.to_string_view());
      if (decoded.batched || decoded.items.size() != 1) continue;
      auto* message = std::get_if<proto::Message>(&decoded.items.front());
      if (message != nullptr && detail::request_id_of(*message) == id) return std::move(*message);
    }
  }

  proto::StatusReply status() {
    auto reply = request(proto::StatusRequest{});
    if (auto* s = std::get_if<proto::StatusReply>(&reply)) return std::move(*s);
    throw std::runtime_error("probe: a StatusRequest was not answered with a StatusReply");
  }

  // The hub's counters by name, and beside them its instances, nodes and
  // isolated instances.
  std::map<std::string, std::uint64_t> counters() {
    auto s = status();
    std::map<std::string, std::uint64_t> out(s.counters.begin(), s.counters.end());
    out["instances"] = s.instances;
    out["nodes"] = s.nodes;
    out["isolated"] = s.isolated;
    return out;
  }

 private:
  // Returns once a frame is there; throws at `deadline`.
  void wait_readable(std::chrono::steady_clock::time_point deadline) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    zmq::pollitem_t item{socket_.handle(), 0, ZMQ_POLLIN, 0};
    if (left.count() <= 0 || zmq::poll(&item, 1, left) <= 0)
      throw std::runtime_error("probe: no reply within " + std::to_string(timeout_.count()) + " s");
  }

  zmq::context_t context_{1};
  zmq::socket_t socket_;
  std::chrono::seconds timeout_;
  std::uint64_t next_id_ = 0;
};

}  // namespace cascade::bench
