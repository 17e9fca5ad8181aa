#pragma once
// Tells a crashed node from an unreachable one while eviction protection
// holds it (schemas/protocol-v1.md, section 5.11).
//
// Eviction protection holds a node whose lease ran out when too many expire
// at once or its whole source went quiet: a partition must not empty the
// registry. But half a service crashing looks the same by counts, and its
// dead instances would be served as "unconfirmed" until max_hold. The hub
// sits in its instances' datacenter, so it can ask the instances themselves:
// while a node is held, each of its addresses is probed with a TCP connect.
// - Refused (RST): nothing listens there any more; the process is gone.
// - Accepted: the instance is alive although its agent does not beat; held.
// - No answer (timeout, unreachable network): a partition looks like this; held.
// A node is known dead once every one of its addresses refused (a probe, or
// a caller's "connection refused" failure report about it); the core then
// expires it at once. Probes are repeated every lease while the node stays
// held, so a process that died later is found too.
//
// Sans-IO: this class decides what to probe and what the answers mean; the
// I/O shell (hub/probe_runner.hpp) makes the connections. Thread-safety: none.

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/string_map.hpp"

namespace cascade::hub {

enum class ProbeOutcome : std::uint8_t {
  kRefused,   // connection refused: nothing listens
  kAccepted,  // something listens: alive
  kNoAnswer,  // timed out, unreachable, or an address that cannot be probed
};

struct ProbeRequest {
  std::string node_id;
  std::string address;  // as registered: host:port, [v6]:port or scheme://host:port/...
  bool operator==(const ProbeRequest&) const = default;
};

struct ProbeResult {
  std::string node_id;
  std::string address;
  ProbeOutcome outcome = ProbeOutcome::kNoAnswer;
};

struct LivenessProbeConfig {
  // Off in a configuration built in code (tests and benchmarks register
  // made-up addresses that must never be dialled); cascade-hub turns it on
  // unless told --probe-held off.
  bool enabled = false;
  std::size_t max_queued = 4096;  // probe requests waiting for the shell; more wait a lease
};

struct ProbeCounters {
  std::uint64_t probes_sent = 0;
  std::uint64_t probes_refused = 0;
  std::uint64_t probes_accepted = 0;
  std::uint64_t probes_no_answer = 0;
  std::uint64_t probes_capped = 0;    // not sent: the queue was full
  std::uint64_t refused_reports = 0;  // callers' "connection refused" reports on held nodes
};

class LivenessProbes {
 public:
  explicit LivenessProbes(LivenessProbeConfig config) : config_(config) {}

  // The node is held (or still held, a lease later): probe its addresses.
  void probe(std::string_view node_id, const std::vector<std::string>& addresses);
  // The node beat again, expired or left: its probes no longer matter.
  void forget(std::string_view node_id);
  // What a probe found. True when the node is now known dead.
  bool on_result(const ProbeResult& result);
  // A caller saw "connection refused" at `address` of a held node: the same
  // evidence as a refused probe. True when the node is now known dead.
  bool on_refused_report(std::string_view node_id, const std::string& address);
  // The probes to make now, in the order asked.
  std::vector<ProbeRequest> take_requests();

  const ProbeCounters& counters() const { return counters_; }

 private:
  struct NodeProbes {
    std::set<std::string> addresses;  // all of the node's
    std::set<std::string> refused;    // of which refused since it was held
  };
  bool refused(std::string_view node_id, const std::string& address);

  LivenessProbeConfig config_;
  StringMap<NodeProbes> nodes_;
  std::vector<ProbeRequest> queued_;
  ProbeCounters counters_;
};

}  // namespace cascade::hub
