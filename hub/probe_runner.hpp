#pragma once
// Makes the TCP connects hub/liveness_probes.hpp asks for, on a thread of its
// own, so the hub's serving thread never waits on a network it cannot reach.
// The serving thread submits requests and takes results by message (two
// queues under one mutex); the core decides what they mean.
//
// A probe opens a non-blocking TCP connection to the registered address and
// closes it as soon as the answer is known: accepted, refused (RST), or no
// answer within `timeout` (or unreachable, or an address it cannot parse).
// Only numeric hosts and "localhost" are probed: a DNS lookup could block the
// prober for longer than a lease, and an instance registers its address as
// its callers dial it, which is numeric almost always.

#include <condition_variable>
#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/hub/liveness_probes.hpp"

namespace cascade::hub {

struct ProbeRunnerConfig {
  Duration timeout{1000};            // no answer within this: kNoAnswer
  std::size_t max_concurrent = 256;  // connections open at once
};

// host and port of a registered address ("10.0.0.1:80", "[::1]:80",
// "http://10.0.0.1:8080/path"); nullopt when it cannot be probed.
struct ProbeTarget {
  std::string host;
  std::uint16_t port = 0;
};
std::optional<ProbeTarget> probe_target(std::string_view address);

class ProbeRunner {
 public:
  explicit ProbeRunner(ProbeRunnerConfig config);
  ~ProbeRunner();
  ProbeRunner(const ProbeRunner&) = delete;
  ProbeRunner& operator=(const ProbeRunner&) = delete;

  void submit(std::vector<ProbeRequest> requests);
  std::vector<ProbeResult> take_results();

 private:
  void run();
  std::vector<ProbeResult> probe_batch(std::vector<ProbeRequest> batch) const;

  ProbeRunnerConfig config_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<ProbeRequest> requests_;
  std::vector<ProbeResult> results_;
  bool stop_ = false;
  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace cascade::hub
