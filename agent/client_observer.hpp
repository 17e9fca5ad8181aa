#pragma once
// Timings the Client measures as they happen, handed to whoever keeps their
// distribution: the daemon's metrics put them in histograms
// (agent/agent_metrics.hpp). Counts are not here; the Client keeps those
// itself and Client::stats() reads them.
//
// Threads: both are called on the Client's I/O thread, first_lookup() with
// the Client's lock held. An implementation must be quick (a few atomic adds)
// and must not call back into the Client. It must outlive the Client.

#include <chrono>

namespace cascade::agent {

class ClientObserver {
 public:
  virtual ~ClientObserver() = default;

  // A hub answered a beat `round_trip` after it was handed to the transport.
  virtual void beat_round_trip(std::chrono::nanoseconds round_trip) = 0;

  // A first lookup (a query to the hub; resolve() of a service not at hand)
  // ended, answered or not, `latency` after it was asked.
  virtual void first_lookup(std::chrono::nanoseconds latency) = 0;
};

}  // namespace cascade::agent
