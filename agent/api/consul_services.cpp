#include "cascade/agent/api/consul_services.hpp"

#include <spdlog/spdlog.h>

namespace cascade::agent::api {

ConsulServices::ConsulServices(RegistrationSink sink, AgentIdentity agent)
    : sink_(std::move(sink)), agent_(std::move(agent)) {}

std::optional<std::string> ConsulServices::put(ConsulService service, MonoTime now) {
  std::lock_guard lock(mu_);
  for (const auto& spec : service.checks)
    if (auto owner = checks_.owner_of(spec.id); owner && *owner != service.id)
      return "Invalid check: check ID '" + spec.id + "' belongs to service '" + *owner + "'";
  if (auto it = services_.find(service.id);
      it != services_.end() && it->second.name != service.name)
    erase(service.id);
  checks_.set(service.id, service.checks, now);
  const auto id = service.id;
  services_.insert_or_assign(id, std::move(service));
  publish(id);
  return std::nullopt;
}

bool ConsulServices::remove(const std::string& id) {
  std::lock_guard lock(mu_);
  if (!services_.contains(id)) return false;
  erase(id);
  return true;
}

bool ConsulServices::report(const std::string& check_id, CheckStatus status, std::string output,
                            MonoTime now) {
  std::lock_guard lock(mu_);
  const auto* check = checks_.report(check_id, status, std::move(output), now);
  if (check == nullptr) return false;
  publish(check->service_id);
  return true;
}

void ConsulServices::on_timer(MonoTime now) {
  std::lock_guard lock(mu_);
  const auto expiry = checks_.expire(now);
  for (const auto& id : expiry.changed)
    publish(id);
  for (const auto& id : expiry.to_deregister) {
    spdlog::info(
        "deregistering Consul service {}: a check stayed critical for longer than its "
        "DeregisterCriticalServiceAfter",
        id);
    erase(id);
  }
}

std::optional<MonoTime> ConsulServices::next_deadline() const {
  std::lock_guard lock(mu_);
  return checks_.next_deadline();
}

std::optional<ConsulServices::Entry> ConsulServices::find(const std::string& id) const {
  std::lock_guard lock(mu_);
  auto it = services_.find(id);
  if (it == services_.end()) return std::nullopt;
  return Entry{it->second, checks_.status_of(id)};
}

std::vector<ConsulServices::CheckEntry> ConsulServices::checks() const {
  std::lock_guard lock(mu_);
  std::vector<CheckEntry> list;
  for (const auto& [id, check] : checks_.all()) {
    const auto& service = services_.at(check.service_id);
    list.push_back({check, service.name, service.tags});
  }
  return list;
}

void ConsulServices::publish(const std::string& id) {
  auto it = services_.find(id);
  if (it == services_.end()) return;
  auto registration = registration_of(it->second, checks_.status_of(id), agent_);
  auto& held = published_[id];
  if (held == registration) return;
  held = registration;
  sink_.put(std::move(registration));
}

void ConsulServices::erase(const std::string& id) {
  auto it = services_.find(id);
  checks_.drop(id);
  sink_.remove({it->second.name, std::string(proto::kDefaultGroup)}, id);
  services_.erase(it);
  published_.erase(id);
}

}  // namespace cascade::agent::api
