#pragma once
// Builders shared by the hub core tests.

#include <string>
#include <vector>

#include "common/digest.hpp"
#include "common/protocol.hpp"
#include "tests/common/builders.hpp"

namespace cascade::hub::testing {

using test_support::reg;

inline std::uint64_t digest(std::vector<proto::Registration> regs) {
  proto::canonicalize(regs);
  return proto::digest_of(regs);
}

// A beat carrying the full set.
inline proto::UpBeat beat_with_set(const std::string& node, std::uint64_t seq,
                                   std::vector<proto::Registration> regs, std::uint64_t epoch = 1) {
  proto::UpBeat b;
  b.node_id = node;
  b.epoch = epoch;
  b.seq = seq;
  b.digest = digest(regs);
  b.registrations = std::move(regs);
  return b;
}

// A steady-state beat: digest only.
inline proto::UpBeat beat(const std::string& node, std::uint64_t seq, std::uint64_t set_digest,
                          std::vector<proto::ServiceUse> uses = {}, std::uint64_t epoch = 1) {
  proto::UpBeat b;
  b.node_id = node;
  b.epoch = epoch;
  b.seq = seq;
  b.digest = set_digest;
  b.uses = std::move(uses);
  return b;
}

inline proto::ServiceUse use(const std::string& service, std::uint64_t version) {
  proto::ServiceUse u;
  u.service.name = service;
  u.version = version;
  return u;
}

}  // namespace cascade::hub::testing
