#pragma once
// Batches and rate-limits an agent's fast-fail reports.
//
// A caller that sees a call fail tells its hub at once, not at the next beat:
// that is what lets a hub isolate a hung provider in milliseconds. Why these
// rules:
// - Batching: signals raised within `batch_delay` travel in one message, so a
//   burst of failing calls costs one frame.
// - Per-address rate limit: an address gets at most one signal per
//   `per_address_interval`; further failures in that interval are folded into
//   the count of the next signal, so a dead address hammered by a busy caller
//   cannot turn into a report storm, and no failure goes uncounted.
// - Bounded: at most `max_addresses` addresses are tracked; signals about
//   more are dropped and counted.
//
// Sans-IO: time comes in as `now`.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "cascade/common/clock.hpp"
#include "cascade/common/protocol.hpp"

namespace cascade::agent {

struct FailureReporterConfig {
  Duration batch_delay{5};
  Duration per_address_interval{1000};
  std::size_t max_addresses = 10'000;
};

struct FailureReporterCounters {
  std::uint64_t failures = 0;  // failures reported by the application
  std::uint64_t signals = 0;   // signals sent (each may fold several failures)
  std::uint64_t dropped = 0;   // over max_addresses
};

class FailureReporter {
 public:
  FailureReporter(FailureReporterConfig config, std::string reporter)
      : config_(config), reporter_(std::move(reporter)) {}

  void report(MonoTime now, const proto::ServiceKey& service, const std::string& address,
              proto::FailureKind kind);
  // The signals due now (empty before the batch delay or interval passed).
  std::vector<proto::FailureSignal> take_due(MonoTime now);
  std::optional<MonoTime> next_deadline() const { return due_; }
  const FailureReporterCounters& counters() const { return counters_; }

 private:
  struct Slot {
    MonoTime sent_at{};
    std::uint32_t folded = 0;  // failures since sent_at, not sent yet
    proto::FailureKind kind = proto::FailureKind::kTimeout;
  };
  using Target = std::pair<proto::ServiceKey, std::string>;

  void arm(MonoTime at);
  void prune(MonoTime now);
  void queue(const Target& target, Slot& slot, MonoTime now);

  FailureReporterConfig config_;
  std::string reporter_;
  std::map<Target, Slot> slots_;
  std::vector<proto::FailureSignal> ready_;
  std::optional<MonoTime> due_;
  FailureReporterCounters counters_;
};

}  // namespace cascade::agent
