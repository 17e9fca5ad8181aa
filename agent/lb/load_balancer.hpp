#pragma once
// LoadBalancer: chooses one candidate of a service for each call, and learns
// from the outcome of the calls when its policy needs to.
//
// Who calls it: agent::Client keeps one balancer per (service, policy), gives
// it the service's candidates (agent/picker.hpp) whenever the list's version
// changes, picks under its mutex and forwards call feedback to it.
//
// Thread-safety: none. A balancer is plain state; its owner serialises every
// call (the Client does, under its mutex). Nothing here reads a clock, sleeps
// or draws randomness of its own: the Rng is passed in.
//
// Cost: set_candidates() is rare (a list version changed) and may allocate;
// pick() is the hot path and neither allocates nor hashes a string per candidate.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/agent/picker.hpp"
#include "cascade/common/protocol.hpp"
#include "cascade/common/random.hpp"

namespace cascade::agent {

struct PickContext {
  // consistent_hash: the request's key (a user id's hash, say); equal keys go
  // to the same address while it is a candidate. The balancer mixes it, so
  // sequential keys spread too. Other policies ignore it.
  std::uint64_t hash_key = 0;
  // Addresses already tried by this call: a retry goes elsewhere. Not owned;
  // must outlive the pick() call. nullptr or empty: nothing excluded.
  const std::vector<std::string>* exclude = nullptr;
  // The method about to be called, for routing rules that match on it
  // (agent/router.hpp); not owned. Balancers ignore it.
  std::string_view method{};
};

// Typed tuning of the learning policies; every default is usable as is.
// check_lb_config() names the first bad field.
struct LbConfig {
  // consistent_hash: virtual nodes (ring points) of the heaviest candidate;
  // the others get points in proportion to their weight, at least 1. More
  // points spread keys more evenly (with 160 an address's share varies by
  // about ±8%) at the cost of a larger ring (12 bytes a point).
  std::uint32_t ring_points_per_instance = 160;
  // consistent_hash: the ring never exceeds this many points; with more
  // candidates than that allows, every candidate's count is scaled down.
  std::size_t ring_max_points = 1u << 20;

  // adaptive and p2c: the latency average is exponentially decaying per
  // sample: avg = decay * avg + (1 - decay) * sample. In [0, 1); 0.9 makes
  // the last ~10 calls dominate.
  double latency_decay = 0.9;
  // adaptive and p2c: a failed call counts as at least this slow, so an
  // address that fails fast does not look fast and attract more calls.
  std::chrono::microseconds failure_latency{std::chrono::seconds(1)};

  // adaptive: the slowest share of the measured addresses (0.2 = a fifth,
  // at least one once two addresses are measured) ...
  double adaptive_slow_share = 0.2;
  // ... whose average is also at least this multiple of the median average
  // (so equal latencies penalise nobody) ...
  double adaptive_slow_ratio = 1.5;
  // ... get their weight multiplied by this, in (0, 1]. Not 0: a slow
  // address keeps some calls, so its average can show its recovery.
  double adaptive_slow_weight_factor = 0.6;
  // adaptive: effective weights are recomputed after this many finished
  // calls (an O(n) step kept off the pick path), at least 1.
  std::uint32_t adaptive_refresh_samples = 8;
};

// "" when usable, else which field is wrong and why.
std::string check_lb_config(const LbConfig& config);

class LoadBalancer {
 public:
  virtual ~LoadBalancer() = default;

  virtual LbPolicy policy() const = 0;

  // Replaces the candidates (already filtered: UP, weight > 0, nearest tier).
  // What the balancer learned about an address (calls in flight, latency
  // average, smooth weighted round robin's current weight) survives while
  // the address stays a candidate and is forgotten when it leaves.
  virtual void set_candidates(std::vector<proto::Instance> candidates) = 0;
  virtual const std::vector<proto::Instance>& candidates() const = 0;

  // An index into candidates(), or nullopt when there is no candidate left
  // (empty list, or every candidate's address is in ctx.exclude).
  virtual std::optional<std::size_t> pick(const PickContext& ctx, Rng& rng) = 0;

  // Feedback on calls to an address (addresses that are not candidates are
  // ignored). Every started call should be finished exactly once; counts
  // never go below zero. Policies that do not learn ignore both.
  virtual void on_call_started(std::string_view address) = 0;
  virtual void on_call_finished(std::string_view address, std::chrono::microseconds latency,
                                bool ok) = 0;
};

// A balancer with no candidates yet. Throws std::invalid_argument with
// check_lb_config()'s message for a bad config.
std::unique_ptr<LoadBalancer> make_load_balancer(LbPolicy policy, const LbConfig& config = {});

}  // namespace cascade::agent
