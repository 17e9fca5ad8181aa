#pragma once
// Consul's TTL checks, as a deterministic state machine: the application
// reports "passing", "warning" or "critical" for each check, and a check not
// reported within its TTL turns critical by itself. No clock, no thread, no
// lock: `now` comes in with every call (agent/api/consul_services.hpp drives
// it, with the time of a DeadlineTimer).
//
// As in Consul:
//   - a new check is critical until first reported, unless its definition
//     gives an initial Status;
//   - every report restarts the TTL, whatever the status it reports;
//   - a service whose check stayed critical for its DeregisterCriticalServiceAfter
//     is due to be deregistered.
// Unlike Consul, a service registered again keeps the state of each check it
// still defines under the same id (a client that re-registers on reconnect
// does not flap its instance to critical), unless the new definition gives a
// Status.

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cascade/common/clock.hpp"

namespace cascade::agent::api {

// Ordered from best to worst: a service is as healthy as its worst check.
enum class CheckStatus : std::uint8_t { kPassing = 0, kWarning = 1, kCritical = 2 };

std::string_view to_string(CheckStatus status);  // "passing", "warning", "critical"
std::optional<CheckStatus> parse_check_status(std::string_view text);
inline CheckStatus worst(CheckStatus a, CheckStatus b) {
  return a > b ? a : b;
}

// One TTL check as a registration defines it.
struct TtlCheckSpec {
  std::string id;  // unique among the agent's checks
  std::string name;
  std::string notes;
  Duration ttl{0};                             // > 0
  std::optional<CheckStatus> initial{};        // Check.Status; nullopt: critical (or kept)
  std::optional<Duration> deregister_after{};  // Check.DeregisterCriticalServiceAfter
  bool operator==(const TtlCheckSpec&) const = default;
};

struct TtlCheck {
  TtlCheckSpec spec;
  std::string service_id;
  CheckStatus status = CheckStatus::kCritical;
  std::string output;  // what the application said with its last report, or "TTL expired"
  MonoTime expires{};  // turns critical then unless reported before
  std::optional<MonoTime> critical_since{};
};

class TtlChecks {
 public:
  // The checks of `service_id` become `specs`: its checks not among them are
  // dropped; a check kept under the same id keeps its status and TTL unless
  // its spec has an initial status. The caller has made sure that no id is
  // another service's (owner_of()).
  void set(const std::string& service_id, const std::vector<TtlCheckSpec>& specs, MonoTime now);
  void drop(const std::string& service_id);

  // The application's report: status and output set, TTL restarted. The
  // check, or nullptr when there is no such check.
  const TtlCheck* report(const std::string& check_id, CheckStatus status, std::string output,
                         MonoTime now);

  struct Expiry {
    std::vector<std::string> changed;        // services whose status changed (sorted, unique)
    std::vector<std::string> to_deregister;  // services critical for too long (sorted, unique)
  };
  // TTLs that ran out at or before `now` turn their checks critical.
  Expiry expire(MonoTime now);
  // When expire() has something to do next (nullopt: never, as things stand).
  std::optional<MonoTime> next_deadline() const;

  // The worst status of a service's checks; passing when it has none.
  CheckStatus status_of(const std::string& service_id) const;
  const TtlCheck* find(const std::string& check_id) const;
  // The service a check id belongs to; nullopt when no check has it.
  std::optional<std::string> owner_of(const std::string& check_id) const;
  // Every check, by id.
  const std::map<std::string, TtlCheck>& all() const { return checks_; }

 private:
  static void set_status(TtlCheck& check, CheckStatus status, MonoTime now);
  std::map<std::string, TtlCheck> checks_;  // by check id
};

}  // namespace cascade::agent::api
