#include "cascade/agent/api/ttl_checks.hpp"

#include <algorithm>
#include <set>

namespace cascade::agent::api {

namespace {

// Consul's names, by CheckStatus.
constexpr std::string_view kStatusNames[] = {"passing", "warning", "critical"};

}  // namespace

std::string_view to_string(CheckStatus status) {
  return kStatusNames[static_cast<std::size_t>(status)];
}

std::optional<CheckStatus> parse_check_status(std::string_view text) {
  const auto* found = std::find(std::begin(kStatusNames), std::end(kStatusNames), text);
  if (found == std::end(kStatusNames)) return std::nullopt;
  return static_cast<CheckStatus>(found - std::begin(kStatusNames));
}

void TtlChecks::set_status(TtlCheck& check, CheckStatus status, MonoTime now) {
  if (status != CheckStatus::kCritical)
    check.critical_since.reset();
  else if (!check.critical_since)
    check.critical_since = now;
  check.status = status;
}

void TtlChecks::set(const std::string& service_id, const std::vector<TtlCheckSpec>& specs,
                    MonoTime now) {
  std::set<std::string> kept;
  for (const auto& spec : specs) {
    kept.insert(spec.id);
    auto [it, fresh] = checks_.try_emplace(spec.id);
    TtlCheck& check = it->second;
    const bool restart = fresh || spec.initial || check.spec.ttl != spec.ttl;
    check.spec = spec;
    check.service_id = service_id;
    if (fresh || spec.initial) {
      set_status(check, spec.initial.value_or(CheckStatus::kCritical), now);
      check.output.clear();
    }
    if (restart) check.expires = now + spec.ttl;
  }
  std::erase_if(checks_, [&](const auto& entry) {
    return entry.second.service_id == service_id && !kept.contains(entry.first);
  });
}

void TtlChecks::drop(const std::string& service_id) {
  std::erase_if(checks_, [&](const auto& entry) { return entry.second.service_id == service_id; });
}

const TtlCheck* TtlChecks::report(const std::string& check_id, CheckStatus status,
                                  std::string output, MonoTime now) {
  auto it = checks_.find(check_id);
  if (it == checks_.end()) return nullptr;
  TtlCheck& check = it->second;
  set_status(check, status, now);
  check.output = std::move(output);
  check.expires = now + check.spec.ttl;
  return &check;
}

TtlChecks::Expiry TtlChecks::expire(MonoTime now) {
  std::set<std::string> changed;
  std::set<std::string> to_deregister;
  for (auto& [id, check] : checks_) {
    if (check.status != CheckStatus::kCritical && now >= check.expires) {
      set_status(check, CheckStatus::kCritical, now);
      check.output = "TTL expired";
      changed.insert(check.service_id);
    }
    if (check.critical_since && check.spec.deregister_after &&
        now >= *check.critical_since + *check.spec.deregister_after)
      to_deregister.insert(check.service_id);
  }
  return {{changed.begin(), changed.end()}, {to_deregister.begin(), to_deregister.end()}};
}

std::optional<MonoTime> TtlChecks::next_deadline() const {
  std::optional<MonoTime> next;
  auto consider = [&next](MonoTime t) { next = next ? std::min(*next, t) : t; };
  for (const auto& [id, check] : checks_) {
    // A critical check has nothing left to expire; only its reaping may be due.
    if (check.status != CheckStatus::kCritical) consider(check.expires);
    if (check.critical_since && check.spec.deregister_after)
      consider(*check.critical_since + *check.spec.deregister_after);
  }
  return next;
}

CheckStatus TtlChecks::status_of(const std::string& service_id) const {
  auto status = CheckStatus::kPassing;
  for (const auto& [id, check] : checks_)
    if (check.service_id == service_id) status = worst(status, check.status);
  return status;
}

const TtlCheck* TtlChecks::find(const std::string& check_id) const {
  auto it = checks_.find(check_id);
  return it == checks_.end() ? nullptr : &it->second;
}

std::optional<std::string> TtlChecks::owner_of(const std::string& check_id) const {
  const auto* check = find(check_id);
  if (check == nullptr) return std::nullopt;
  return check->service_id;
}

}  // namespace cascade::agent::api
