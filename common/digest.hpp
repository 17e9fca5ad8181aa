#pragma once
// Digest of an agent's registration set: the hub compares it on every beat to
// decide whether it must ask for the full set. Order-independent (the set is
// canonicalised first) and stable across processes and versions: FNV-1a 64
// over a canonical byte encoding, never std::hash.

#include <cstdint>
#include <vector>

#include "common/protocol.hpp"

namespace cascade::proto {

// Sorts by (service, id) and removes exact duplicates in place.
void canonicalize(std::vector<Registration>& regs);

// Digest of a canonical set; 0 is reserved for "no registrations".
std::uint64_t digest_of(const std::vector<Registration>& canonical_regs);

}  // namespace cascade::proto
