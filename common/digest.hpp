#pragma once
// Digests of the sets a beat stands for. A registration set's digest: the hub
// compares it on every beat to decide whether it must ask for the full set.
//
// The digest is the sum (mod 2^64) of one 64-bit hash per registration, so it
// is order-independent and can be updated one registration at a time: a hub
// beating its whole tier's aggregate upstream, or applying a delta of a few
// changes to a set of 100,000, never rehashes the whole set. Each member hash
// is FNV-1a 64 over a canonical byte encoding, finished with a bit mixer so
// sums of related members do not cancel; stable across processes and
// versions (never std::hash). 0 is reserved for "no registrations".

#include <cstdint>
#include <vector>

#include "cascade/common/protocol.hpp"

namespace cascade::proto {

// Sorts by (service, id) and removes exact duplicates in place.
void canonicalize(std::vector<Registration>& regs);
// The same order and the same duplicates removed, as pointers into `regs`:
// for a reader that must not copy the set (a hub applying a received one).
std::vector<const Registration*> canonical_order(const std::vector<Registration>& regs);

// The hash one registration contributes to its set's digest. The instance's
// `tier` tag is not part of a registration and is not hashed.
std::uint64_t registration_hash(const Registration& reg);

// A set digest maintained member by member.
class SetDigest {
 public:
  void add(const Registration& reg) { add_hash(registration_hash(reg)); }
  void remove(const Registration& reg) { remove_hash(registration_hash(reg)); }
  void add_hash(std::uint64_t h) {
    sum_ += h;
    ++count_;
  }
  void remove_hash(std::uint64_t h) {
    sum_ -= h;
    --count_;
  }
  std::uint64_t value() const {
    if (count_ == 0) return 0;
    return sum_ == 0 ? 1 : sum_;
  }
  std::size_t size() const { return count_; }

 private:
  std::uint64_t sum_ = 0;
  std::size_t count_ = 0;
};

// Digest of a set without duplicate members (any order).
std::uint64_t digest_of(const std::vector<Registration>& regs);

// Digest of the config groups a subscriber follows with the versions it holds
// (UpBeat::configs_digest), in any order; 0 for none. A steady beat sends this
// instead of the list, and the hub compares it with what it believes the
// subscriber holds.
std::uint64_t config_uses_digest(const std::vector<ConfigUse>& uses);

}  // namespace cascade::proto
