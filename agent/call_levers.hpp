#pragma once
// The governance levers an operator pulls through the config centre (seed
// 004's degrade switches and concurrency limits), as Client::call() obeys
// them. The keys live in any config group the client follows:
//
//   degrade.SERVICE = on                 calls to SERVICE fail fast, without
//                                        touching the network (or run the
//                                        application's fallback), until the
//                                        key is off or gone
//   limit.SERVICE.max_in_flight = N      at most N calls to SERVICE in flight
//                                        from this client; the others are
//                                        refused at once with their own error
//
// "on", "true", "1" and "yes" (any case) switch a degrade on; anything else is
// off. A limit is a decimal number from 0 (every call refused) to 2^32-1; a
// value that is not one leaves the service unlimited and is reported by
// problems(). When two followed groups set the same key, the group first in
// name order wins that key (reported too); a degrade switch in one group and
// a limit in another both apply. SERVICE is the service's name, whatever its
// group.
//
// Thread-safety: all members may be called from any thread.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/config_copy.hpp"

namespace cascade::agent {

inline constexpr std::string_view kDegradePrefix = "degrade.";
inline constexpr std::string_view kLimitPrefix = "limit.";
inline constexpr std::string_view kMaxInFlightSuffix = ".max_in_flight";

struct Lever {
  bool degraded = false;
  std::optional<std::uint32_t> max_in_flight;
  bool operator==(const Lever&) const = default;
};

struct LeverCounters {
  std::uint64_t degraded = 0;    // calls failed fast (or sent to the fallback) by a degrade switch
  std::uint64_t over_limit = 0;  // calls refused by a concurrency limit
  // Lever keys not obeyed now (unreadable value, set in two groups); the
  // client logs each once, when it appears.
  std::uint64_t problems = 0;
};

class CallLevers {
 public:
  // A call admitted under a limit: holds its place until destroyed.
  class Slot {
   public:
    Slot() = default;
    explicit Slot(std::shared_ptr<std::atomic<std::uint32_t>> in_flight)
        : in_flight_(std::move(in_flight)) {}
    Slot(Slot&&) noexcept = default;
    Slot& operator=(Slot&&) noexcept = default;
    Slot(const Slot&) = delete;
    Slot& operator=(const Slot&) = delete;
    ~Slot() {
      if (in_flight_) in_flight_->fetch_sub(1, std::memory_order_relaxed);
    }

   private:
    std::shared_ptr<std::atomic<std::uint32_t>> in_flight_;
  };

  // Rebuilds the levers from every group the client follows (after a change).
  // @return the problems this update found that the last one had not.
  std::vector<std::string> update(const proto::ConfigCopy& copy);
  Lever lever(std::string_view service) const;
  // A degraded service's call is counted here.
  void count_degraded() { degraded_.fetch_add(1, std::memory_order_relaxed); }
  // A slot when the service is under its limit (or has none); nullopt,
  // counted, when it is at the limit.
  std::optional<Slot> enter(std::string_view service, const Lever& lever);

  std::uint32_t in_flight(std::string_view service) const;
  LeverCounters counters() const;
  // What the last update() could not read: bad limits, keys set twice.
  std::vector<std::string> problems() const;

 private:
  std::shared_ptr<std::atomic<std::uint32_t>> counter_of(std::string_view service);

  mutable std::mutex mu_;
  std::map<std::string, Lever, std::less<>> levers_;
  std::vector<std::string> problems_;
  // Per service, created on its first limited call and kept: a Slot may
  // outlive a change of the lever.
  std::map<std::string, std::shared_ptr<std::atomic<std::uint32_t>>, std::less<>> in_flight_;
  std::atomic<std::uint64_t> degraded_{0};
  std::atomic<std::uint64_t> over_limit_{0};
};

// The lever keys one group sets for a service: each field only if its key is
// there (and readable).
struct LeverKeys {
  std::optional<bool> degraded;
  std::optional<std::uint32_t> max_in_flight;
};

// The lever keys of one group's values (service -> keys), with what could
// not be read appended to `problems`. Pure; CallLevers::update uses it.
std::map<std::string, LeverKeys, std::less<>> levers_of(const proto::ConfigValues& values,
                                                        std::vector<std::string>& problems);

}  // namespace cascade::agent
