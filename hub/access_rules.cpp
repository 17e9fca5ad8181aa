#include "cascade/hub/access_rules.hpp"

#include <fmt/format.h>

#include "cascade/common/validate.hpp"

namespace cascade::hub {

namespace {

using access::Role;

Refusal forbidden(std::string message) {
  return {proto::ErrorCode::kForbidden, std::move(message)};
}

std::string_view on_behalf_of(const proto::Message& message) {
  return std::visit(
      [](const auto& m) -> std::string_view {
        if constexpr (requires { m.on_behalf_of; })
          return m.on_behalf_of;
        else
          return {};
      },
      message);
}

std::string role_refusal(const Caller& caller, std::string_view what) {
  return fmt::format("key {} (role {}) may not {}", caller.name, access::to_string(caller.role),
                     what);
}

bool is_one_of(Role role, std::initializer_list<Role> roles) {
  for (const auto r : roles)
    if (r == role) return true;
  return false;
}

std::optional<Refusal> check_registrations(const Caller& caller,
                                           const std::vector<proto::Registration>& regs) {
  for (const auto& reg : regs) {
    if (!caller.may_register(reg.service.name))
      return forbidden(fmt::format("key {} may not register service {} (register scope)",
                                   caller.name, reg.service.name));
    // A hub reports what its own registry holds; answers from other tiers
    // carry a tier and are never part of a beat.
    if (reg.instance.tier != 0)
      return forbidden(fmt::format("key {} reported instance {} of {} as held by tier {}",
                                   caller.name, reg.instance.id, reg.service.name,
                                   reg.instance.tier));
  }
  return std::nullopt;
}

std::optional<Refusal> check_uses(const Caller& caller,
                                  const std::vector<proto::ServiceUse>& uses) {
  for (const auto& use : uses)
    if (!caller.may_query(use.service.name))
      return forbidden(fmt::format("key {} may not use service {} (query scope)", caller.name,
                                   use.service.name));
  return std::nullopt;
}

std::optional<Refusal> check_upbeat(const Caller& caller, const proto::UpBeat& beat,
                                    std::uint32_t own_tier) {
  if (beat.sender_tier == 0 && caller.role != Role::kAgent)
    return forbidden(role_refusal(caller, "beat as an agent"));
  if (beat.sender_tier > 0 && caller.role != Role::kHub)
    return forbidden(role_refusal(caller, "beat as a hub of a lower tier"));
  if (beat.sender_tier >= own_tier)
    return forbidden(fmt::format("key {} claims tier {}, not below this hub's tier {}", caller.name,
                                 beat.sender_tier, own_tier));
  if (beat.registrations)
    if (auto refusal = check_registrations(caller, *beat.registrations)) return refusal;
  if (beat.delta)
    if (auto refusal = check_registrations(caller, beat.delta->upserts)) return refusal;
  // A hub's uses outside its scope go unanswered (HubCore::uses_in_scope):
  // they are its consumers', and refusing its beat would expire its tier.
  if (caller.role == access::Role::kHub) return std::nullopt;
  return check_uses(caller, beat.uses);
}

std::optional<Refusal> check_report(const Caller& caller, const proto::FailureReport& report) {
  if (!is_one_of(caller.role, {Role::kAgent, Role::kHub, Role::kOperator}))
    return forbidden(role_refusal(caller, "report failed calls"));
  // Only what a key may call can it report: a key cannot isolate providers
  // of services it has no business with.
  for (const auto& signal : report.signals)
    if (!caller.may_query(signal.service.name))
      return forbidden(fmt::format("key {} may not report on service {} (query scope)", caller.name,
                                   signal.service.name));
  return std::nullopt;
}

}  // namespace

std::variant<Caller, Refusal> caller_of(const access::Principal* key,
                                        const proto::Message& message) {
  if (key == nullptr) return Caller{};
  const auto vouched = on_behalf_of(message);
  if (vouched.empty()) return Caller{key, key->name, key->role};
  if (key->role != Role::kProxy)
    return forbidden(fmt::format("key {} (role {}) may not act on behalf of {}: only a proxy may",
                                 key->name, access::to_string(key->role), vouched));
  if (auto why = proto::check_name("on_behalf_of", vouched); !why.empty()) return forbidden(why);
  return Caller{key, vouched, Role::kAgent};
}

std::optional<Refusal> check_message(const Caller& caller, const proto::Message& message,
                                     std::uint32_t own_tier) {
  if (caller.open()) return std::nullopt;
  return std::visit(
      [&](const auto& m) -> std::optional<Refusal> {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, proto::UpBeat>) {
          return check_upbeat(caller, m, own_tier);
        } else if constexpr (std::is_same_v<T, proto::Deregister>) {
          if (!is_one_of(caller.role, {Role::kAgent, Role::kHub}))
            return forbidden(role_refusal(caller, "deregister a node"));
        } else if constexpr (std::is_same_v<T, proto::Query>) {
          if (!caller.may_query(m.service.name))
            return forbidden(fmt::format("key {} may not query service {} (query scope)",
                                         caller.name, m.service.name));
        } else if constexpr (std::is_same_v<T, proto::FailureReport>) {
          return check_report(caller, m);
        } else if constexpr (std::is_same_v<T, proto::AdminRequest>) {
          if (caller.role != Role::kOperator)
            return forbidden(role_refusal(caller, "run operator commands"));
        }
        // Status and service lists: any key (the list is cut to the query scope).
        return std::nullopt;
      },
      message);
}

}  // namespace cascade::hub
