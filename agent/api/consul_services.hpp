#pragma once
// The services registered at this agent through the Consul API, with their
// TTL checks. Keeps each one's cascade registration in line with the worst
// status of its checks (agent/api/consul_registration.hpp): critical makes
// the instance DOWN; warning keeps it UP at Weights.Warning; passing, UP at
// Weights.Passing. It registers again only when that registration changes,
// so an application reporting "passing" every few seconds costs the hub
// nothing.
//
// Thread-safe: HTTP threads (registrations, reports) and a DeadlineTimer
// (on_timer) call in. `now` comes with every call (tests pass a FakeClock's).
// The sink is called under the lock, so registrations reach the Client in the
// order they were decided.

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cascade/agent/api/consul_registration.hpp"
#include "cascade/agent/api/ttl_checks.hpp"

namespace cascade::agent::api {

// Where registrations go (the Client in the daemon, a recorder in tests).
struct RegistrationSink {
  std::function<void(proto::Registration)> put;
  std::function<void(const proto::ServiceKey&, const std::string& id)> remove;
};

class ConsulServices {
 public:
  ConsulServices(RegistrationSink sink, AgentIdentity agent);

  // Registers `service`, or replaces the one registered under its id (under
  // another name, that one is deregistered first). Its checks keep their
  // state where their ids stay (agent/api/ttl_checks.hpp). The reason, for a
  // 400, when one of its check ids belongs to another service.
  std::optional<std::string> put(ConsulService service, MonoTime now);
  // Deregisters a service and drops its checks; false when no service has this id.
  bool remove(const std::string& id);
  // The application's report on a check; false when no check has this id.
  bool report(const std::string& check_id, CheckStatus status, std::string output, MonoTime now);
  // TTLs that ran out turn their checks critical; services critical for
  // longer than their DeregisterCriticalServiceAfter are deregistered.
  void on_timer(MonoTime now);
  std::optional<MonoTime> next_deadline() const;

  struct Entry {
    ConsulService service;
    CheckStatus status = CheckStatus::kPassing;
  };
  std::optional<Entry> find(const std::string& id) const;
  struct CheckEntry {
    TtlCheck check;
    std::string service;  // the name of the check's service
    std::vector<std::string> tags;
  };
  std::vector<CheckEntry> checks() const;  // by check id
  const AgentIdentity& agent() const { return agent_; }

 private:
  // Registers the service as its checks now say, unless that is what the sink has (holds mu_).
  void publish(const std::string& id);
  void erase(const std::string& id);  // holds mu_

  RegistrationSink sink_;
  const AgentIdentity agent_;
  mutable std::mutex mu_;
  TtlChecks checks_;
  std::map<std::string, ConsulService> services_;         // by id
  std::map<std::string, proto::Registration> published_;  // by id: what the sink has
};

}  // namespace cascade::agent::api
