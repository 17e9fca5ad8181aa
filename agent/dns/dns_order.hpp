#pragma once
// Which instances of a service DNS serves, and in which order.
//
// Served: the instances a pick could choose (agent/picker.hpp's
// eligible_instances: UP, weight above 0, not isolated by the hub); an
// instance whose lease is unconfirmed (eviction protection holds it during a
// partition) is served, after the confirmed ones of its tier.
//
// Order: the nearest tier first (Instance::tier 0 is this datacenter), so
// that a resolver that takes the first address stays in the datacenter; within
// a tier, a weighted random order: each position is drawn among the instances
// not placed yet, in proportion to their weights, so the first address of
// successive answers spreads the load the way the weights say.

#include <vector>

#include "cascade/common/protocol.hpp"
#include "cascade/common/random.hpp"

namespace cascade::agent::dns {

std::vector<proto::Instance> dns_order(const std::vector<proto::Instance>& instances, Rng& rng);

}  // namespace cascade::agent::dns
