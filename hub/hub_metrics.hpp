#pragma once
// What cascade-hub serves on --metrics (Prometheus text format), in two kinds:
//
// - Shell instruments (ShellMetrics, StoreMetrics): frames and bytes in and out,
//   replies by type, decode errors by kind, the time to handle a frame and
//   to commit a batch to SQLite. The owning thread updates them where the
//   events happen, one relaxed atomic add each; the scrape reads them.
// - State (add_hub_state_families): nodes, services, instances by state,
//   subscriptions and the core's counters. The scrape asks the owning thread
//   for one sample (HubServer::metrics_sample: the status, O(1) to build),
//   so the registry is never read from another thread and every family of a
//   scrape shows the same moment.
//
// Names, units and labels are listed in docs/metrics.md. A status counter
// that no family shows is caught by a test (unshown_status_counters).

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/metrics/registry.hpp"
#include "cascade/metrics/sampled_families.hpp"
#include "cascade/metrics/stopwatch.hpp"

namespace cascade::hub {

// The instruments a ZeroMQ shell (hub or proxy) updates on its owning thread.
class ShellMetrics {
 public:
  // Registers the families under `prefix` ("cascade_hub", "cascade_proxy").
  ShellMetrics(metrics::Registry& registry, const std::string& prefix);

  // Starts timing the frame's handling.
  metrics::Stopwatch frame_received(std::size_t bytes) {
    frames_received_.inc();
    bytes_received_.inc(bytes);
    return {};
  }
  void frame_sent(std::size_t bytes) {
    frames_sent_.inc();
    bytes_sent_.inc(bytes);
  }
  void frame_handled(const metrics::Stopwatch& since_received) {
    frame_handling_.observe(since_received.seconds());
  }
  void reply(const proto::Message& message) {
    replies_[static_cast<std::size_t>(proto::type_of(message))]->inc();
  }
  void decode_error(proto::ErrorCode code) {
    decode_errors_[static_cast<std::size_t>(code)]->inc();
  }

 private:
  metrics::Counter& frames_received_;
  metrics::Counter& bytes_received_;
  metrics::Counter& frames_sent_;
  metrics::Counter& bytes_sent_;
  metrics::Histogram& frame_handling_;
  std::array<metrics::Counter*, proto::kMaxMsgType + 1> replies_{};
  std::array<metrics::Counter*, proto::kMaxErrorCode + 1> decode_errors_{};
};

// The hub's commits to SQLite, timed by its owning thread.
class StoreMetrics {
 public:
  explicit StoreMetrics(metrics::Registry& registry);
  void committed(double seconds, std::size_t rows) {
    commit_seconds_.observe(seconds);
    commit_rows_.observe(static_cast<double>(rows));
  }
  void commit_failed() { commit_failures_.inc(); }

 private:
  metrics::Histogram& commit_seconds_;
  metrics::Histogram& commit_rows_;
  metrics::Counter& commit_failures_;
};

// The sample a scrape takes: the status's fields and counters by name, the
// upstreams as "upstream.N.<field>".
metrics::SampledFamilies::Sample sample_of(const proto::StatusReply& status);
// Counters by name (a proxy's).
metrics::SampledFamilies::Sample sample_of(
    const std::vector<std::pair<std::string, std::uint64_t>>& counters);

// The hub's state families, read from sample_of(). `upstreams`: the
// configured upstream endpoints, in order (labels of the upstream families).
void add_hub_state_families(metrics::SampledFamilies& sampled,
                            const std::vector<std::string>& upstreams);

// The families of a listening socket's connections and CurveZMQ handshakes
// (ConnectionMonitor and CurveGate counters), shared by hub and proxy.
void add_listener_families(metrics::SampledFamilies& sampled, const std::string& prefix);

// The proxy's families, from ProxyCounters and its listener, by name.
void add_proxy_state_families(metrics::SampledFamilies& sampled);

// A constant 1 labelled with who this is: hub id, tier, zone, security mode.
void add_hub_info(metrics::Registry& registry, const std::string& prefix,
                  std::vector<std::pair<std::string, std::string>> labels);

// Status counters that no family of `sampled` reads, and that are not shown
// another way (decode errors come by kind from the shell). Empty when every
// counter is exposed.
std::vector<std::string> unshown_status_counters(const metrics::SampledFamilies& sampled,
                                                 const proto::StatusReply& status);

}  // namespace cascade::hub
